"""A beam layer tests for dead ends lazily (engine.solver.search._alive): the layer must be the
one that testing every child first would give, each entry handed over with the state on it."""

from __future__ import annotations

import random

import pytest

from engine import Game
from engine.solver import solve, state_for
from engine.solver.search import _alive

# classic deals stuck at their start (the stuck-card test, docs/winnability.md)
DEAD_DEALS = ("YU1-C-WY2RCND", "YU1-C-UP6WYTJ", "YU1-C-SLQ3IAN", "YU1-C-FM4YG5I", "YU1-C-RNXZ6DA")


def pool() -> tuple[list[bytes], list[bytes]]:
    """Encoded live positions (children of a deal's start and of a few positions after it) and dead ones."""
    state = state_for(Game.from_code("YU1-C-KDURELR").position)
    live = []
    for _ in range(4):
        for m in state.moves():
            flip = state.do(m)
            live.append(state.encode())
            state.undo(m, flip)
        state.do(state.moves()[0])
    dead = [state_for(Game.from_code(code).position).encode() for code in DEAD_DEALS]
    return live, dead


@pytest.mark.parametrize("seed", range(5))
def test_the_lazy_layer_is_the_best_live_children_in_order(seed):
    live, dead = pool()
    state = state_for(Game.from_code("YU1-C-KDURELR").position)
    rng = random.Random(seed)
    datas = live + dead * 4
    entries = [(rng.randrange(30), -i, data) for i, data in enumerate(datas)]

    def is_dead(data: bytes) -> bool:
        state.decode(data)
        return state.dead()

    assert all(is_dead(d) for d in dead) and not all(is_dead(d) for d in live)
    for width in (1, 3, 10, len(entries)):
        expected = [e for e in sorted(entries) if not is_dead(e[2])][:width]
        kept = []
        for entry in _alive(state, state.dead, list(entries), width):
            assert state.encode() == entry[2]  # the beam expands it from here
            kept.append(entry)
        assert kept == expected


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-R-AAAAAAC"])
def test_beam_answers_are_those_of_the_complete_search_on_small_budgets(code):
    """A beam's win is a win: the complete depth-first search alone wins the deal too."""
    position = Game.from_code(code).position
    with_beams = solve(position, budget_seconds=None, max_nodes=30_000, shorten_steps=0)
    alone = solve(position, budget_seconds=None, max_nodes=300_000, method="depth", shorten_steps=0)
    assert with_beams.status == alone.status == "winnable"
