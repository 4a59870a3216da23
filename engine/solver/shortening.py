"""Shortening a winning line, after fc-solve's ``-opt``: the solver's pass that makes par.

A search stops at its first win, and a beam's or a best-first search's line
wanders: it leaves a card and comes back for it, or moves a group twice where
once would do. :func:`shorten` takes such a line and returns one no longer
that still wins from the same position, in two kinds of step that repeat while
either gains and the work budget lasts:

* **shortcuts**: along the line, from each position, every sequence of up to
  ``SHORTCUT_DEPTHS`` solver moves is tried; when one reaches a *later* position
  of the line (the same position exactly: columns in order, foundations,
  stock and waste) in fewer actions than the line takes, the detour is cut
  out. Depth 0 is a cycle: a position met twice;
* **drops**: pairs of adjacent actions, then single actions, are removed when
  what is left still replays, in the engine, as a legal won game (the move that
  was never needed, or two moves that cancel).

Every line it returns has been replayed by the engine's rules as a win from
``position`` (the caller's verifier replays it again). The budget counts
actions replayed plus positions searched, so the result does not depend on
the machine's speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..errors import EngineError
from ..game import Game
from ..position import Position
from .registry import state_for
from .state import SolverMove, SolverState

#: default work budget of :func:`shorten`: engine actions replayed plus solver positions searched
SHORTEN_STEPS = 300_000
#: the longest sequences of solver moves tried as shortcuts from each position of the line, in
#: turn: the next depth once the one before gains nothing more, and only on a line the first
#: depth shortened (depth 3 costs about 6 times depth 2)
SHORTCUT_DEPTHS = (2, 3)


class _Budget:
    """Steps of work left (an action replayed, or a position searched), and an optional
    deadline on ``clock()`` (``time.monotonic`` unless told), looked at every 256 steps."""

    __slots__ = ("left", "deadline", "clock")

    def __init__(
        self, steps: int, deadline: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.left = steps
        self.deadline = deadline
        self.clock = clock

    def spend(self, steps: int) -> bool:
        """Take ``steps``; whether there were enough left (and time)."""
        self.left -= steps
        if self.deadline is not None and not self.left & 255 and self.clock() > self.deadline:
            self.left = -1
        return self.left >= 0


def shorten(
    position: Position,
    line: Sequence[str],
    *,
    max_steps: int = SHORTEN_STEPS,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    avoid: frozenset[str] = frozenset(),
) -> tuple[str, ...]:
    """A winning line from ``position`` no longer than ``line`` (which must win from it:
    :class:`ValueError` otherwise), found within ``max_steps`` steps of work and, if given,
    by ``deadline`` (on ``clock()``; then the result may depend on the machine). A line that
    reaches none of the layouts ``avoid`` (:meth:`Position.layout`) is shortened into one
    that reaches none of them either."""
    best = list(line)
    if _replay(position, best) is None:
        raise ValueError("the line to shorten does not replay as a won game from the position")
    if avoid and _replay(position, best, avoid) is None:
        avoid = frozenset()  # it goes through them already: nothing to keep out of
    budget = _Budget(max_steps, deadline, clock)
    for depth in SHORTCUT_DEPTHS:
        while budget.left > 0:
            before = len(best)
            trial = _shortcuts(position, best, depth, budget)
            if len(trial) < len(best) and _replay(position, trial, avoid) is not None:
                best = trial
            best = _drops(position, best, budget, avoid)
            if len(best) == before:
                break
        if len(best) == len(line):
            break  # a line no short detour shortens is tight: deeper ones rarely pay (docs/winnability.md)
    return tuple(best)


def _game(position: Position) -> Game:
    """A game from a copy of ``position``."""
    return Game(position.rules, position.copy())


def _replay(position: Position, line: Sequence[str], avoid: frozenset[str] = frozenset()) -> list[Position] | None:
    """The positions along ``line`` from ``position`` (the start first), or None when
    it breaks a rule, reaches a layout of ``avoid`` or does not end in a win."""
    game = _game(position)
    seen = [position.copy()]
    try:
        for text in line:
            game.push_text(text)
            if avoid and game.position.layout() in avoid:
                return None
            seen.append(game.position.copy())
    except EngineError:
        return None
    return seen if game.is_won else None


def _wins_from(position: Position, rest: Sequence[str], budget: _Budget, avoid: frozenset[str]) -> bool:
    """Whether ``rest`` replays from ``position`` as a won game reaching no layout of ``avoid``
    (each action a step)."""
    game = _game(position)
    try:
        for text in rest:
            if not budget.spend(1):
                return False
            game.push_text(text)
            if avoid and game.position.layout() in avoid:
                return False
    except EngineError:
        return False
    return game.is_won


def _drops(position: Position, line: list[str], budget: _Budget, avoid: frozenset[str]) -> list[str]:
    """``line`` with pairs of adjacent actions, then single ones, left out while the rest still
    wins (and reaches no layout of ``avoid``)."""
    seen = _replay(position, line, avoid)
    assert seen is not None
    for width in (2, 1):
        index = 0
        while index + width <= len(line) and budget.left > 0:
            trial = line[index + width :]
            if _wins_from(seen[index], trial, budget, avoid):
                line = line[:index] + trial
                rest = _replay(seen[index], trial, avoid)
                assert rest is not None
                seen = seen[:index] + rest
            else:
                index += 1
    return line


def _shortcuts(position: Position, line: list[str], depth: int, budget: _Budget) -> list[str]:
    """``line`` with every detour a sequence of at most ``depth`` solver moves avoids cut
    out, greedily from the start."""
    seen = _replay(position, line)
    assert seen is not None
    states = [state_for(p) for p in seen]
    later = {state.encode(): index for index, state in enumerate(states)}  # the last index of each position
    out: list[str] = []
    index = 0
    while index < len(line):
        state = states[index]
        jump: tuple[int, tuple[SolverMove, ...]] = later[state.encode()], ()  # a cycle: the same position again
        if budget.left > 0:
            jump = _reach(state, later, index, jump, (), depth, budget)
        target, moves = jump
        if target - index > len(moves):
            out += [state.action_text(m) for m in moves]
            index = target
        else:
            out.append(line[index])
            index += 1
    return out


def _reach(
    state: SolverState,
    later: dict[bytes, int],
    index: int,
    best: tuple[int, tuple[SolverMove, ...]],
    path: tuple[SolverMove, ...],
    depth: int,
    budget: _Budget,
) -> tuple[int, tuple[SolverMove, ...]]:
    """The best (target index, moves) from line position ``index``: moves after ``path``
    (already made on ``state``), at most ``depth`` more, that reach the line's position
    ``target`` and save the most actions (``best`` if none saves more)."""
    for m in state.moves():
        if not budget.spend(1):
            return best
        flip = state.do(m)
        step = path + (m,)
        target = later.get(state.encode(), -1)
        if target - index - len(step) > best[0] - index - len(best[1]):
            best = target, step
        if depth > 1 and not state.won():
            best = _reach(state, later, index, best, step, depth - 1, budget)
        state.undo(m, flip)
    return best
