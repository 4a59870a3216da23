"""Searches over a solver state (:class:`~engine.solver.yukon.YukonState` or
:class:`~engine.solver.forty.FortyState`), all with safe automatic foundation
moves, a table of canonical keys and the "same card twice in a row" pruning:

* :func:`depth_first` and :func:`best_first` are complete: ``exhausted`` means
  no position they reach is won;
* :func:`beam` and :func:`stage_beam` are not: they keep only the best
  positions of each depth or stage, so they find wins sooner but their
  ``exhausted`` proves nothing.

Memory is bounded by the table cap (one key per position) and, depth-first,
the path (one frame per move of the current line); time by a node cap and a
deadline. Given the same state and caps (and a deadline that does not strike)
a search visits the same nodes in the same order, so its answer is the same.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .state import SearchSettings, SolverMove, SolverState, StagedState

#: settings of a search called without any: the state's own estimate, oldest first
DEFAULT = SearchSettings()

WON, EXHAUSTED, NODES, TIME, TABLE = "won", "exhausted", "nodes", "time", "table"


@dataclass
class Outcome:
    """How a search ended: ``won`` (with ``moves``), ``exhausted`` (every
    position the reduced move set reaches was examined) or a cap that struck."""

    end: str
    moves: list[SolverMove] = field(default_factory=list)
    nodes: int = 0
    positions: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    key_bytes: int = 0


def depth_first(
    state: SolverState,
    *,
    max_nodes: int,
    deadline: float | None,
    max_table: int,
    clock: Callable[[], float] = time.monotonic,
    avoid: frozenset[bytes] = frozenset(),
) -> Outcome:
    """Search from ``state`` (changed in place, and changed back unless won), never entering a key of ``avoid``."""
    search = _DepthFirst(state, max_table, clock, avoid)
    end = search.enter(None)
    if end is not None:
        return search.outcome(end)
    frames = search.frames
    while frames:
        frame = frames[-1]
        if frame[1] < len(frame[0]):
            out = search.try_next(frame, max_nodes, deadline)
            if out is not None:
                return out
        else:  # every move of this position tried: back to the one before (its autos, then the move to it)
            frames.pop()
            _undo_last(search.path, state.undo, frame[2] + (1 if frames else 0))
    return search.outcome(EXHAUSTED)


class _DepthFirst:
    """One depth-first search: the current line (every move made, automatic ones included,
    and a frame for each position on it that has moves left to try), the keys met and the counts."""

    def __init__(
        self, state: SolverState, max_table: int, clock: Callable[[], float], avoid: frozenset[bytes]
    ) -> None:
        self.state = state
        self.max_table = max_table
        self.clock = clock
        self.started = clock()
        # the keys to avoid are met already from the start: the search never enters them
        self.avoided = len(avoid)
        self.seen: set[bytes] = set(avoid)
        self.path: list[tuple[Any, bool]] = []  # (move, whether it turned a card up), autos included
        # a frame: [moves, next index, autos on entry, the move into it (card, from, to, flip, between columns) or None]
        self.frames: list[list[Any]] = []
        self.nodes = 0
        self.max_depth = 0
        self.key_bytes = 0

    def enter(self, prev: tuple[int, int, int, bool, bool] | None) -> str | None:
        """Count the position the state is on and make its automatic moves; then None when it is
        new and not dead (its frame pushed, ``prev`` the move into it), else how it ends: ``won``,
        ``exhausted`` (met before or dead: its automatic moves undone) or ``table`` (full)."""
        state, path = self.state, self.path
        self.nodes += 1
        autos = 0
        m = state.auto_move()
        while m is not None:
            path.append((m, state.do(m)))
            autos += 1
            m = state.auto_move()
        if state.won():
            return WON
        k = state.key()
        if k in self.seen:
            _undo_last(path, state.undo, autos)
            return EXHAUSTED
        if len(self.seen) >= self.max_table:
            return TABLE
        self.seen.add(k)
        self.key_bytes += len(k)
        if state.dead():
            _undo_last(path, state.undo, autos)
            return EXHAUSTED
        self.frames.append([state.moves(), 0, autos, prev if autos == 0 else None])
        return None

    def try_next(self, frame: list[Any], max_nodes: int, deadline: float | None) -> Outcome | None:
        """Make the next move of ``frame`` (the last) unless pruned, and enter its position; the
        outcome when the search ends there (a win or a cap), else None (a new frame, or none)."""
        state, path = self.state, self.path
        moves, i, prev = frame[0], frame[1], frame[3]
        m = moves[i]
        frame[1] = i + 1
        card, src, dst = state.places(m)
        if prev is not None and _pruned(self.frames, prev, card, src, dst):
            return None  # its position is a child of a position further up this line (docs/winnability.md)
        if self.nodes >= max_nodes:
            return _unwound(self.outcome(NODES), state, path)
        if deadline is not None and not self.nodes & 255 and self.clock() > deadline:
            return _unwound(self.outcome(TIME), state, path)
        flip = state.do(m)
        path.append((m, flip))
        end = self.enter((card, src, dst, flip, state.between_columns(m)))
        if end is None:
            self.max_depth = max(self.max_depth, len(self.frames))
            return None
        if end != EXHAUSTED:
            return self.outcome(WON) if end == WON else _unwound(self.outcome(TABLE), state, path)
        _undo_last(path, state.undo, 1)
        return None

    def outcome(self, end: str) -> Outcome:
        moves = [m for m, _ in self.path] if end == WON else []
        positions = len(self.seen) - self.avoided
        return Outcome(end, moves, self.nodes, positions, self.max_depth, self.clock() - self.started, self.key_bytes)


def _pruned(frames: list[list[Any]], prev: tuple[int, int, int, bool, bool], card: int, src: int, dst: int) -> bool:
    """Whether depth-first search skips moving ``card`` from ``src`` to ``dst`` after ``prev`` (the
    move into the current position, no automatic move after it): its position is a child of a
    position further up the line, which tries every move ("Reductions", docs/winnability.md).

    * The same card twice in a row: one move from the position before does the same.
    * The card back where the move before ``prev`` took it from (turning nothing up, no automatic
      move after it either), ``prev`` a move between columns that put no card on or took none off
      the place it goes back to: the position is one move away from two positions up.
    """
    if prev[0] == card and prev[2] == src and not (dst == prev[1] and prev[3]):
        return True
    if len(frames) < 2:
        return False
    first = frames[-2][3]
    if first is None or first[0] != card or first[1] != dst or first[2] != src or first[3] or not prev[4]:
        return False
    if prev[1] != src and prev[1] != dst and prev[2] != src and prev[2] != dst:
        return True  # prev between two other columns
    # both between columns, prev took cards off the card's group, or put cards on it, from or to a third column
    return first[4] and ((prev[1] == src and prev[2] != dst) or (prev[2] == src and prev[1] != dst))


def _undo_last(path: list[tuple[SolverMove, bool]], undo: Callable[[SolverMove, bool], None], count: int) -> None:
    """Undo the last ``count`` moves of ``path``."""
    for _ in range(count):
        m, flip = path.pop()
        undo(m, flip)


def _unwound(result: Outcome, state: SolverState, path: list[tuple[SolverMove, bool]]) -> Outcome:
    while path:
        m, flip = path.pop()
        state.undo(m, flip)
    return result


class _Frontier:
    """What best-first and beam search share: the positions kept so far (key →
    parent key and the moves from it, which give the winning line back), the
    node count and caps, and the expansion of one position into its children."""

    def __init__(
        self,
        state: SolverState,
        max_nodes: int,
        deadline: float | None,
        clock: Callable[[], float],
        lean: bool = False,
        avoid: frozenset[bytes] = frozenset(),
    ) -> None:
        self.state = state
        self.lean = lean  # the state's lean moves (beams only: a complete search needs every move)
        self.max_nodes, self.deadline, self.clock = max_nodes, deadline, clock
        self.started = clock()
        # the positions to avoid are in the table from the start, as if met already: no search enters them
        self.avoided = len(avoid)
        self.parents: dict[bytes, tuple[bytes | None, tuple[Any, ...]]] = dict.fromkeys(avoid, (None, ()))
        self.nodes = 0
        self.key_bytes = 0
        self.root = state.encode()
        self.end = ""  # set when a child is won or a cap strikes
        self.moves: list[Any] = []

    def _autos(self) -> tuple[Any, ...]:
        auto_move, do = self.state.auto_move, self.state.do
        done = []
        m = auto_move()
        while m is not None:
            done.append((m, do(m)))
            m = auto_move()
        return tuple(done)

    def start(self) -> bytes | None:
        """Make the root's automatic moves and store the root (its parent: none); its
        key, or None when those moves win."""
        first = tuple(m for m, _ in self._autos())
        if self.state.won():
            self.end, self.moves = WON, list(first)
            return None
        key = self.state.key()
        self.parents[key] = (None, first)
        self.key_bytes += len(key)
        return key

    def children(self, pk: bytes, prev: tuple[int, int, int, bool] | None) -> Iterator[tuple[Any, ...]]:
        """Set the state to each child of its current position (key ``pk``) in turn and
        yield (key, moves from ``pk``, its ``prev`` for the pruning); the state goes
        back to that position after each. Stops with ``end`` set on a win or a cap."""
        state = self.state
        do, undo, won, key, places = state.do, state.undo, state.won, state.key, state.places
        for m in state.lean_moves() if self.lean else state.moves():
            card, src, dst = places(m)
            if prev is not None and prev[0] == card and prev[2] == src and not (dst == prev[1] and prev[3]):
                continue  # the same card twice in a row (docs/winnability.md)
            if self.nodes >= self.max_nodes:
                self.end = NODES
                return
            if self.deadline is not None and not self.nodes & 255 and self.clock() > self.deadline:
                self.end = TIME
                return
            self.nodes += 1
            flip = do(m)
            done = self._autos()
            moves = (m,) + tuple(a for a, _ in done)
            if won():
                self.end, self.moves = WON, self.line(pk, moves)
                return
            yield key(), moves, None if done else (card, src, dst, flip)
            for a, f in reversed(done):
                undo(a, f)
            undo(m, flip)

    def line(self, k: bytes | None, tail: tuple[Any, ...]) -> list[Any]:
        parts = [tail]
        while k is not None:
            k, moves = self.parents[k]
            parts.append(moves)
        return [m for part in reversed(parts) for m in part]

    def outcome(self, end: str) -> Outcome:
        self.state.decode(self.root)
        return Outcome(
            end,
            self.moves if end == WON else [],
            self.nodes,
            len(self.parents) - self.avoided,
            0,
            self.clock() - self.started,
            self.key_bytes,
        )


def best_first(
    state: SolverState,
    *,
    max_nodes: int,
    deadline: float | None,
    max_table: int,
    settings: SearchSettings = DEFAULT,
    clock: Callable[[], float] = time.monotonic,
    avoid: frozenset[bytes] = frozenset(),
) -> Outcome:
    """Expand the position with the lowest estimate first (ties: the oldest, or
    the newest with ``settings.newest_first``); every position is stored once
    (key → parent), so the table cap bounds memory. Keys in ``avoid`` are never entered."""
    tree = _Frontier(state, max_nodes, deadline, clock, avoid=avoid)
    parents, encode, dead, weights = tree.parents, state.encode, state.dead, settings.weights
    estimate = partial(state.estimate, weights)

    root = tree.start()
    if root is None:
        return tree.outcome(WON)
    heap: list[tuple[int, int, bytes, bytes, Any]] = []
    if not dead():
        heap.append((estimate(), 0, encode(), root, None))
    seq = 0
    order = -1 if settings.newest_first else 1
    while heap:
        _, _, data, pk, prev = heapq.heappop(heap)
        state.decode(data)
        for k, moves, child_prev in tree.children(pk, prev):
            if k not in parents:
                if len(parents) >= max_table:
                    return tree.outcome(TABLE)
                parents[k] = (pk, moves)
                tree.key_bytes += len(k)
                seq += 1
                if not dead():
                    heapq.heappush(heap, (estimate(), order * seq, encode(), k, child_prev))
        if tree.end:
            return tree.outcome(tree.end)
    return tree.outcome(EXHAUSTED)


def beam(
    state: SolverState,
    *,
    width: int,
    max_nodes: int,
    deadline: float | None,
    max_table: int,
    settings: SearchSettings = DEFAULT,
    clock: Callable[[], float] = time.monotonic,
    avoid: frozenset[bytes] = frozenset(),
) -> Outcome:
    """Beam search, incomplete, for finding wins fast: of the new positions one
    move deeper than the current layer, keep the ``width`` of lowest estimate
    (ties: the newest) as the next layer. ``exhausted`` here only means the beam
    died out, never that the position is lost. Only kept positions are stored.
    A position is expanded as soon as it is kept, while the dead-end test has
    left the state on it, so each kept position is decoded once."""
    tree = _Frontier(state, max_nodes, deadline, clock, settings.lean_beams, avoid)
    parents, encode, dead, weights = tree.parents, state.encode, state.dead, settings.weights
    estimate = partial(state.estimate, weights)

    root = tree.start()
    if root is None:
        return tree.outcome(WON)
    # an entry: (estimate, -age, encoded position, key, prev for the pruning, parent key, moves from the parent)
    found: dict[bytes, tuple[Any, ...]] = {}
    seq = 0
    # the root first (tree.start() stored it and left the state on it), then each layer as _alive keeps it
    layer: Iterable[tuple[Any, ...]] = [(0, 0, b"", root, None, None, ())]
    while True:
        for _, _, _, pk, prev, parent, into in layer:
            if pk not in parents:  # every kept position but the root
                if len(parents) >= max_table:
                    return tree.outcome(TABLE)
                parents[pk] = (parent, into)
                tree.key_bytes += len(pk)
                found.pop(pk, None)  # a child of this layer's earlier positions, now kept in this layer
            for k, moves, child_prev in tree.children(pk, prev):
                if k not in parents and k not in found:
                    seq -= 1
                    found[k] = (estimate(), seq, encode(), k, child_prev, pk, moves)
            if tree.end:
                return tree.outcome(tree.end)
        if not found:
            return tree.outcome(EXHAUSTED)
        layer = _alive(state, dead, list(found.values()), width)
        found = {}


def _alive(
    state: SolverState, dead: Callable[[], bool], entries: list[tuple[Any, ...]], width: int
) -> Iterator[tuple[Any, ...]]:
    """The ``width`` entries of lowest (estimate, age) whose position is not dead, lowest first,
    each yielded with the state set to its position. The dead-end test runs only on the entries
    looked at, in that order, not on every child: the same layer as testing each child, at a
    fraction of the cost (most children are dropped)."""
    heapq.heapify(entries)
    kept = 0
    while entries and kept < width:
        entry = heapq.heappop(entries)
        state.decode(entry[2])
        if not dead():
            kept += 1
            yield entry


def stage_beam(
    state: StagedState,
    *,
    width: int,
    max_nodes: int,
    deadline: float | None,
    max_table: int,
    settings: SearchSettings = DEFAULT,
    clock: Callable[[], float] = time.monotonic,
    avoid: frozenset[bytes] = frozenset(),
) -> Outcome:
    """Beam search by stage (``state.stage()``, a number no move raises and no
    move lowers by more than one: Forty Thieves, the cards left in the stock),
    incomplete like :func:`beam`. From the
    current layer it expands, best first, up to ``2 * width`` positions of the same
    stage (``20 * width`` at stage 0, the end game); of their children at a lower
    stage it keeps the ``width`` of lowest estimate as the next layer. A plain beam
    keyed by depth spends its width on moves that only shuffle the columns; this
    one gives every stage its share, so the search reaches the end of the stock.
    It ranks by ``state.stage_estimate()``, an estimate for comparing positions of one stage."""
    tree = _Frontier(state, max_nodes, deadline, clock, avoid=avoid)
    parents, encode, stage, estimate = tree.parents, state.encode, state.stage, state.stage_estimate
    root = tree.start()
    if root is None:
        return tree.outcome(WON)
    # an entry: (estimate, -age, encoded position, key, prev for the pruning), then parent key and moves
    heap: list[tuple[Any, ...]] = [(0, 0, encode(), root, None)]
    level = stage()
    seq = 0
    while heap:
        lower: dict[bytes, tuple[Any, ...]] = {}
        budget = width * (20 if level == 0 else 2)
        while heap and budget:
            budget -= 1
            _, _, data, pk, prev = heapq.heappop(heap)
            state.decode(data)
            for k, moves, child_prev in tree.children(pk, prev):
                if k in parents or k in lower:
                    continue
                seq -= 1
                entry = (estimate(), seq, encode(), k, child_prev)
                if stage() < level:
                    lower[k] = entry + (pk, moves)
                else:
                    parents[k] = (pk, moves)
                    tree.key_bytes += len(k)
                    heapq.heappush(heap, entry)
            if tree.end:
                return tree.outcome(tree.end)
            if len(parents) >= max_table:
                return tree.outcome(TABLE)
        chosen = heapq.nsmallest(width, lower.values())
        if len(parents) + len(chosen) > max_table:
            return tree.outcome(TABLE)
        heap = []
        for *kept, pk, moves in chosen:
            parents[kept[3]] = (pk, moves)
            tree.key_bytes += len(kept[3])
            heap.append(tuple(kept))
        level -= 1
    return tree.outcome(EXHAUSTED)
