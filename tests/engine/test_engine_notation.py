"""The move-log notation of spec/move-notation.md: text and JSON, canonical form, syntax errors."""

from __future__ import annotations

import json

import pytest

from engine import (
    DRAW,
    UNDO,
    Card,
    Draw,
    Game,
    IllegalActionError,
    InvalidActionError,
    Move,
    Undo,
    action_from_json,
    format_log,
    parse_action,
    parse_log,
)
from tests.engine.engine_helpers import is_canonical


def move(source, source_index, target, target_index, card=None):
    return Move(source, source_index, target, target_index, None if card is None else Card.from_text(card))


# Every example of the spec's table, with what it means.
SPEC_EXAMPLES = [
    ("T2:TD>T5", move("T", 2, "T", 5, "TD")),
    ("T3>T5", move("T", 3, "T", 5)),
    ("T7>F", move("T", 7, "F", None)),
    ("T7:AS>F1", move("T", 7, "F", 1, "AS")),
    ("W>T4", move("W", 0, "T", 4)),
    ("W:5C>F", move("W", 0, "F", None, "5C")),
    ("F2>T4", move("F", 2, "T", 4)),
    ("S", DRAW),
    ("U", UNDO),
    # the canonical examples
    ("W:5C>T3", move("W", 0, "T", 3, "5C")),
    ("F2:7H>T4", move("F", 2, "T", 4, "7H")),
]


@pytest.mark.parametrize("text, expected", SPEC_EXAMPLES)
def test_spec_examples_in_text_form(text, expected):
    action = parse_action(text)
    assert action == expected
    assert str(action) == text  # each example is already written the way it prints
    assert parse_action(text.lower()) == expected


@pytest.mark.parametrize("text, expected", SPEC_EXAMPLES)
def test_spec_examples_in_json_form(text, expected):
    # the JSON object each action prints as, parsed back
    obj = expected.to_json()
    assert action_from_json(obj) == expected
    assert action_from_json(json.loads(json.dumps(obj))) == expected
    # a JSON log may also hold the text form
    assert action_from_json(text) == expected


def test_json_objects_of_the_spec():
    assert action_from_json({"from": "T2", "card": "TD", "to": "T5"}) == move("T", 2, "T", 5, "TD")
    assert action_from_json({"from": "T7", "to": "F"}) == move("T", 7, "F", None)
    assert action_from_json({"from": "W", "card": "5C", "to": "F"}) == move("W", 0, "F", None, "5C")
    assert action_from_json({"from": "t2", "card": "10♦", "to": "t5"}) == move("T", 2, "T", 5, "TD")
    assert action_from_json({"action": "draw"}) is DRAW
    assert action_from_json({"action": "undo"}) is UNDO
    assert move("T", 2, "T", 5, "TD").to_json() == {"from": "T2", "card": "TD", "to": "T5"}
    assert move("T", 7, "F", None).to_json() == {"from": "T7", "to": "F"}
    assert DRAW.to_json() == {"action": "draw"} and UNDO.to_json() == {"action": "undo"}


@pytest.mark.parametrize("text", ["S>W", "s>w", "S", "s", " S "])
def test_draw_spellings(text):
    assert parse_action(text) is DRAW
    assert isinstance(parse_action(text), Draw)
    assert str(parse_action(text)) == "S"


def test_draw_from_stock_to_waste_in_json():
    assert action_from_json({"from": "S", "to": "W"}) is DRAW
    assert action_from_json("S>W") is DRAW


@pytest.mark.parametrize("text", ["U", "u"])
def test_undo_spellings(text):
    assert isinstance(parse_action(text), Undo)


@pytest.mark.parametrize("text", ["t2:10♦>t5", "T2:td>T5", "t2:T♦>t5", "T2:10D>T5"])
def test_card_spellings_in_moves(text):
    assert str(parse_action(text)) == "T2:TD>T5"


def test_two_digit_pile_numbers():
    assert parse_action("T10:6H>T9") == move("T", 10, "T", 9, "6H")
    assert parse_action("W>F8") == move("W", 0, "F", 8)


@pytest.mark.parametrize(
    "log",
    [
        "T2:TD>T5 T3>T5 S U",
        "T2:TD>T5,T3>T5,S,U",
        "T2:TD>T5;T3>T5;S;U",
        "T2:TD>T5\nT3>T5\nS\nU\n",
        "T2:TD>T5\r\nT3>T5\r\nS\r\nU",
        "  T2:TD>T5 ,; T3>T5\t\n\n S ;U  ",
        "# a game\nT2:TD>T5 # the ten\nT3>T5  #, S, U\nS, U # end",
    ],
)
def test_separators_and_comments(log):
    assert [str(a) for a in parse_log(log)] == ["T2:TD>T5", "T3>T5", "S", "U"]


def test_comment_hides_the_rest_of_its_line_only():
    assert [str(a) for a in parse_log("S # U U U\nU")] == ["S", "U"]
    assert parse_log("# nothing at all\n") == []
    assert parse_log("") == []


def test_json_log_mixes_objects_and_text():
    log = [{"from": "T2", "card": "TD", "to": "T5"}, "T3>T5", {"action": "draw"}, "S>W", {"action": "undo"}, "u"]
    assert format_log(parse_log(log)) == "T2:TD>T5 T3>T5 S S U U"


def test_text_and_json_forms_parse_the_same():
    text = "T2:TD>T5 T7>F W:5C>T3 F2:7H>T4 S U"
    from_text = parse_log(text)
    from_json = parse_log([a.to_json() for a in from_text])
    assert from_json == from_text
    assert parse_log(json.loads(json.dumps([a.to_json() for a in from_text]))) == from_text


# -- canonical form --------------------------------------------------------------


def test_canonical_log_prints_back_to_itself():
    canonical = "T2:TD>T5 T7:AS>F1 W:5C>T3 F2:7H>T4 S U"
    actions = parse_log(canonical)
    assert format_log(actions) == canonical
    assert all(is_canonical(a) for a in actions if isinstance(a, Move))
    assert format_log(parse_log(format_log(actions))) == canonical


@pytest.mark.parametrize("text", ["T3>T5", "T7>F", "W>T4", "W:5C>F", "F2>T4", "T7:AS>F"])
def test_short_forms_are_not_canonical(text):
    assert not is_canonical(parse_action(text))


def test_the_game_returns_the_canonical_form():
    game = Game.from_code("YU1-C-AAAAAAB")
    assert str(game.push(parse_action("T5>T1"))) == "T5:6S>T1"
    assert str(game.push(parse_action("t7:10♠>t2"))) == "T7:TS>T2"
    ft = Game.from_code("FT1-N-AAAAAAB")
    assert str(ft.push(parse_action("T7>F"))) == "T7:AS>F1"
    assert str(ft.push(parse_action("S>W"))) == "S"
    assert str(ft.push(parse_action("T10>T9"))) == "T10:6H>T9"
    assert str(ft.push(parse_action("U"))) == "U"


# -- syntax errors ----------------------------------------------------------------

BAD_ACTIONS = [
    ("", "expected"),
    ("T1", "expected"),
    ("UU", "expected"),
    ("T1>W", "target 'W'"),
    ("T1>S", "target 'S'"),
    ("T1>", "target"),
    (">T1", "expected a column T1…, the waste W or a foundation F1…"),
    ("X1>T2", "expected a column T1…, the waste W or a foundation F1…"),
    ("W1>T2", "source 'W1'"),
    ("T0>T1", "column number '0'"),
    ("T1>F0", "foundation number '0'"),
    ("T01>T2", "column number '01'"),
    ("T1000>T2", "column number '1000'"),
    ("T1:>T2", "expected rank A 2-9 T J Q K (or 10) then suit S H D C"),
    ("T1:XX>T2", "'XX' is not a card"),
    ("T1:10>T2", "'10' is not a card"),
    ("F>T1", "needs its number"),
    ("S:6D>W", "write S"),
    ("S>T1", "write S"),
    ("T1>>T2", "one '>'"),
    ("T1>T2>T3", "one '>'"),
    ("T2:Aſ>T5", "is not a card"),
]


@pytest.mark.parametrize("text, expected", BAD_ACTIONS)
def test_syntax_errors_say_what_was_expected(text, expected):
    with pytest.raises(InvalidActionError) as exc:
        parse_action(text)
    error = exc.value
    assert not isinstance(error, IllegalActionError)
    assert error.text == text
    assert error.index is None
    assert expected in error.message


@pytest.mark.parametrize("text, _", BAD_ACTIONS)
def test_syntax_errors_in_a_log_carry_the_index_and_text(text, _):
    if not text:
        return  # an empty token cannot be written in a text log
    log = f"S T1:AS>F1\n# comment\nU, {text} S"
    with pytest.raises(InvalidActionError) as exc:
        parse_log(log)
    assert exc.value.index == 3
    assert exc.value.text == text
    assert text in exc.value.message


@pytest.mark.parametrize(
    "item, words",
    [
        ({"from": "T1"}, "needs 'to'"),
        ({"to": "T1"}, "needs 'from'"),
        ({"from": "T1", "to": "T2", "x": 1}, "unexpected key 'x'"),
        ({"action": "redo"}, '"draw" or "undo"'),
        ({"action": "draw", "to": "W"}, "unexpected key 'to'"),
        ({"from": 1, "to": "T2"}, "'from' must be a string"),
        ({"from": "T1", "to": None}, "'to' must be a string"),
        ({"from": "T1", "to": "T2", "card": 5}, "'card' must be a string"),
        ({"from": "T1 T2", "to": "T3"}, "not a pile"),
        ({"from": "T1", "to": "T2>T3"}, "not a pile"),
        ({"from": "T1", "to": "T2", "card": "XX"}, "'XX' is not a card"),
        ({"from": "T1", "to": "W"}, "target 'W'"),
        ({"from": "S", "card": "6D", "to": "W"}, "write S"),
        (3, "not a number"),
        (None, "not null"),
        (True, "not a boolean"),
        ([], "not an array"),
        ("T1>W", "target 'W'"),
    ],
)
def test_json_syntax_errors(item, words):
    with pytest.raises(InvalidActionError) as exc:
        action_from_json(item)
    assert words in exc.value.message
    with pytest.raises(InvalidActionError) as exc:
        parse_log(["S", {"action": "undo"}, item, "S"])
    assert exc.value.index == 2
    expected_text = item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
    assert exc.value.text == expected_text


@pytest.mark.parametrize("log", [{"moves": "S"}, b"S U", 42, None])
def test_a_log_is_text_or_an_array(log):
    with pytest.raises(InvalidActionError):
        parse_log(log)


def test_syntax_is_checked_before_any_rule():
    # stage one knows nothing of positions: T99 parses, and only the rules refuse it
    action = parse_action("T99>F8")
    assert action == move("T", 99, "F", 8)
    game = Game.from_code("YU1-C-AAAAAAB")
    with pytest.raises(IllegalActionError) as exc:
        game.push(action)
    assert not isinstance(exc.value, InvalidActionError)
    assert exc.value.rule == "pile.no-such-column"


def test_move_from_text_refuses_draw_and_undo():
    assert Move.from_text("t3>t5") == move("T", 3, "T", 5)
    for text in ("S", "U"):
        with pytest.raises(InvalidActionError):
            Move.from_text(text)
