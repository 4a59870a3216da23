"""No board rewards a loop: a take-back loop (a card to the foundation, back, up again) or an
undo pair inserted into a game never improves the record's place on any board (deal, variant,
their no-take-back kinds, challenge, standings), although in Yukon each loop adds 10 to the
app's score (issue 42, item 4)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from engine import Game
from tests.conftest import empty_tables
from tests.engine.engine_helpers import find_win
from tests.play import play_greedy
from verifier import replay

API = "/api/v1"


def with_loops(code: str, line: list[str], loops: int) -> list[str]:
    """``line`` with up to ``loops`` take-back loops: after a card goes to a foundation (the win's
    last card excepted), it is taken back to a column and put up again."""
    game, out, added = Game.from_code(code), [], 0
    for text in line:
        out.append(str(game.push_text(text)))
        if added == loops or game.is_won or ">F" not in text:
            continue
        back = next((action for action in game.legal_actions() if str(action).startswith("F")), None)
        if back is None:
            continue
        card = str(back).split(":")[1].split(">")[0]
        game.push(back)
        up = next(action for action in game.legal_actions() if f":{card}>F" in str(action))
        game.push(up)
        out += [str(back), str(up)]
        added += 1
    assert added == loops, f"only {added} loops fit"
    return out


def with_undos(code: str, line: list[str], every: int) -> list[str]:
    """``line`` with an undo pair (the first legal action, then ``U``) after every ``every``-th action."""
    game, out = Game.from_code(code), []
    for index, text in enumerate(line):
        out.append(str(game.push_text(text)))
        if index % every == every - 1 and not game.is_won:
            action = game.legal_actions()[0]
            game.push(action)
            game.undo()
            out += [str(action), "U"]
    return out


def places(app, client, records, code: str, log: list[str], rival: dict) -> tuple[dict, dict[str, float]]:
    """On an empty service: a rival's record (stored as imported), then ``cheat``'s game of ``log``
    submitted, then a challenge whose window holds both. The cheat's record and its rank on every
    board of the deal's kinds (``inf``: not on it)."""
    from api.boards import kinds, upkeep
    from api.boards import reads as boards
    from api.platform.models import Challenge

    empty_tables(app)
    records.create(player="rival", game_code=code, received_at=datetime.now(UTC) - timedelta(minutes=1), **rival)
    response = client.post(f"{API}/records", json={"code": code, "player": "cheat", "moves": " ".join(log)})
    assert response.status_code == 201, response.get_data(as_text=True)
    record = response.get_json()
    assert record["ranked"] is True, record["flags"]
    now = datetime.now(UTC)
    variant = record["variant"]
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = Challenge(variant=variant, kind="daily", starts_at=now - timedelta(hours=1),
                              ends_at=now + timedelta(hours=1), code=code, candidate=0, par=1, par_line="",
                              prepared_at=now, attempts_required=False)
        session.add(challenge)
        session.flush()
        upkeep.fill_challenge(session.connection(), challenge.id)
        session.commit()
        scopes = {"deal": code, "deal-nt": code, "variant": variant, "variant-nt": variant,
                  "challenge": challenge.id, "standings": variant}
        assert set(scopes) == set(kinds.KINDS)  # every kind of board
        connection = session.connection()
        ranks = {}
        for kind, scope in scopes.items():
            found = boards.standing(connection, boards.board(kind, scope), "cheat")
            ranks[kind] = math.inf if found is None else found["rank"]
    return record, ranks


@pytest.mark.parametrize(("code", "won"), [("YU1-C-AAAAAAB", True), ("YU1-R-AAAAAAD", True),
                                           ("FT1-N-AAAAAAB", False)])
def test_take_back_loops_and_undo_pairs_never_improve_a_place_on_any_board(app, client, records, code, won):
    line = [str(action) for action in find_win(code)] if won else play_greedy(code, 80)
    plain = replay(code, " ".join(line))
    assert plain.won is won and plain.takebacks == 0
    # a rival one move behind the plain game: the plain game ranks first on every board
    rival = {"won": won, "score": plain.score, "moves": plain.moves + 1, "takebacks": 0}
    honest, before = places(app, client, records, code, line, rival)
    assert before == {"deal": 1, "deal-nt": 1, "variant": 1, "variant-nt": 1, "challenge": 1, "standings": 1}
    loops = 30 if won else 2
    looped_log = with_loops(code, line, loops)
    variants = {"loops": looped_log, "undos": with_undos(code, line, 7),
                "both": with_undos(code, looped_log, 11)}
    for name, log in variants.items():
        record, after = places(app, client, records, code, log, rival)
        assert all(after[kind] >= before[kind] for kind in before), (name, before, after)
        if name != "undos":
            assert after["deal"] == after["variant"] == after["challenge"] == 2, (name, after)  # below the rival
            assert after["deal-nt"] == after["variant-nt"] == math.inf  # it took cards back
    looped = replay(code, " ".join(looped_log))
    if code.startswith("YU"):  # the app's score rewards the loops: ranked by it, the game would lead
        assert (honest["score"], looped.score) == (625, 625 + 10 * loops) and looped.takebacks == loops


def test_a_board_entry_shows_the_earned_points_beside_the_apps_score(app, client, records):
    code = "YU1-C-AAAAAAB"
    line = [str(action) for action in find_win(code)]
    looped = with_loops(code, line, 30)
    records.create(player="rival", won=True, score=625, moves=len(line) + 1)
    assert client.post(f"{API}/records", json={"code": code, "player": "cheat", "moves": " ".join(looped)}
                       ).status_code == 201
    entries = client.get(f"{API}/leaderboard?variant=yukon-classic&code={code}").get_json()["entries"]
    shown = [(e["rank"], e["player"], e["won"], e["earned"], e["score"], e["takebacks"]) for e in entries]
    assert shown == [(1, "rival", True, 625, 625, 0), (2, "cheat", True, 625, 925, 30)]


def held(code: str, log: list[str]) -> int:
    """What a game's final position holds, counted apart from ``verifier.earned``: 10 a foundation card,
    5 a face-down card turned up, 5 a waste card played to a column by an action still in effect."""
    game, waste_plays = Game.from_code(code), []
    faces_down = sum(game.position.down)
    for text in log:
        if text == "U":
            game.undo()
            waste_plays.pop()
        else:
            game.push_text(text)
            waste_plays.append(1 if text.startswith("W") and ">T" in text else 0)
    cards = sum(len(pile) for pile in game.position.foundations)
    return 10 * cards + 5 * (faces_down - sum(game.position.down)) + 5 * sum(waste_plays)


def random_game(code: str, rng, length: int, back_share: float, undo_share: float) -> list[str]:
    """A legal log of up to ``length`` actions, taking cards back and undoing often."""
    game, log = Game.from_code(code), []
    for _ in range(length):
        options = [str(action) for action in game.legal_actions()]
        if not options or game.is_won:
            break
        if game.can_undo and rng.random() < undo_share:
            game.undo()
            log.append("U")
            continue
        backs = [text for text in options if text.startswith("F")]
        ups = [text for text in options if ">F" in text]
        log.append(str(game.push_text(rng.choice((backs if rng.random() < back_share else ups) or options))))
    return log


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-R-AAAAAAC", "FT1-N-AAAAAAB", "FT1-N-AAAAAAC"])
def test_earned_points_are_what_the_final_position_holds_whatever_the_path(code):
    """Random games full of take-backs and undos: the earned points are what the final position
    holds, and a loop inserted changes nothing."""
    import random

    from verifier.earned import earned

    rng = random.Random(code)
    for _ in range(8):
        log = random_game(code, rng, rng.randrange(20, 250), 0.3, 0.08)
        verdict = replay(code, " ".join(log))
        assert verdict.verified
        expected = held(code, log)
        actions = verdict.canonical_text.split()
        assert earned(code, actions, verdict.score, verdict.takebacks) == expected
        effective = [text for text in actions if text != "U"]
        if verdict.undos == 0 and not verdict.won and any(">F" in text for text in effective):
            looped = with_loops(code, effective, 1)
            again = replay(code, " ".join(looped))
            assert earned(code, looped, again.score, again.takebacks) == expected


def test_where_forty_thieves_floor_bit_the_earned_points_come_from_a_replay():
    """A take-back at a score under 15 costs less than 15 (the score stops at 0), so there a loop
    raises the app's score by up to 10, and the counters alone overestimate what the game earned;
    the earned points replay the game and are what it holds."""
    import random

    from verifier.earned import earned, estimate

    code = "FT1-N-AAAAAAB"
    log = random_game(code, random.Random(2), 60, 0.5, 0.0)  # (a game the floor bites in, found by search)
    verdict = replay(code, " ".join(log))
    points = earned(code, verdict.canonical_text.split(), verdict.score, verdict.takebacks)
    assert points == held(code, log) != estimate(code, verdict.score, verdict.takebacks)
