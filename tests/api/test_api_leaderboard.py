"""``GET /leaderboard``: best record per player, ranked with shared ranks."""

from __future__ import annotations

import pytest

from verifier import replay

API = "/api/v1"


def board(client, query):
    response = client.get(f"{API}/leaderboard?{query}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def summary(body):
    return [(e["rank"], e["player"], e["won"], e["score"], e["moves"]) for e in body["entries"]]


def test_the_order_is_won_then_earned_then_moves_then_earlier(client, records):
    records.create(player="lost-high", score=600, moves=50)
    records.create(player="won-low", won=True, score=625, moves=300)
    records.create(player="won-high-slow", won=True, score=700, moves=400)
    records.create(player="won-high-fast", won=True, score=700, moves=200)
    first = records.create(player="tie-first", score=100, moves=80)
    second = records.create(player="tie-second", score=100, moves=80)
    body = board(client, "variant=yukon-classic")
    assert summary(body) == [
        (1, "won-high-fast", True, 700, 200),
        (2, "won-high-slow", True, 700, 400),
        (3, "won-low", True, 625, 300),
        (4, "lost-high", False, 600, 50),
        (5, "tie-first", False, 100, 80),
        (5, "tie-second", False, 100, 80),
    ]
    assert [e["record_id"] for e in body["entries"][4:]] == [first.id, second.id]


def test_equal_records_share_a_rank_and_the_next_rank_skips(client, records):
    records.create(player="a", score=50, moves=10)
    records.create(player="b", score=40, moves=10)
    records.create(player="c", score=40, moves=10)
    records.create(player="d", score=40, moves=11)
    records.create(player="e", score=10, moves=1)
    assert [e["rank"] for e in board(client, "variant=yukon-classic")["entries"]] == [1, 2, 2, 4, 5]


def test_each_player_appears_once_with_their_best_record(client, records):
    records.create(player="ann", score=100, moves=90)
    best = records.create(player="ann", score=100, moves=60)
    records.create(player="ann", score=20, moves=5)
    records.create(player="bob", score=30, moves=5)
    body = board(client, "variant=yukon-classic")
    assert summary(body) == [(1, "ann", False, 100, 60), (2, "bob", False, 30, 5)]
    entry = body["entries"][0]
    assert entry["record_id"] == best.id and entry["code"] == "YU1-C-AAAAAAB"
    assert entry["received_at"] == best.received_at.isoformat()
    assert set(entry) >= {"rank", "player", "won", "score", "moves", "takebacks", "code", "record_id"}


def test_variants_are_ranked_apart(client, records):
    records.create(player="classic", game_code="YU1-C-AAAAAAB", score=10)
    records.create(player="relaxed", game_code="YU1-R-AAAAAAB", score=20)
    records.create(player="thief", game_code="FT1-N-AAAAAAC", score=30)
    assert [e["player"] for e in board(client, "variant=yukon-classic")["entries"]] == ["classic"]
    assert [e["player"] for e in board(client, "variant=yukon-relaxed")["entries"]] == ["relaxed"]
    assert [e["player"] for e in board(client, "variant=forty-thieves")["entries"]] == ["thief"]


def test_code_filter_ranks_one_deal(client, records):
    records.create(player="ann", game_code="FT1-N-AAAAAAB", score=10)
    records.create(player="ann", game_code="FT1-N-AAAAAAC", score=90)
    records.create(player="bob", game_code="FT1-N-AAAAAAB", score=20)
    body = board(client, "variant=forty-thieves&code=ft1-n-aaaaaab")
    assert summary(body) == [(1, "bob", False, 20, 10), (2, "ann", False, 10, 10)]
    assert body["filters"] == {"code": "FT1-N-AAAAAAB", "no_takebacks": False, "limit": 10}
    assert summary(board(client, "variant=forty-thieves")) == [(1, "ann", False, 90, 10), (2, "bob", False, 20, 10)]


def test_no_takebacks_ranks_only_records_without_take_backs(client, records):
    records.create(player="ann", won=True, score=645, takebacks=2)
    records.create(player="ann", won=True, score=625, moves=300, takebacks=0)
    records.create(player="bob", won=True, score=635, takebacks=1)
    # every Yukon win earns 625: fewer take-backs rank first, whatever the app's score
    assert summary(board(client, "variant=yukon-classic")) == [(1, "ann", True, 625, 300), (2, "bob", True, 635, 10)]
    body = board(client, "variant=yukon-classic&no_takebacks=true")
    assert summary(body) == [(1, "ann", True, 625, 300)]
    assert body["entries"][0]["takebacks"] == 0 and body["entries"][0]["earned"] == 625
    assert body["filters"] == {"code": None, "no_takebacks": True, "limit": 10}


def test_limit_cuts_the_list_after_ranking(client, records):
    for score in (10, 30, 30, 20):
        records.create(score=score)
    body = board(client, "variant=yukon-classic&limit=3")
    assert [(e["rank"], e["score"]) for e in body["entries"]] == [(1, 30), (1, 30), (3, 20)]
    assert body["variant"] == "yukon-classic" and body["filters"]["limit"] == 3


def test_an_empty_board(client):
    assert board(client, "variant=forty-thieves") == {
        "variant": "forty-thieves", "filters": {"code": None, "no_takebacks": False, "limit": 10}, "entries": [],
        "has_more": False, "next_cursor": None, "player": None}


def test_submitted_records_reach_the_board(client, legal_log):
    expected = []
    for player, length in (("ann", 3), ("bob", 5)):
        moves = legal_log("FT1-N-AAAAAAB", length)
        assert client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "player": player,
                                                   "moves": moves}).status_code == 201
        verdict = replay("FT1-N-AAAAAAB", moves)
        expected.append((player, verdict.score, verdict.moves))
    assert expected[1][1] > expected[0][1]  # bob's longer game has more on the foundations
    entries = board(client, "variant=forty-thieves")["entries"]
    assert [(e["player"], e["score"], e["moves"]) for e in entries] == expected[::-1]


@pytest.mark.parametrize("query, field", [
    ("", "variant"),
    ("variant=yukon", "variant"),
    ("variant=yukon-classic&limit=0", "limit"),
    ("variant=yukon-classic&limit=101", "limit"),
    ("variant=yukon-classic&limit=ten", "limit"),
    ("variant=yukon-classic&no_takebacks=perhaps", "no_takebacks"),
    ("variant=yukon-classic&page=2", "page"),
    ("variant=yukon-classic&code=FT1-N-AAAAAAB", "code"),
    ("variant=yukon-relaxed&code=YU1-C-AAAAAAB", "code"),
    ("variant=yukon-classic&code=YU1-C-AAAAAA1", "code"),
])
def test_bad_queries_are_422_naming_the_parameter(client, query, field):
    response = client.get(f"{API}/leaderboard?{query}")
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]


def test_a_code_of_another_variant_says_so(client):
    problem = client.get(f"{API}/leaderboard?variant=yukon-classic&code=YU1-R-AAAAAAB").get_json()
    assert problem["errors"][0]["message"] == "YU1-R-AAAAAAB is a yukon-relaxed deal, not yukon-classic"


def test_unranked_records_and_records_in_review_never_appear(client, records):
    """Leaderboards count ranked, visible records only (``api.boards.kinds.eligible``)."""
    records.create(player="fair", score=10, moves=10)
    records.create(player="copycat", score=900, moves=5, ranked=False,
                   flags=[{"flag": "copy", "reason": "copied", "review": False, "evidence": {"original": 1}}])
    records.create(player="bot", won=True, score=700, moves=100, ranked=False, status="review")
    records.create(player="assisted", won=True, score=600, moves=100, ranked=False)
    records.create(player="cleared-but-hidden", won=True, score=800, moves=100, status="hidden")
    # a player whose best record is unranked is shown with their best ranked one
    records.create(player="mixed", score=500, moves=10, ranked=False)
    records.create(player="mixed", score=20, moves=10)
    for query in ("variant=yukon-classic", "variant=yukon-classic&code=YU1-C-AAAAAAB",
                  "variant=yukon-classic&no_takebacks=true"):
        assert summary(board(client, query)) == [(1, "mixed", False, 20, 10), (2, "fair", False, 10, 10)]


def test_a_copy_submitted_through_the_api_stays_off_the_board(client, legal_log):
    log = legal_log("YU1-C-AAAAAAB", 10)
    first = client.post(f"{API}/records", json={"code": "YU1-C-AAAAAAB", "player": "ann", "moves": log})
    copy = client.post(f"{API}/records", json={"code": "YU1-C-AAAAAAB", "player": "copycat", "moves": log})
    assert first.get_json()["ranked"] is True and copy.get_json()["ranked"] is False
    assert [e["player"] for e in board(client, "variant=yukon-classic")["entries"]] == ["ann"]
