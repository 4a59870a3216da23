"""A solver for Yukon (classic and relaxed) and Forty Thieves: can this position be won?

Pure logic beside the engine, standard library only, no I/O. It knows every
card (face-down cards and the stock order follow from the deal), so it answers
whether the *deal* can be won, not whether a player could see how.

>>> from engine import Game
>>> result = solve(Game.from_code("YU1-C-AAAAAAB").position, max_nodes=20000)
>>> result.status, len(result.actions) > 0
('winnable', True)

The answer is one of

* ``winnable``: ``actions`` is a winning line in canonical text form;
* ``unwinnable``: the search examined every position the moves in
  ``coverage`` reach (take-backs included) and none is won;
* ``unknown``: a budget (time, nodes or table size) ran out; ``reason`` says which.

What makes the search small is written down, with proofs, in
``docs/winnability.md``: safe automatic foundation moves, a canonical key
(column order and the two copies of a Forty Thieves card do not matter), no
card moved twice in a row, and a heuristic move order. Both games first
try beam searches, which find many wins early but prove nothing (see
:func:`solve`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ..position import Position
from .registry import SOLVERS, settings_for, state_for
from .search import EXHAUSTED, NODES, TABLE, TIME, WON, Outcome, beam, best_first, depth_first, stage_beam
from .shortening import SHORTEN_STEPS, shorten
from .state import SearchSettings, SolverState, StagedState

WINNABLE, UNWINNABLE, UNKNOWN = "winnable", "unwinnable", "unknown"

#: default caps: seconds of search, positions examined, positions remembered
DEFAULT_SECONDS = 10.0
DEFAULT_NODES = 50_000_000
DEFAULT_TABLE = 2_000_000  # about 0.3 GB for classic Yukon, 2.2 GB for Forty Thieves (docs/operations.md)
#: share of the node and time budgets the beam searches get before the complete search, unless the
#: rule set's :class:`SearchSettings` say otherwise (``beam_share``)
BEAM_SHARE = 0.7

_REDUCTIONS_COMMON = (
    "safe foundation moves are made at once (proved to lose nothing, take-backs included: docs/winnability.md)",
    "positions that differ only in the order of the columns are one position",
    "a card moved twice in a row is skipped: one move from the position before does the same",
    "a king (Yukon) or a column's only card (Forty Thieves) is not moved to an empty column, and of "
    "several empty columns only the first is a target",
)
UNDO_NOTE = (
    "undo: adds no position, since an undo returns to a position already met on the same line; "
    "a line with undos wins only if the same line without them does"
)


@dataclass(frozen=True)
class SolveResult:
    """The answer for one position, with what the search did to get it."""

    status: str
    actions: tuple[str, ...] = ()
    reason: str = ""
    nodes: int = 0
    positions: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    table_bytes: int = 0
    coverage: dict[str, Any] = field(default_factory=dict)
    #: the length of the line the search found, before :func:`shorten` (winnable only)
    found_length: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "actions": list(self.actions) if self.status == WINNABLE else None,
            "length": len(self.actions) if self.status == WINNABLE else None,
            "reason": self.reason,
            "nodes": self.nodes,
            "positions": self.positions,
            "max_depth": self.max_depth,
            "seconds": round(self.seconds, 3),
            "table_bytes": self.table_bytes,
            "coverage": self.coverage,
            "found_length": self.found_length if self.status == WINNABLE else None,
        }


def coverage_for(game: str) -> dict[str, Any]:
    """What an ``unwinnable`` answer covers for ``game`` (its code letters: ``YU``, ``FT``):
    the moves and reductions of its rule sets' search settings."""
    settings = next(SOLVERS[rules.variant].search for rules in Position.known_rules.values() if rules.game == game)
    return {
        "moves": list(settings.covered_moves),
        "undo": UNDO_NOTE,
        "left_out": [],
        "reductions": list(_REDUCTIONS_COMMON + settings.reductions),
    }


def table_entry_bytes(key_bytes: int, positions: int) -> int:
    """Estimated memory of the transposition table: each key is a bytes object
    (33 bytes of header plus its length) in a set (about 2 slots of 16 bytes)."""
    return key_bytes + positions * (33 + 32)


def _beams(
    state: SolverState,
    settings: SearchSettings,
    max_nodes: int,
    budget_seconds: float | None,
    max_table: int,
    clock: Callable[[], float] = time.monotonic,
    avoid: frozenset[bytes] = frozenset(),
) -> Outcome | None:
    """Beam searches of growing width (``settings.beam_widths``) within the beam share of
    the budgets: they find many wins far sooner than a complete search, but prove
    nothing. Several sequences of beams take turns, because each wins deals the
    others miss: one per estimate style (``settings.styles``: weights and a part of
    the share) and, for a state with stages, beams by stage (part 1). The sequence
    that has spent the fewest nodes for its part so far runs its next beam. The
    outcome of the last beam (with the nodes of all), or None without beams."""
    widths = settings.beam_widths
    if not widths:
        return None
    fraction = settings.beam_share or BEAM_SHARE
    share = int(max_nodes * fraction)
    if settings.beam_cap is not None:
        share = min(share, settings.beam_cap)
    deadline = None if budget_seconds is None else clock() + budget_seconds * fraction
    runs: list[_Run] = [
        _Run(partial(beam, state, settings=replace(settings, weights=style), clock=clock, avoid=avoid), part)
        for style, part in settings.styles
    ]
    if isinstance(state, StagedState):
        runs.append(_Run(partial(stage_beam, state, settings=settings, clock=clock, avoid=avoid), 1))
    spent = 0
    out = None
    while runs:
        run = min(runs, key=lambda r: r.spent / r.part)
        out = run.search(width=widths[run.next], max_nodes=share - spent, deadline=deadline, max_table=max_table)
        spent += out.nodes
        run.spent += out.nodes
        run.next += 1
        out.nodes = spent
        if out.end != EXHAUSTED:
            break
        if run.next == len(widths):
            runs.remove(run)
    return out


@dataclass
class _Run:
    """One sequence of beams in :func:`_beams`: its search, part of the share, nodes spent, next width."""

    search: Callable[..., Outcome]
    part: int
    spent: int = 0
    next: int = 0


def _key_after_autos(position: Position) -> bytes:
    """The solver's key of ``position`` after its safe foundation moves (how the searches key positions)."""
    state = state_for(position)
    m = state.auto_move()
    while m is not None:
        state.do(m)
        m = state.auto_move()
    return state.key()


def avoided_keys(position: Position, avoid: Iterable[Position]) -> frozenset[bytes]:
    """The solver's keys of the positions ``avoid``, but the key of ``position`` itself (the search starts there)."""
    return frozenset(map(_key_after_autos, avoid)) - {_key_after_autos(position)}


def _search(
    state: SolverState,
    settings: SearchSettings,
    budgets: tuple[int, float | None, int],
    method: str,
    clock: Callable[[], float],
    avoid: frozenset[bytes],
) -> Outcome:
    """The beams (``method`` ``"best"``), then the complete search with what is left of the
    budgets (``nodes``, ``seconds``, ``table``), never through a key of ``avoid``."""
    nodes, budget_seconds, table = budgets
    started = clock()
    out = _beams(state, settings, nodes, budget_seconds, table, clock, avoid) if method == "best" else None
    if out is None or out.end != WON:
        spent = 0 if out is None else out.nodes
        deadline = None if budget_seconds is None else started + budget_seconds
        if method == "depth" or settings.complete_search == "depth":
            out = depth_first(state, max_nodes=nodes - spent, deadline=deadline, max_table=table, clock=clock,
                              avoid=avoid)
        else:
            out = best_first(state, max_nodes=nodes - spent, deadline=deadline, max_table=table, settings=settings,
                             clock=clock, avoid=avoid)
        out.nodes += spent
    return out


def _search_avoiding(
    state: SolverState,
    settings: SearchSettings,
    budgets: tuple[int, float | None, int],
    method: str,
    clock: Callable[[], float],
    avoid: frozenset[bytes],
) -> tuple[Outcome, bool]:
    """:func:`_search` avoiding ``avoid``; when that proves no line avoids them, a search that
    may go through them, with what is left of the budgets (a line that goes back is better
    than none, and ``unwinnable`` keeps its meaning). The outcome, and whether it avoids them."""
    started = clock()
    out = _search(state, settings, budgets, method, clock, avoid)
    if not avoid or out.end != EXHAUSTED:
        return out, True
    nodes, budget_seconds, table = budgets
    if nodes - out.nodes < 1:
        return Outcome(NODES, [], out.nodes, out.positions, out.max_depth, out.seconds, out.key_bytes), True
    seconds = None if budget_seconds is None else max(budget_seconds - (clock() - started), budget_seconds / 10)
    again = _search(state, settings, (nodes - out.nodes, seconds, table), method, clock, frozenset())
    again.nodes += out.nodes
    return again, False


def solve(
    position: Position,
    *,
    budget_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    max_table: int | None = None,
    method: str = "best",
    shorten_steps: int = SHORTEN_STEPS,
    clock: Callable[[], float] = time.monotonic,
    avoid: Sequence[Position] = (),
) -> SolveResult:
    """Decide whether ``position`` can be won, within the budgets.

    ``budget_seconds`` is time on ``clock`` (wall time; a benchmark on a shared machine may
    pass ``time.process_time``; ``None``: no limit); ``max_nodes`` caps the
    positions examined and ``max_table`` the positions remembered. ``method``
    ``"best"`` first runs the rule set's beam searches (:class:`SearchSettings`),
    then its complete search with the rest of the budgets; ``"depth"`` runs
    depth-first alone. Only a complete search answers ``unwinnable``; with a node
    cap and no time cap the answer is deterministic (docs/winnability.md).
    A winning line is then shortened by :func:`shorten` within ``shorten_steps``
    steps of work (0: the line as found) and what is left of the time budget, but
    at least a tenth of it.

    ``avoid``: positions the line should never reach (a player's path, for a hint that never
    leads back). The searches leave them out (each after its safe foundation moves) and the
    shortening keeps out of them; when that proves no line avoids them, a line that goes
    through them is searched for with what is left of the budgets.
    """
    _check_budgets(budget_seconds, max_nodes, max_table)
    coverage = coverage_for(position.rules.game)
    if position.is_won:
        return SolveResult(WINNABLE, (), "the position is already won", coverage=coverage)
    state, settings = state_for(position), settings_for(position)
    started, nodes, table = clock(), max_nodes or DEFAULT_NODES, max_table or DEFAULT_TABLE
    keys = avoided_keys(position, avoid) if avoid else frozenset()
    out, avoided = _search_avoiding(state, settings, (nodes, budget_seconds, table), method, clock, keys)
    actions = tuple(state.action_text(m) for m in out.moves) if out.end == WON else ()
    found = len(actions)  # the line as the search found it
    if out.end == WON and shorten_steps > 0:
        layouts = frozenset(p.layout() for p in avoid) - {position.layout()} if avoided else frozenset()
        actions = _shortened(position, actions, shorten_steps, budget_seconds, started, clock, layouts)
    status, reason = _status(out, actions, budget_seconds, max_nodes, max_table)
    table_bytes = table_entry_bytes(out.key_bytes, out.positions)
    out.seconds = clock() - started  # the shortening included
    return SolveResult(
        status, actions, reason, out.nodes, out.positions, out.max_depth, out.seconds, table_bytes, coverage, found
    )


def _check_budgets(budget_seconds: float | None, max_nodes: int | None, max_table: int | None) -> None:
    """:class:`ValueError` for a budget :func:`solve` cannot keep to."""
    if budget_seconds is not None and not budget_seconds > 0:
        raise ValueError(f"budget_seconds must be positive, not {budget_seconds!r}")
    for name, value in (("max_nodes", max_nodes), ("max_table", max_table)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a whole number from 1, not {value!r}")


def _shortened(
    position: Position,
    actions: tuple[str, ...],
    steps: int,
    budget_seconds: float | None,
    started: float,
    clock: Callable[[], float],
    avoid: frozenset[str],
) -> tuple[str, ...]:
    """The winning line ``actions`` shortened within ``steps`` steps of work and what is left
    of the time budget, but at least a tenth of it, reaching no layout of ``avoid``."""
    until = None if budget_seconds is None else max(started + budget_seconds, clock() + budget_seconds / 10)
    return shorten(position, actions, max_steps=steps, deadline=until, clock=clock, avoid=avoid)


def _status(
    out: Outcome, actions: tuple[str, ...], budget_seconds: float | None, max_nodes: int | None, max_table: int | None
) -> tuple[str, str]:
    """The answer's status and reason for how the search ended."""
    if out.end == WON:
        return WINNABLE, f"a winning line of {len(actions)} actions"
    if out.end == EXHAUSTED:
        return UNWINNABLE, (
            f"no position reachable from here is won: all {out.positions} "
            f"distinct positions the covered moves reach were examined"
        )
    return UNKNOWN, (
        {
            TIME: f"the time budget of {budget_seconds} s ran out",
            NODES: f"the node budget of {max_nodes or DEFAULT_NODES} positions ran out",
            TABLE: f"the transposition table is full ({max_table or DEFAULT_TABLE} positions)",
        }[out.end]
        + f" after {out.nodes} positions, undecided"
    )


__all__ = [
    "DEFAULT_NODES",
    "DEFAULT_SECONDS",
    "DEFAULT_TABLE",
    "SHORTEN_STEPS",
    "UNKNOWN",
    "UNWINNABLE",
    "WINNABLE",
    "SearchSettings",
    "SolveResult",
    "SolverState",
    "avoided_keys",
    "coverage_for",
    "settings_for",
    "shorten",
    "solve",
    "state_for",
]
