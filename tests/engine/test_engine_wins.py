"""Won games and their scores: Yukon 625 without take-backs, Forty Thieves 1040 + 5 per
waste card played to a column, minus the take-back penalties.

The wins are found by a small search over ``legal_actions()`` (tests.engine.engine_helpers.find_win)
and then replayed from the deal; nothing about them is written down in advance.
"""

from __future__ import annotations

import pytest

from engine import DECK, DRAW, UNDO, Game, IllegalActionError, Move, parse_action
from tests.engine.engine_helpers import card_counts, find_win

YUKON_WINS = ["YU1-C-AAAAAAB", "YU1-R-AAAAAAD"]
FORTY_WIN = "FT1-N-AAAAAA3"


def winning_line(code: str) -> tuple:
    line = find_win(code)
    assert line is not None, f"the test search found no win for {code}; try another deal"
    return line


def replay(code: str, actions) -> Game:
    game = Game.from_code(code)
    decks = game.rules.decks
    for action in actions:
        assert not game.is_won
        assert game.push(action) == action
        counts = card_counts(game.position)
        assert all(counts[card] == decks for card in DECK)
    return game


def take_back_and_put_up_again(game: Game) -> tuple[Move, Move]:
    """A take-back the position allows, followed by the same card back up."""
    back = next(a for a in game.legal_actions() if isinstance(a, Move) and a.source == "F")
    game.push(back)
    up = game.push(parse_action(f"T{back.target_index}>F"))
    assert up.card is back.card
    return back, up


@pytest.mark.parametrize("code", YUKON_WINS)
def test_a_yukon_win_without_take_backs_scores_625(code):
    line = winning_line(code)
    face_down = sum(Game.from_code(code).position.down)
    game = replay(code, line)
    assert game.is_won
    assert game.position.foundation_cards == 52
    assert all(len(f) == 13 for f in game.position.foundations)
    assert not any(game.position.columns)
    assert game.position.takebacks == 0
    assert face_down == 21
    assert game.position.score == 52 * 10 + face_down * 5 == 625
    assert game.position.moves == len(line) == game.actions


def test_a_yukon_take_back_put_up_again_adds_another_10():
    code = YUKON_WINS[0]
    line = winning_line(code)
    game = replay(code, line[:-1])
    before = game.position.score
    back, up = take_back_and_put_up_again(game)
    assert back.card.rank == 13  # only a king goes onto an empty column
    assert game.position.score == before + 10
    game.push(line[-1])
    assert game.is_won
    assert game.position.takebacks == 1
    assert game.position.score == 625 + 10


def test_forty_thieves_win_scores_1040_plus_5_per_waste_card_played_to_a_column():
    line = winning_line(FORTY_WIN)
    waste_to_column = sum(1 for a in line if isinstance(a, Move) and a.source == "W" and a.target == "T")
    game = replay(FORTY_WIN, line)
    assert game.is_won
    assert game.position.foundation_cards == 104
    assert game.position.stock == [] and game.position.waste == []
    assert game.position.takebacks == 0
    assert waste_to_column > 0
    assert game.position.score == 1040 + 5 * waste_to_column
    assert game.position.moves == len(line)
    assert sum(1 for a in line if a is DRAW) == 64


def test_forty_thieves_take_back_costs_15_and_the_card_scores_10_again():
    line = winning_line(FORTY_WIN)
    waste_to_column = sum(1 for a in line if isinstance(a, Move) and a.source == "W" and a.target == "T")
    game = replay(FORTY_WIN, line[:-1])
    before = game.position.score
    back, _ = take_back_and_put_up_again(game)
    assert game.position.score == before - 15 + 10
    game.push(line[-1])
    assert game.is_won
    assert game.position.takebacks == 1
    assert game.position.score == 1040 + 5 * waste_to_column - 15 * 1 + 10 * 1


@pytest.mark.parametrize("code", [YUKON_WINS[0], FORTY_WIN])
def test_a_won_game_is_over(code):
    game = replay(code, winning_line(code))
    assert game.legal_actions() == []
    position = str(game.position)
    for action in (parse_action("T1>T2"), parse_action("F1>T1"), DRAW, UNDO):
        with pytest.raises(IllegalActionError) as exc:
            game.push(action)
        assert exc.value.rule == "game.over"
    assert str(game.position) == position


def test_a_won_position_read_back_is_over_too():
    game = replay(YUKON_WINS[0], winning_line(YUKON_WINS[0]))
    again = Game.from_position(str(game.position))
    assert again.is_won
    with pytest.raises(IllegalActionError) as exc:
        again.push(parse_action("F1>T1"))
    assert exc.value.rule == "game.over"
