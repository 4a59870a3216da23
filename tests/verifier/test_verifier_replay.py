"""``verifier.replay``: what a replay recomputes, where it stops, and how claims are compared."""

from __future__ import annotations

import json

import pytest

import engine
from engine import Game, GameCode, InvalidActionError, InvalidCodeError, format_log, parse_action
from tests.engine.engine_helpers import find_win
from verifier import Verdict, replay

CODE = "YU1-C-AAAAAAB"
# 6S onto 7H; TS.. onto JH turning 8S up (+5); 6D.. onto 7C turning KC up (+5); undo; QD.. onto KS
LOG = "T5>T1 T7:TS>T2 T6:6D>T2 U t6:qd>t4"
CANONICAL = ["T5:6S>T1", "T7:TS>T2", "T6:6D>T2", "U", "T6:QD>T4"]
JSON_LOG = [
    {"from": "T5", "to": "T1"},
    "T7:TS>T2",
    {"from": "T6", "card": "6D", "to": "T2"},
    {"action": "undo"},
    {"from": "t6", "card": "qd", "to": "t4"},
]

VERDICT_KEYS = {
    "code",
    "game",
    "rules",
    "variant",
    "legal",
    "verified",
    "won",
    "score",
    "moves",
    "actions",
    "undos",
    "takebacks",
    "foundation_cards",
    "error",
    "claims",
    "claims_match",
    "canonical",
    "position",
    "engine_version",
    "rules_version",
}
ERROR_KEYS = {"index", "action", "rule", "message", "kind", "position"}


def position_after(code: str, actions: list[str]) -> str:
    game = Game.from_code(code)
    for text in actions:
        game.push(parse_action(text))
    return str(game.position)


def test_a_legal_log_and_what_it_recomputes():
    verdict = replay(CODE, LOG)
    assert isinstance(verdict, Verdict)
    assert verdict.legal and verdict.verified
    assert verdict.error is None
    assert not verdict.won
    assert verdict.score == 5  # two cards turned up, one of them undone
    assert verdict.moves == 4  # the undone move stays counted; the undo itself does not count
    assert verdict.actions == 5
    assert verdict.undos == 1
    assert verdict.takebacks == 0
    assert verdict.foundation_cards == 0
    assert verdict.canonical == CANONICAL
    assert verdict.canonical_text == " ".join(CANONICAL)
    assert verdict.position == position_after(CODE, CANONICAL)
    assert str(verdict.code) == CODE


def test_the_verdict_json_shape():
    data = replay(CODE, LOG).to_json()
    assert set(data) == VERDICT_KEYS
    assert data["code"] == CODE
    assert (data["game"], data["rules"], data["variant"]) == ("yukon", "classic", "yukon-classic")
    assert (data["legal"], data["verified"], data["won"]) == (True, True, False)
    assert (
        data["score"],
        data["moves"],
        data["actions"],
        data["undos"],
        data["takebacks"],
        data["foundation_cards"],
    ) == (5, 4, 5, 1, 0, 0)
    assert data["canonical"] == " ".join(CANONICAL)
    assert data["error"] is None and data["claims"] is None and data["claims_match"] is None
    assert data["engine_version"] == engine.__version__
    assert data["rules_version"] == engine.RULES_VERSION == 1
    assert json.loads(json.dumps(data)) == data


def test_the_code_is_read_like_everywhere_else():
    assert replay(" yu1-c-aaaaaab ", LOG).to_json() == replay(GameCode.from_text(CODE), LOG).to_json()


def test_text_and_json_logs_give_identical_verdicts():
    assert replay(CODE, JSON_LOG).to_json() == replay(CODE, LOG).to_json()
    assert replay(CODE, json.loads(json.dumps(JSON_LOG))).to_json() == replay(CODE, LOG).to_json()
    assert replay(CODE, LOG.split()).to_json() == replay(CODE, LOG).to_json()


def test_an_empty_log_is_the_deal():
    verdict = replay("FT1-N-AAAAAAB", "  # nothing played\n")
    assert verdict.legal and verdict.canonical == []
    assert (verdict.score, verdict.moves, verdict.actions) == (0, 0, 0)
    assert verdict.position == str(Game.from_code("FT1-N-AAAAAAB").position)
    assert replay("FT1-N-AAAAAAB", []).to_json() == verdict.to_json()


# -- the first illegal action ----------------------------------------------------------


def test_a_rule_error_reports_index_action_rule_message_and_the_position_before():
    verdict = replay(CODE, "T5>T1 T2:JH>T1 T7:TS>T2")
    assert not verdict.legal and not verdict.verified
    error = verdict.error
    assert error.index == 1
    assert error.action == "T2:JH>T1"
    assert error.rule == "tableau.build"
    assert error.kind == "rule"
    assert "JH" in error.message and "6S" in error.message
    assert error.position == position_after(CODE, ["T5>T1"])
    # the replay stops there: counters are those after the legal prefix
    assert verdict.canonical == ["T5:6S>T1"]
    assert (verdict.moves, verdict.actions, verdict.score) == (1, 1, 0)
    assert verdict.position == error.position
    data = verdict.to_json()["error"]
    assert set(data) == ERROR_KEYS
    assert data == {
        "index": 1,
        "action": "T2:JH>T1",
        "rule": "tableau.build",
        "message": error.message,
        "kind": "rule",
        "position": error.position,
    }


def test_a_syntax_error_reports_what_was_expected_and_is_not_a_rule():
    verdict = replay(CODE, "T5>T1\n# then\nT2>W S")
    error = verdict.error
    assert (error.index, error.action, error.rule, error.kind) == (1, "T2>W", "syntax", "syntax")
    assert "target 'W'" in error.message
    assert error.position == position_after(CODE, ["T5>T1"])
    assert verdict.canonical == ["T5:6S>T1"]


@pytest.mark.parametrize(
    "log, index, rule",
    [
        ("U", 0, "undo.nothing-to-undo"),
        ("S", 0, "stock.none"),
        ("T5>T1 U U", 2, "undo.nothing-to-undo"),
        ("T4:KS>T1", 0, "tableau.build"),
        ("T2:9S>T1", 0, "card.face-down"),
        ("T1>F", 0, "foundation.build"),
        ("T8>T1", 0, "pile.no-such-column"),
        ("T6:QC>T4", 0, "tableau.alternate-colour"),
    ],
)
def test_rule_errors_in_yukon(log, index, rule):
    error = replay(CODE, log).error
    assert (error.index, error.rule, error.kind) == (index, rule, "rule")


def test_the_same_log_under_relaxed_rules():
    assert replay("YU1-R-AAAAAAB", "T6:QC>T4").legal


@pytest.mark.parametrize(
    "log, index, rule",
    [
        ("S " * 64 + "S", 64, "stock.empty"),
        ("T7>F T7>F", 1, "foundation.build"),  # 7C onto an empty foundation
        ("T10>T9 T10:AC>F4 T10:AH>F2 T10:AC>F T10>F", 4, "source.empty"),
        ("T10:AC>F4", 0, "move.single-card"),
        ("T1>T2", 0, "tableau.build"),  # 8S onto 8S
        ("T1>T3", 0, "tableau.same-suit"),  # 8S onto TD
        ("T7>F F1>F", 1, "foundation.to-foundation"),
        ("W>T1", 0, "source.empty"),
    ],
)
def test_rule_errors_in_forty_thieves(log, index, rule):
    error = replay("FT1-N-AAAAAAB", log).error
    assert (error.index, error.rule) == (index, rule)


def test_json_and_text_errors_agree_except_for_how_the_action_is_written():
    text = replay(CODE, "T5>T1 T2:JH>T1").to_json()
    objects = replay(CODE, [{"from": "T5", "to": "T1"}, {"from": "T2", "card": "JH", "to": "T1"}]).to_json()
    assert objects["error"]["action"] == '{"from":"T2","card":"JH","to":"T1"}'
    objects["error"]["action"] = text["error"]["action"]
    assert objects == text

    text = replay(CODE, "T5>T1 T2>W").to_json()
    objects = replay(CODE, [{"from": "T5", "to": "T1"}, {"from": "T2", "to": "W"}]).to_json()
    assert objects["error"]["index"] == 1 and objects["error"]["kind"] == "syntax"
    assert objects["error"]["position"] == text["error"]["position"]


@pytest.mark.parametrize("item", [{"from": "T2"}, 7, None, {"action": "redo"}])
def test_a_bad_json_item_is_a_syntax_error_at_its_index(item):
    verdict = replay(CODE, ["T5>T1", item])
    assert (verdict.error.index, verdict.error.kind, verdict.error.rule) == (1, "syntax", "syntax")
    assert verdict.error.action == json.dumps(item, separators=(",", ":"))


def test_bad_input_outside_the_log_raises():
    with pytest.raises(InvalidCodeError):
        replay("YU2-C-AAAAAAB", LOG)
    with pytest.raises(InvalidActionError):
        replay(CODE, {"moves": LOG})  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError):
        replay(CODE, 42)  # type: ignore[arg-type]


# -- claims -----------------------------------------------------------------------------


def test_claims_that_match():
    verdict = replay(CODE, LOG, {"score": 5, "moves": 4, "won": False})
    assert verdict.claims == {
        "score": {"claimed": 5, "actual": 5, "match": True},
        "moves": {"claimed": 4, "actual": 4, "match": True},
        "won": {"claimed": False, "actual": False, "match": True},
    }
    assert verdict.claims_match is True
    assert verdict.verified is True
    data = verdict.to_json()
    assert data["claims"] == verdict.claims and data["claims_match"] is True and data["verified"] is True


def test_claims_are_compared_field_by_field():
    verdict = replay(CODE, LOG, {"score": 10, "moves": 4})
    assert verdict.claims == {
        "score": {"claimed": 10, "actual": 5, "match": False},
        "moves": {"claimed": 4, "actual": 4, "match": True},
    }
    assert verdict.legal is True
    assert verdict.claims_match is False
    assert verdict.verified is False
    # the recomputed values are what counts
    assert verdict.score == 5
    assert verdict.to_json()["verified"] is False


def test_the_move_counter_claim_counts_undone_moves():
    # a client that subtracts undone moves claims 3; the counter is 4
    verdict = replay(CODE, LOG, {"moves": 3})
    assert verdict.claims["moves"] == {"claimed": 3, "actual": 4, "match": False}


@pytest.mark.parametrize(
    "claimed", [{"score": "5"}, {"score": 5.0}, {"score": True}, {"won": 0}, {"won": "false"}, {"moves": [4]}]
)
def test_a_claim_of_the_wrong_type_never_matches(claimed):
    verdict = replay(CODE, LOG, claimed)
    assert verdict.claims_match is False
    assert not verdict.verified


@pytest.mark.parametrize("claimed", [None, {}, {"score": None}])
def test_no_claims(claimed):
    verdict = replay(CODE, LOG, claimed)
    assert verdict.claims is None and verdict.claims_match is None
    assert verdict.verified is True


def test_an_unknown_claim_is_refused():
    with pytest.raises(ValueError, match="unknown claimed field 'points'"):
        replay(CODE, LOG, {"points": 5})


def test_an_illegal_log_is_never_verified_even_if_its_claims_match():
    verdict = replay(CODE, "T5>T1 T2:JH>T1", {"score": 0, "moves": 1, "won": False})
    assert verdict.claims_match is True
    assert verdict.legal is False and verdict.verified is False


def test_a_won_game_replayed():
    line = find_win(CODE)
    assert line is not None
    log = format_log(line)
    verdict = replay(CODE, log, {"won": True, "score": 625, "moves": len(line)})
    assert verdict.legal and verdict.won and verdict.verified
    assert verdict.score == 625
    assert verdict.foundation_cards == 52
    assert verdict.takebacks == 0
    assert verdict.canonical == log.split()
    # nothing may follow the win
    after = replay(CODE, log + " U")
    assert (after.error.index, after.error.rule) == (len(line), "game.over")
    assert after.won
    claimed_loss = replay(CODE, log, {"won": False})
    assert claimed_loss.claims["won"] == {"claimed": False, "actual": True, "match": False}
