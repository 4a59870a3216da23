"""The position's text form (engine/position.py): round trips and the errors of bad texts."""

from __future__ import annotations

import pytest

from engine import Game, InvalidPositionError, Position, parse_action
from tests.engine.engine_helpers import build_position

YUKON_DEAL = (
    "YU1-C 7H/9s4H8D8H5CJH/6h9cJS5HKH3S2H/jd5d7d4D2SAH6CKS/kdtdtcjcTH8CQS4C6S/7sac5sadkc6DQCQDQH9H/"
    "3h3cas4s2d8sTS3D2C9D7C ---- - - 0 0 0"
)


def test_the_deal_in_text_form():
    # the spec's vector, written with face-down cards in lower case
    assert str(Game.from_code("YU1-C-AAAAAAB").position) == YUKON_DEAL
    forty = str(Game.from_code("FT1-N-AAAAAAB").position).split(" ")
    assert forty[0] == "FT1-N"
    assert forty[1].split("/")[0] == "6D7DJS8S"
    assert forty[2] == "--------"
    assert forty[3].startswith("6DKD3DKS")  # stock, first drawn first
    assert forty[4:] == ["-", "0", "0", "0"]


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-R-7777777", "FT1-N-AAAAAAB", "FT1-N-QWERTY2"])
def test_text_round_trip(code):
    pos = Game.from_code(code).position
    again = Position.from_text(str(pos))
    assert str(again) == str(pos)
    assert again == pos
    assert again.columns == pos.columns and again.down == pos.down and again.stock == pos.stock


def test_round_trip_of_a_played_position():
    game = Game.from_code("FT1-N-AAAAAAB")
    for text in ("S", "T7>F", "S", "T10>T9"):
        game.push(parse_action(text))
    text = str(game.position)
    assert text.split(" ")[2] == "A-------"
    assert text.split(" ")[4] == "6DKD"
    assert text.endswith(" 10 4 0")
    assert str(Position.from_text(text)) == text


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "8 fields"),
        ("YU1-C 7H ---- - - 0 0", "8 fields"),
        (YUKON_DEAL.replace("YU1-C", "YU1-X"), "unknown rules"),
        (YUKON_DEAL.replace("YU1-C", "FT1-N"), "10 columns"),
        (YUKON_DEAL.replace("7H/9s4H", "7H/9S4h"), "below"),
        (YUKON_DEAL.replace("7H/9s4H", "7h/9s4H"), "face-down"),
        (YUKON_DEAL.replace("9s4H8D", "9s4H8d"), "below"),
        (YUKON_DEAL.replace("----", "---"), "4 foundations"),
        (YUKON_DEAL.replace("----", "X---"), "not a rank"),
        (YUKON_DEAL.replace("----", "A---"), "AS appears 2 times"),
        (YUKON_DEAL.replace("7H/", "7H7H/"), "7H appears 2 times"),
        (YUKON_DEAL.replace("7H/", "/"), "column 1: write '-' for an empty pile"),
        (YUKON_DEAL.replace("7H/", "-/"), "7H appears 0 times"),
        (YUKON_DEAL.replace("7H/", "7/"), "two-character"),
        (YUKON_DEAL.replace("7H/", "7X/"), "column 1"),
        (YUKON_DEAL.replace(" - - ", " 2C - "), "no stock"),
        (YUKON_DEAL.replace(" 0 0 0", " -5 0 0"), "score"),
        (YUKON_DEAL.replace(" 0 0 0", " 0 x 0"), "moves"),
        (YUKON_DEAL.replace(" 0 0 0", " 0 0 ٣"), "takebacks"),
    ],
)
def test_bad_position_texts(text, words):
    with pytest.raises(InvalidPositionError) as exc:
        Position.from_text(text)
    assert words in str(exc.value)
    assert isinstance(exc.value, ValueError)


def test_forty_thieves_has_no_face_down_cards():
    text = build_position("FT1-N", ["5S 4S", "", "", "", "", "", "", "", "", ""])
    with pytest.raises(InvalidPositionError, match="no face-down cards"):
        Position.from_text(text.replace("5S4S", "5s4S", 1))


def test_stock_and_waste_are_upper_case():
    text = build_position("FT1-N", ["", "", "", "", "", "", "", "", "", None], stock="6D KD")
    with pytest.raises(InvalidPositionError, match="upper case"):
        Position.from_text(text.replace(" 6DKD ", " 6dKD "))


def test_a_position_is_text():
    with pytest.raises(InvalidPositionError):
        Position.from_text(None)  # type: ignore[arg-type]


def test_json_view_hides_what_the_player_cannot_see():
    pos = Game.from_code("YU1-C-AAAAAAB").position
    hidden = pos.to_json(reveal=False)
    assert hidden["tableau"][1][0] == {"card": None, "face_up": False}
    assert hidden["tableau"][1][1] == {"card": "4H", "face_up": True}
    shown = pos.to_json(reveal=True)
    assert shown["tableau"][1][0] == {"card": "9S", "face_up": False}
    forty = Game.from_code("FT1-N-AAAAAAB").position
    assert forty.to_json(reveal=False)["stock"] is None
    assert forty.to_json(reveal=False)["stock_size"] == 64
    assert forty.to_json(reveal=True)["stock"][0] == "6D"
