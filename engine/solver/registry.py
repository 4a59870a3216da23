"""Each rule set's solver, by variant id: the factory of the solver's own mutable copy of
a position (its :class:`SolverState`) and how to search its deals (its :class:`SearchSettings`).

The rules' registry (:mod:`engine.rules.registry`) declares the games and knows nothing
of the solver, so a replay never imports it; the solver registers here, one entry per
rule set, under the variant id the rules declare (a test checks every rule set has one).

>>> sorted(SOLVERS)
['forty-thieves', 'yukon-classic', 'yukon-relaxed']
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Final

from ..position import Position
from .forty import SETTINGS as FORTY_SETTINGS
from .forty import FortyState
from .state import SearchSettings, SolverState
from .yukon import CLASSIC_SETTINGS, RELAXED_SETTINGS, YukonState


class GameSolver:
    """What the solver needs of one rule set."""

    __slots__ = ("state", "search")

    def __init__(self, state: Callable[[Position], SolverState], search: SearchSettings) -> None:
        #: makes the solver's own mutable copy of a position of this rule set
        self.state: Final = state
        #: how the solver searches this rule set's deals
        self.search: Final = search


#: every rule set's solver, by variant id (:attr:`engine.rules.registry.RuleSet.variant`)
SOLVERS: dict[str, GameSolver] = {
    "yukon-classic": GameSolver(partial(YukonState, relaxed=False), CLASSIC_SETTINGS),
    "yukon-relaxed": GameSolver(partial(YukonState, relaxed=True), RELAXED_SETTINGS),
    "forty-thieves": GameSolver(FortyState, FORTY_SETTINGS),
}


def state_for(position: Position) -> SolverState:
    """The solver's own mutable copy of ``position``."""
    make = SOLVERS[position.rules.variant].state
    return make(position)


def settings_for(position: Position) -> SearchSettings:
    """How the solver searches positions of ``position``'s rule set."""
    return SOLVERS[position.rules.variant].search
