"""Yukon search aids: the estimate's weights and the two-set stuck-card test."""

from __future__ import annotations

import pytest

from engine import Game
from engine.solver import UNWINNABLE, WINNABLE, solve, state_for
from engine.solver.search import best_first
from engine.solver.yukon import STYLES
from verifier import replay


def unbuilt(state) -> int:
    """Face-up cards not on a face-up card one rank higher of the other colour (classic)."""
    count = 0
    for i, col in enumerate(state.cols):
        for p in range(state.down[i] + 1, len(col)):
            g, t = col[p], col[p - 1]
            red_g, red_t = g // 13 in (1, 2), t // 13 in (1, 2)
            if not (t % 13 == g % 13 + 1 and red_g != red_t):
                count += 1
    return count


@pytest.mark.parametrize("style", STYLES)
def test_the_estimate_weighs_what_it_says(style):
    state = state_for(Game.from_code("YU1-C-KDURELR").position)
    state.weights = style
    w_down, w_break, w_cover = style
    covers = sum(len(col) - d for col, d in zip(state.cols, state.down) if d)
    assert state.estimate() == w_down * sum(state.down) + 52 + w_break * unbuilt(state) + w_cover * covers


@pytest.mark.parametrize("style", STYLES)
def test_every_style_wins_and_the_line_replays(style):
    code = "YU1-C-AAAAAAB"
    state = state_for(Game.from_code(code).position)
    state.weights = style
    out = best_first(state, max_nodes=100_000, deadline=None, max_table=1_000_000)
    assert out.end == "won"
    assert replay(code, [state.action_text(m) for m in out.moves]).won


# classic deals of bench/corpora the first solver left undecided after 10 s
@pytest.mark.parametrize("code", ["YU1-C-K3ATZIG", "YU1-C-F2PEZZ4", "YU1-C-RUNCE5R"])
def test_deals_the_unbuilt_count_wins_quickly_with_no_position_called_stuck(code):
    result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=20_000)
    assert result.status == WINNABLE
    game = Game.from_code(code)
    for action in result.actions:
        game.push_text(action)
        assert not state_for(game.position).dead(), action
    assert game.position.is_won


def test_a_cover_that_only_moves_with_its_target_leaves_it_covered():
    # proved lost in 95,728 positions examined by the one-set test, far fewer now
    result = solve(Game.from_code("YU1-C-2KU2AKA").position, budget_seconds=None, max_nodes=60_000)
    assert result.status == UNWINNABLE
