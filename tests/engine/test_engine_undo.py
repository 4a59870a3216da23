"""Undo and the move counter (spec/rules-and-scoring.md, "Undo and the move counter")."""

from __future__ import annotations

import pytest

from engine import UNDO, Game, IllegalActionError, parse_action
from engine.rules import UNDO_DEPTH
from tests.engine.engine_helpers import build_position, without_counters


def push(game: Game, *texts: str) -> None:
    for text in texts:
        game.push(parse_action(text))


def undo_refused(game: Game) -> str:
    before = str(game.position)
    with pytest.raises(IllegalActionError) as exc:
        game.push(UNDO)
    assert str(game.position) == before
    return exc.value.rule


def test_undo_restores_a_turned_up_card_and_the_score_but_not_the_move_counter():
    game = Game.from_code("YU1-C-AAAAAAB")
    start = str(game.position)
    push(game, "T7:TS>T2")  # turns 8S up: +5
    assert (game.position.score, game.position.down[6], game.position.moves) == (5, 5, 1)
    push(game, "U")
    assert without_counters(str(game.position)) == without_counters(start)
    assert game.position.down[6] == 6
    assert game.position.score == 0
    assert game.position.moves == 1  # the undone move stays counted
    assert (game.actions, game.undos) == (2, 1)


def test_undo_restores_a_group_move_card_by_card():
    game = Game.from_code("YU1-C-AAAAAAB")
    columns = [list(c) for c in game.position.columns]
    push(game, "T6:6D>T7", "T3:5H>T5")  # the first turns KC up
    assert game.position.down == [0, 1, 2, 3, 4, 4, 6] and game.position.score == 5
    push(game, "U", "U")
    assert game.position.columns == columns
    assert game.position.down == [0, 1, 2, 3, 4, 5, 6]
    assert game.position.moves == 2


def test_undo_restores_foundations_waste_and_stock():
    game = Game.from_code("FT1-N-AAAAAAB")
    start = str(game.position)
    push(game, "T7>F", "S", "S")
    assert game.position.score == 10
    push(game, "U", "U", "U")
    assert without_counters(str(game.position)) == without_counters(start)
    assert game.position.score == 0
    assert game.position.moves == 3
    assert game.actions == 6 and game.undos == 3


def test_undo_restores_take_backs_and_the_score_before_the_floor():
    game = Game.from_position(
        build_position("FT1-N", ["", "4S", "", "", "", "", "", "", "", None], foundations="3-------", score=10)
    )
    push(game, "F1>T2")
    assert (game.position.score, game.position.takebacks) == (0, 1)
    push(game, "U")
    assert (game.position.score, game.position.takebacks) == (10, 0)
    assert game.position.moves == 1
    assert [str(c) for c in game.position.foundations[0]] == ["AS", "2S", "3S"]


def test_yukon_take_back_undone():
    game = Game.from_position(
        build_position("YU1-C", ["KH", "", "", "", "", "", None], foundations="Q---", score=120, moves=80)
    )
    push(game, "F1>T1")
    assert game.position.takebacks == 1
    push(game, "U")
    assert (game.position.score, game.position.takebacks, game.position.moves) == (120, 0, 81)


def test_nothing_to_undo():
    game = Game.from_code("YU1-C-AAAAAAB")
    assert undo_refused(game) == "undo.nothing-to-undo"
    assert not game.can_undo
    push(game, "T5>T1", "U")
    assert undo_refused(game) == "undo.nothing-to-undo"
    with pytest.raises(IllegalActionError) as exc:
        game.undo()
    assert exc.value.rule == "undo.nothing-to-undo"


def test_a_position_game_has_nothing_to_undo():
    game = Game.from_position(str(Game.from_code("FT1-N-AAAAAAB").position))
    assert undo_refused(game) == "undo.nothing-to-undo"


def test_undo_undoes_the_last_action_still_in_effect():
    game = Game.from_code("FT1-N-AAAAAAB")
    push(game, "S", "S", "T7>F", "U", "U")  # undoes the move, then the second draw
    assert [str(c) for c in game.position.waste] == ["6D"]
    assert game.position.foundation_cards == 0
    assert game.position.moves == 3


def _king_back_and_forth(actions: int) -> Game:
    game = Game.from_position(build_position("YU1-C", ["KS", "", "", "", "", "", None]))
    for i in range(actions):
        push(game, "T1:KS>T2" if i % 2 == 0 else "T2:KS>T1")
    return game


def test_undo_reaches_exactly_100_actions_back():
    assert UNDO_DEPTH == 100
    game = _king_back_and_forth(101)
    after_first = _king_back_and_forth(1)
    for _ in range(100):
        push(game, "U")
    assert without_counters(str(game.position)) == without_counters(str(after_first.position))
    assert game.position.moves == 101
    error = undo_refused(game)
    assert error == "undo.max-100"
    assert game.undos == 100 and game.actions == 201


def test_100_undos_after_100_actions_reach_the_start():
    game = _king_back_and_forth(100)
    start = str(_king_back_and_forth(0).position)
    for _ in range(100):
        push(game, "U")
    assert without_counters(str(game.position)) == without_counters(start)
    assert undo_refused(game) == "undo.nothing-to-undo"


def test_draws_count_towards_the_undo_depth():
    game = Game.from_position(build_position("FT1-N", [""] * 10))
    assert len(game.position.stock) == 104
    for _ in range(101):
        push(game, "S")
    for _ in range(100):
        push(game, "U")
    assert [str(c) for c in game.position.waste] == ["AS"]
    assert undo_refused(game) == "undo.max-100"
    # a new action can be undone again, but not past it
    push(game, "S")
    push(game, "U")
    assert undo_refused(game) == "undo.max-100"
    assert game.position.moves == 102


def test_the_move_counter_counts_moves_and_draws_only():
    game = Game.from_code("FT1-N-AAAAAAB")
    push(game, "S", "U", "S", "T7>F", "U", "T7>F", "S")
    assert game.position.moves == 5
    assert game.actions == 7
    assert game.undos == 2


def test_a_refused_action_changes_no_counter():
    game = Game.from_code("YU1-C-AAAAAAB")
    with pytest.raises(IllegalActionError):
        push(game, "T1>T2")
    assert (game.position.moves, game.actions, game.undos) == (0, 0, 0)
