"""Forty Thieves search: the estimate, the beam searches run before the complete
search, and which answers each of them may give."""

from __future__ import annotations

import pytest

from engine import Game, Position, solver
from engine.cards import Card
from engine.solver import UNKNOWN, UNWINNABLE, WINNABLE, solve, state_for
from engine.solver.forty import DRAW, UNBUILT_WEIGHT
from engine.solver.search import EXHAUSTED, WON, beam, best_first, stage_beam
from verifier import replay

# No stock, no empty column, every queen under a king: nothing moves at all.
FORTY_DEAD = "FT1-N QSKH/QSKC/QHKS/QHKD/QCKS/QCKD/TDKH/TDKC/QDJD/QDJD JJ9JJJ9J - - 0 0 0"


def cards(*texts: str) -> list[int]:
    return [Card.from_text(t).index for t in texts]


def small_state():
    """Two columns and a waste of two cards, 100 cards up."""
    state = state_for(Game.from_code("FT1-N-AAAAAAB").position)
    state.cols = [cards("2S", "9S", "8H"), cards("KS", "QS", "JS")] + [[] for _ in range(8)]
    state.colkey = [state._colkey(i) for i in range(10)]  # the piles as the estimate reads them
    state.waste = cards("3D", "5D")
    state.placed = 100
    return state


def test_estimate_counts_cards_up_and_cards_over_lower_ones_in_columns_and_waste():
    # 4 cards not up; 9S lies over the lower 2S of its own suit (2), 8H over 2S (1);
    # KS QS JS lie in order (0); in the waste 5D lies over 3D (2)
    assert small_state().estimate() == 4 + 2 + 1 + 0 + 2


def test_the_stage_estimate_also_counts_cards_not_on_their_successor_in_suit():
    state = small_state()
    # 9S on 2S and 8H on 9S are not built, QS on KS and JS on QS are; 5D on 3D is not
    assert state.stage_estimate() == state.estimate() + UNBUILT_WEIGHT * (2 + 0 + 1)


def test_the_remembered_pile_counts_match_a_fresh_count_along_a_line():
    state = state_for(Game.from_code("FT1-N-AAAAAAB").position)
    fresh = state_for(Game.from_code("FT1-N-AAAAAAB").position)
    for _ in range(30):  # a line of first moves: the remembered pile counts must match a fresh count
        m = state.moves()[0]
        state.do(m)
        fresh.decode(state.encode())
        fresh._memo.clear()
        assert (state.estimate(), state.stage_estimate()) == (fresh.estimate(), fresh.stage_estimate())


@pytest.mark.parametrize("search, width", [(beam, 10), (stage_beam, 30)])
@pytest.mark.parametrize("code", ["FT1-N-AAAAAAB", "FT1-N-AAAAAAG"])
def test_a_narrow_beam_finds_a_win_whose_line_replays(code, search, width):
    state = state_for(Game.from_code(code).position)
    before = state.encode()
    out = search(state, width=width, max_nodes=100_000, deadline=None, max_table=10**6)
    assert out.end == WON
    assert state.encode() == before  # the state is given back as it was
    verdict = replay(code, [state.action_text(m) for m in out.moves])
    assert verdict.legal and verdict.won, verdict.error


@pytest.mark.parametrize("search, width", [(beam, 1), (stage_beam, 10)])
def test_a_beam_that_dies_out_proves_nothing(search, width):
    code = "FT1-N-AAAAAAB"
    out = search(
        state_for(Game.from_code(code).position), width=width, max_nodes=100_000, deadline=None, max_table=10**6
    )
    assert out.end == EXHAUSTED  # the single line it followed got stuck ...
    assert solve(Game.from_code(code).position, budget_seconds=None, max_nodes=200_000).status == WINNABLE


def test_the_stage_is_the_stock_size_and_only_a_draw_lowers_it():
    state = state_for(Game.from_code("FT1-N-AAAAAAB").position)
    assert state.stage() == 64
    for m in state.moves():
        flip = state.do(m)
        assert state.stage() == 64 - (m[0] == DRAW)
        state.undo(m, flip)


def test_unwinnable_still_comes_from_the_complete_search():
    position = Position.from_text(FORTY_DEAD)
    result = solve(position, budget_seconds=None, max_nodes=10_000)
    complete = best_first(state_for(position), max_nodes=10_000, deadline=None, max_table=10**6)
    assert result.status == UNWINNABLE
    assert complete.end == EXHAUSTED and result.positions == complete.positions


def test_beams_and_complete_search_share_the_node_budget_deterministically():
    position = Game.from_code("FT1-N-AAAAAAD").position  # no beam of up to 100 positions wins it
    result = solve(position, budget_seconds=None, max_nodes=10_000)
    assert result.status == UNKNOWN and result.nodes == 10_000 and "node budget" in result.reason
    again = solve(position, budget_seconds=None, max_nodes=10_000)
    assert (again.status, again.nodes, again.positions) == (result.status, result.nodes, result.positions)


def test_a_state_without_stages_gets_no_stage_beam(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("stage_beam called for a state without stages")

    monkeypatch.setattr(solver, "stage_beam", fail)
    position = Game.from_code("YU1-C-AAAAAAB").position
    assert not hasattr(state_for(position), "stage")
    assert solve(position, budget_seconds=None, max_nodes=20_000).status == WINNABLE
