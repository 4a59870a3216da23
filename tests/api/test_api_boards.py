"""Boards kept on write: keyset cursors, ``around=``, ranks and percentiles, upkeep when
a record is hidden and shown again, ``ETag``/304."""

from __future__ import annotations

import pytest

from api.platform.models import BoardEntry, PlayerStats

API = "/api/v1"


@pytest.fixture
def admin_key(make_key):
    return {"Authorization": f"Bearer {make_key('admin', admin=True)}"}


def board(client, query, status=200):
    response = client.get(f"{API}/leaderboard?{query}")
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json()


def walk(client, query, limit):
    """Every page of a board, following next_cursor: (rank, player) of each entry."""
    seen, cursor = [], None
    while True:
        body = board(client, f"{query}&limit={limit}" + (f"&cursor={cursor}" if cursor else ""))
        seen += [(e["rank"], e["player"]) for e in body["entries"]]
        if not body["has_more"]:
            assert body["next_cursor"] is None
            return seen
        cursor = body["next_cursor"]


def test_ties_share_a_rank_and_the_next_rank_skips_on_a_deal_board(client, records):
    for player, score in (("a", 50), ("b", 40), ("c", 40), ("d", 40), ("e", 10)):
        records.create(player=player, score=score, game_code="FT1-N-AAAAAAB")
    body = board(client, "variant=forty-thieves&code=FT1-N-AAAAAAB")
    assert [(e["rank"], e["player"]) for e in body["entries"]] == [(1, "a"), (2, "b"), (2, "c"), (2, "d"), (5, "e")]


@pytest.mark.parametrize("limit", [1, 2, 3, 4])
def test_cursors_neither_skip_nor_repeat_when_ties_straddle_a_page(client, records, limit):
    for player, score in (("a", 50), ("b", 40), ("c", 40), ("d", 40), ("e", 40), ("f", 10), ("g", 10)):
        records.create(player=player, score=score)
    assert walk(client, "variant=yukon-classic", limit) == [
        (1, "a"), (2, "b"), (2, "c"), (2, "d"), (2, "e"), (6, "f"), (6, "g")]


def test_a_cursor_not_handed_out_is_422(client, records):
    records.create(player="a")
    body = board(client, "variant=yukon-classic&cursor=WzEsMl0", status=422)
    assert [e["field"] for e in body["errors"]] == ["cursor"]
    body = board(client, "variant=yukon-classic&cursor=WzEsMl0&around=a", status=422)
    assert [e["field"] for e in body["errors"]] == ["around"]


#: every read that takes a cursor: /records and /challenges (time, id), the boards (key, time, id, rank,
#: position), the standings (key, time, player, rank, position)
CURSOR_READS = ("/records?", "/challenges?variant=yukon-classic&", "/leaderboard?variant=yukon-classic&",
                "/standings?variant=yukon-classic&")


def cursor_of(value) -> str:
    """A value packed the way cursors are: its JSON, base64url without padding."""
    import base64
    import json

    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def assert_bad_cursor(client, cursor):
    """Every read answers a cursor it cannot decode 422, problem+json naming the field and the reason."""
    for read in CURSOR_READS:
        response = client.get(f"{API}{read}cursor={cursor}")
        assert response.status_code == 422, (read, cursor, response.get_data(as_text=True))
        assert response.mimetype == "application/problem+json"
        [error] = response.get_json()["errors"]
        assert error["field"] == "cursor" and error["message"].startswith("not a cursor this server handed out")


@pytest.mark.parametrize("value", [
    ["0001-01-01T00:00:00+01:00", 1],  # before the first UTC time: OverflowError once
    ["9999-12-31T23:59:59-01:00", 1], ["2026-01-01T00:00:00", 1], ["2026-01-01T00:00:00+00:00", 2 ** 63],
    ["2026-01-01T00:00:00+00:00", True], [1, 2], "x", None, [], [[[[]]]]])
def test_a_forged_cursor_is_422_on_every_read(client, value):
    assert_bad_cursor(client, cursor_of(value))


def test_a_board_cursor_with_rank_or_position_out_of_place_or_bad_text_is_422(client, records):
    for player in ("a", "b"):
        records.create(player=player)
    at = "2026-01-01T00:00:00+00:00"
    for rank, position in [(0, 1), (2, 1), (-1, -1)]:
        response = client.get(f"{API}/leaderboard?variant=yukon-classic&cursor={cursor_of([0, at, 1, rank, position])}")
        assert response.status_code == 422, response.get_data(as_text=True)
    for player in ("\x00", "\ud800"):
        response = client.get(f"{API}/standings?variant=yukon-classic&cursor={cursor_of([0, at, player, 1, 1])}")
        assert response.status_code == 422, response.get_data(as_text=True)


def test_any_cursor_is_a_page_or_422_never_an_error(client, records):
    """Cursors of any bytes and of any JSON values of the shapes cursors have: each read answers 200 or 422."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    records.create(player="a")
    scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
               | st.datetimes(timezones=st.timezones()).map(lambda moment: moment.isoformat())
               | st.datetimes().map(lambda moment: moment.isoformat()))
    import base64
    from urllib.parse import urlencode

    cursors = (st.binary(max_size=60).map(lambda data: base64.urlsafe_b64encode(data).decode().rstrip("="))
               | st.lists(scalars, min_size=2, max_size=5).map(cursor_of) | st.text(max_size=40))

    @given(cursors)
    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    def check(cursor):
        for read in CURSOR_READS:
            response = client.get(f"{API}{read}{urlencode({'cursor': cursor})}")
            assert response.status_code in (200, 422), (read, cursor, response.get_data(as_text=True))

    check()


@pytest.fixture
def ten(records):
    """Players p0 … p9 on yukon-classic, p0 best; p4 and p5 tie."""
    scores = [100, 90, 80, 70, 60, 60, 40, 30, 20, 10]
    for n, score in enumerate(scores):
        records.create(player=f"p{n}", score=score)
    return scores


def around(client, player, limit=5):
    body = board(client, f"variant=yukon-classic&around={player}&limit={limit}")
    return [(e["rank"], e["player"]) for e in body["entries"]], body


def test_around_at_the_top_middle_and_bottom(client, ten):
    top, _ = around(client, "p0")
    assert top == [(1, "p0"), (2, "p1"), (3, "p2"), (4, "p3"), (5, "p4")]
    middle, body = around(client, "p5")
    assert middle == [(4, "p3"), (5, "p4"), (5, "p5"), (7, "p6"), (8, "p7")]
    assert body["has_more"] is True
    rest = board(client, f"variant=yukon-classic&limit=5&cursor={body['next_cursor']}")
    assert [(e["rank"], e["player"]) for e in rest["entries"]] == [(9, "p8"), (10, "p9")]
    bottom, body = around(client, "p9")
    assert bottom == [(5, "p5"), (7, "p6"), (8, "p7"), (9, "p8"), (10, "p9")]
    assert (body["has_more"], body["next_cursor"]) == (False, None)
    even, _ = around(client, "p1", limit=4)
    assert even == [(1, "p0"), (2, "p1"), (3, "p2"), (4, "p3")]
    assert board(client, "variant=yukon-classic&around=nobody", status=404)["status"] == 404


def test_rank_and_percentile(client, ten):
    assert around(client, "p0")[1]["player"] == {"player": "p0", "rank": 1, "entries": 10, "top_percent": 10,
                                                 "percentile": 90.0}
    body = board(client, "variant=yukon-classic&player=p5&limit=1")
    assert body["player"] == {"player": "p5", "rank": 5, "entries": 10, "top_percent": 50, "percentile": 40.0}
    assert board(client, "variant=yukon-classic&player=p9")["player"]["percentile"] == 0.0
    assert board(client, "variant=yukon-classic&player=nobody")["player"] is None


def test_hiding_a_record_rebuilds_the_players_entries_and_showing_it_restores_them(client, records, app,
                                                                                  admin_key):
    best = records.create(player="ann", score=90, won=True, moves=80)
    records.create(player="ann", score=40)
    records.create(player="bob", score=60)

    def summary():
        return [(e["player"], e["score"]) for e in board(client, "variant=yukon-classic")["entries"]]

    def stats():
        with app.extensions["api.platform.db"].sessions() as session:
            row = session.get(PlayerStats, ("ann", "yukon-classic"))
            return row.games, row.wins, row.best_score, row.won_moves

    assert summary() == [("ann", 90), ("bob", 60)] and stats() == (2, 1, 90, 80)
    hide = client.post(f"{API}/records/{best.id}/status", json={"status": "hidden", "reason": "cheat"},
                       headers=admin_key)
    assert hide.status_code == 200, hide.get_data(as_text=True)
    assert summary() == [("bob", 60), ("ann", 40)] and stats() == (1, 0, 40, 0)
    assert [(e["player"], e["score"]) for e in
            board(client, "variant=yukon-classic&code=YU1-C-AAAAAAB")["entries"]] == [("bob", 60), ("ann", 40)]
    client.post(f"{API}/records/{best.id}/status", json={"status": "visible", "reason": "cleared"}, headers=admin_key)
    assert summary() == [("ann", 90), ("bob", 60)] and stats() == (2, 1, 90, 80)
    with app.extensions["api.platform.db"].sessions() as session:
        assert session.query(BoardEntry).filter_by(player="ann").count() == 4  # deal, deal-nt, variant, variant-nt


def test_a_worse_record_does_not_replace_a_better_one(client, records):
    records.create(player="ann", score=90)
    records.create(player="ann", score=30)
    records.create(player="ann", score=90, moves=5)
    assert [(e["score"], e["moves"]) for e in board(client, "variant=yukon-classic")["entries"]] == [(90, 5)]


def test_boards_answer_with_an_etag_and_304_while_it_holds(client, records):
    records.create(player="ann", score=10)
    first = client.get(f"{API}/leaderboard?variant=yukon-classic")
    etag = first.headers["ETag"]
    again = client.get(f"{API}/leaderboard?variant=yukon-classic", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.get_data() == b""
    records.create(player="bob", score=20)
    changed = client.get(f"{API}/leaderboard?variant=yukon-classic", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag


def test_rebuilding_everything_gives_the_boards_kept_on_write(app, records):
    from sqlalchemy import select

    from api.boards import upkeep
    from api.platform.models import Standing

    for n in range(12):
        records.create(player=f"p{n % 4}", score=n * 7 % 50, won=n % 5 == 0, moves=n, takebacks=n % 2,
                       game_code=("YU1-C-AAAAAAB", "YU1-C-AAAAAAC", "FT1-N-AAAAAAB")[n % 3])

    def snapshot():
        with app.extensions["api.platform.db"].sessions() as session:
            return [sorted(tuple(row) for row in session.execute(select(*table.__table__.columns)).all())
                    for table in (BoardEntry, PlayerStats, Standing)]

    kept = snapshot()
    with app.extensions["api.platform.db"].engine.begin() as connection:
        upkeep.rebuild_all(connection)
    assert snapshot() == kept and kept[0] and kept[1]


# -- board kinds, declared as data -------------------------------------------------

def test_each_kind_packs_its_rank_chain_into_63_bits():
    """The record kinds' key is won (bit 62), 4095 − earned (12 bits), take-backs and moves (25 bits
    each), a value past its bits counted as the largest; the standings' is −points."""
    from api.boards.kinds import KINDS, RECORD_KINDS

    for won, earned, takebacks, moves in [(True, 625, 0, 88), (False, 0, 0, 0), (False, 0, 2 ** 25 - 1, 2 ** 25 - 1),
                                          (True, 1360, 3, 3)]:
        packed = (0 if won else 1) * 2 ** 62 + (2 ** 12 - 1 - earned) * 2 ** 50 + takebacks * 2 ** 25 + moves
        assert {kind.sort_key(won=won, earned=earned, takebacks=takebacks, moves=moves)
                for kind in RECORD_KINDS} == {packed}
    deal = KINDS["deal"]
    assert deal.sort_key(won=False, earned=0, takebacks=2 ** 31 - 1, moves=2 ** 31 - 1) == 2 ** 63 - 1
    assert deal.sort_key(won=True, earned=625, takebacks=0, moves=2 ** 30) == deal.sort_key(
        won=True, earned=625, takebacks=0, moves=2 ** 25 - 1)
    assert KINDS["standings"].sort_key(points=7) == -7
    # the order the key gives is the declared chain: won first, then more earned, fewer take-backs, fewer moves
    ordered = sorted([(False, 500, 0, 10), (True, 600, 0, 90), (True, 625, 1, 60), (True, 625, 0, 95),
                      (True, 625, 0, 80)],
                     key=lambda v: deal.sort_key(won=v[0], earned=v[1], takebacks=v[2], moves=v[3]))
    assert ordered == [(True, 625, 0, 80), (True, 625, 0, 95), (True, 625, 1, 60), (True, 600, 0, 90),
                       (False, 500, 0, 10)]
    assert [kind.name("x") for kind in RECORD_KINDS] == ["deal:x", "deal-nt:x", "variant:x", "variant-nt:x",
                                                         "challenge:x"]


def test_the_sql_key_of_a_kind_is_its_python_key(app, records):
    from sqlalchemy import select

    from api.boards.kinds import KINDS

    for won, score, takebacks, moves in [(True, 625, 0, 88), (False, 310, 0, 41), (False, 0, 0, 1),
                                         (True, 655, 3, 2 ** 31 - 1), (False, 5000, 2 ** 26, 2 ** 26)]:
        # (earned points past their 12 bits, as no game earns: the key counts them as the largest)
        records.create(player=f"p{score}", score=score, won=won, moves=moves, takebacks=takebacks,
                       **({"earned": score} if score > 4095 else {}))
    with app.extensions["api.platform.db"].sessions() as session:
        rows = session.execute(select(BoardEntry.won, BoardEntry.earned, BoardEntry.takebacks, BoardEntry.moves,
                                      BoardEntry.sort_key).where(BoardEntry.board.like("deal:%"))).all()
    assert len(rows) == 5
    assert all(key == KINDS["deal"].sort_key(won=won, earned=earned, takebacks=takebacks, moves=moves)
               for won, earned, takebacks, moves, key in rows)


def test_leaders_are_every_row_tied_first_and_nobody_on_an_empty_board(app, records):
    from api.boards import reads as boards

    for player, moves in [("ann", 40), ("bob", 40), ("cid", 41)]:
        records.create(player=player, score=625, won=True, moves=moves, takebacks=0, game_code="YU1-C-AAAAAAB")
    with app.extensions["api.platform.db"].engine.connect() as connection:
        assert [row.player for row in boards.leaders(connection, boards.board("deal", "YU1-C-AAAAAAB"))] == [
            "ann", "bob"]
        assert boards.leaders(connection, boards.board("deal", "YU1-C-AAAAAAC")) == []


def test_docs_list_every_board_kind_with_what_it_ranks():
    from pathlib import Path

    from api.boards.kinds import KINDS

    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    table = text[text.index("| kind | one row |"):].split("\n\n")[0].splitlines()[2:]
    assert len(table) == len(KINDS)
    for kind in KINDS.values():
        [row] = [line for line in table if line.startswith(f"| `{kind.id}` | ")]
        chain = ", ".join(f"{field} {'↓' if descending else '↑'}" for field, descending in kind.chain)
        assert row.startswith(f"| `{kind.id}` | {kind.ranks} |"), row
        assert row.endswith(f"| {chain} | {', '.join(kind.tie_breaks)} |"), row
