"""Hypothesis against the parsers a client's input reaches: game codes, move logs
(text and JSON), positions and whole replays, with arbitrary text and JSON and
with near misses of valid input. The only errors allowed out are the engine's
documented ones (:class:`engine.EngineError` subclasses); whatever parses must
print back to itself.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine import EngineError, Game, GameCode, Position, format_log, parse_log
from engine.codes import MAX_DEAL
from verifier import replay

FUZZ = settings(max_examples=int(os.environ.get("FUZZ_PARSER_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow], database=None)

# -- strategies --------------------------------------------------------------

#: characters the notation and the codes are made of, so that near misses are common
NOTATION = "TSWFU>:0123456789AKQJtsw fu SHDC,;#\n\t-♠♥♦♣xX"
CODE_CHARS = "YUFT1-CRNyuftcrn0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abz8 \t-"
json_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(max_size=20) | st.text(NOTATION, max_size=12))
#: any JSON value (what ``json.loads`` can give)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=6)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=25)
pile = st.sampled_from(["T1", "T7", "T10", "t3", "W", "F", "F1", "F8", "S", "T0", "T99", "X", "", " T2 "])
card = st.sampled_from(["AS", "TD", "10♦", "kh", "1X", "", "QC ", "A"])
#: JSON action objects, right and wrong
json_actions = (st.fixed_dictionaries({"from": pile, "to": pile}, optional={"card": card | json_scalars})
                | st.fixed_dictionaries({"action": st.sampled_from(["draw", "undo", "redo", ""]) | json_scalars},
                                        optional={"to": pile})
                | json_values)
text_logs = st.text(NOTATION, max_size=120) | st.text(max_size=60)
json_logs = st.lists(st.text(NOTATION, max_size=10) | json_actions, max_size=25)
codes = (st.builds(lambda game, number: str(GameCode(*game, number)),
                   st.sampled_from([("YU", "C"), ("YU", "R"), ("FT", "N")]), st.integers(0, MAX_DEAL))
         | st.text(CODE_CHARS, max_size=16) | st.text(max_size=16))


@st.composite
def near_positions(draw: st.DrawFn) -> str:
    """A real position after a few legal actions, then mutated: characters replaced, deleted or duplicated."""
    code = draw(st.sampled_from(["YU1-C-AAAAAAB", "YU1-R-AAAAAB7", "FT1-N-AAAAAAB", "FT1-N-ABCDEFG"]))
    game = Game.from_code(code)
    for _ in range(draw(st.integers(0, 6))):
        options = game.legal_actions()
        if not options:
            break
        game.push(options[draw(st.integers(0, len(options) - 1))])
    text = list(str(game.position))
    for _ in range(draw(st.integers(0, 4))):
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        kind = draw(st.sampled_from(["replace", "delete", "duplicate"]))
        if kind == "replace":
            text[at] = draw(st.sampled_from(list("AKQJT98765432SHDCashdc-/ 0\n")))
        elif kind == "delete":
            del text[at]
        else:
            text.insert(at, text[at])
    return "".join(text)


def allowed(call, *args):
    """``call(*args)``, or ``None`` when it raised a documented engine error; anything else propagates."""
    try:
        return call(*args)
    except EngineError:
        return None


# -- game codes ----------------------------------------------------------------

@FUZZ
@given(codes | json_values)
@example("YU1-C-AAAAAA\u0661")  # an Arabic-Indic digit: not base32
@example("\u0130U1-C-AAAAAAB")  # 'İ' upper-cases to two characters
def test_game_codes_parse_or_raise_invalid_code(text):
    code = allowed(GameCode.from_text, text)
    if code is not None:
        assert GameCode.from_text(str(code)) == code
        assert str(code) == text.strip().upper()


# -- move logs -----------------------------------------------------------------

@FUZZ
@given(text_logs | json_logs | json_values)
@example("T7>F # comment\nS, U; W>T1")
@example([{"from": "T7", "to": "F", "card": None}, {"action": "draw"}])
def test_move_logs_parse_or_raise_invalid_action(log):
    actions = allowed(parse_log, log)
    if actions is not None:
        assert parse_log(format_log(actions)) == actions
        assert parse_log([a.to_json() for a in actions]) == actions


# -- positions -----------------------------------------------------------------

@FUZZ
@given(near_positions() | st.text(max_size=80) | st.text("YU1-CRFTN AKQJT98765432SHDCashdc-/0 ", max_size=120))
def test_positions_parse_or_raise_invalid_position(text):
    position = allowed(Position.from_text, text)
    if position is not None:
        assert Position.from_text(str(position)) == position
        assert str(Position.from_text(str(position))) == str(position)


# -- whole replays -------------------------------------------------------------

claims = st.none() | st.fixed_dictionaries({}, optional={"score": json_scalars, "moves": json_scalars,
                                                         "won": json_scalars})


@FUZZ
@given(codes, text_logs | json_logs | json_values, claims)
def test_replays_answer_a_verdict_or_raise_a_documented_error(code, log, claimed):
    verdict = allowed(replay, code, log, claimed)
    if verdict is None:
        return
    out = verdict.to_json()
    json.dumps(out, allow_nan=False)  # the API sends it as it is
    assert out["legal"] == (out["error"] is None)
    again = replay(code, verdict.canonical_text)  # the legal prefix, replayed, is legal and ends the same
    assert again.legal and (again.score, again.moves, again.position) == (verdict.score, verdict.moves,
                                                                           verdict.position)


@FUZZ
@given(st.sampled_from(["YU1-C-AAAAAAB", "YU1-R-AAAAAB7", "FT1-N-AAAAAAB"]), st.data())
def test_legal_games_with_junk_appended_stop_at_the_junk(code, data):
    game = Game.from_code(code)
    played = []
    for _ in range(data.draw(st.integers(0, 30))):
        options = game.legal_actions()
        if not options:
            break
        played.append(str(game.push(options[data.draw(st.integers(0, len(options) - 1))])))
    junk = data.draw(st.lists(st.text(NOTATION, min_size=1, max_size=8) | json_actions, max_size=5))
    verdict = replay(code, played + junk)
    assert verdict.canonical[:len(played)] == played
    if verdict.error is not None:
        assert verdict.error.index >= len(played)


def test_a_log_item_nested_thousands_deep_is_a_documented_error():
    item: list = []
    for _ in range(5000):
        item = [item]
    assert allowed(parse_log, [item]) is None
    verdict = replay("YU1-C-AAAAAAB", [item])
    assert verdict.error.rule == "syntax" and "nested too deeply" in verdict.error.action


@pytest.mark.parametrize("claimed", [["score"], "won", 5, {"time": 3}])
def test_bad_claims_are_a_documented_error(claimed):
    with pytest.raises(EngineError):
        replay("YU1-C-AAAAAAB", "", claimed)
