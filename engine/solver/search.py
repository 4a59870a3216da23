"""Depth-first search with a transposition table, safe automatic foundation
moves and the "same card twice in a row" pruning, over a solver state
(:class:`~engine.solver.yukon.YukonState` or :class:`~engine.solver.forty.FortyState`).

Memory is bounded by the table cap (one key per position) and the path (one
frame per move of the current line); time by a node cap and a deadline.
Given the same state and caps (and a deadline that does not strike) the
search visits the same nodes in the same order, so its answer is the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

WON, EXHAUSTED, NODES, TIME, TABLE = "won", "exhausted", "nodes", "time", "table"


@dataclass
class Outcome:
    """How a search ended: ``won`` (with ``moves``), ``exhausted`` (every
    position the reduced move set reaches was examined) or a cap that struck."""

    end: str
    moves: list[Any] = field(default_factory=list)
    nodes: int = 0
    positions: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    key_bytes: int = 0


def depth_first(state: Any, *, max_nodes: int, deadline: float | None, max_table: int,
                clock: Callable[[], float] = time.monotonic) -> Outcome:
    """Search from ``state`` (changed in place, and changed back unless won)."""
    started = clock()
    seen: set[bytes] = set()
    path: list[tuple[Any, bool]] = []  # (move, whether it turned a card up), autos included
    # a frame: [moves, next index, autos applied on entry, previous free move (card, from, to, flip) or None]
    frames: list[list[Any]] = []
    nodes = 0
    max_depth = 0
    key_bytes = 0
    auto_move, do, undo, key, won, moves_of, places, dead = (
        state.auto_move, state.do, state.undo, state.key, state.won, state.moves, state.places, state.dead)

    def enter(prev: tuple[int, int, int, bool] | None) -> str | None:
        nonlocal nodes, key_bytes
        nodes += 1
        autos = 0
        m = auto_move()
        while m is not None:
            path.append((m, do(m)))
            autos += 1
            m = auto_move()
        if won():
            return WON
        k = key()
        if k in seen:
            for _ in range(autos):
                m, flip = path.pop()
                undo(m, flip)
            return EXHAUSTED
        if len(seen) >= max_table:
            return TABLE
        seen.add(k)
        key_bytes += len(k)
        if dead():
            for _ in range(autos):
                m, flip = path.pop()
                undo(m, flip)
            return EXHAUSTED
        frames.append([moves_of(), 0, autos, prev if autos == 0 else None])
        return None

    def outcome(end: str) -> Outcome:
        return Outcome(end, [m for m, _ in path] if end == WON else [], nodes, len(seen), max_depth,
                       clock() - started, key_bytes)

    result = enter(None)
    if result is not None:
        return outcome(WON if result == WON else result)
    while frames:
        frame = frames[-1]
        moves, i = frame[0], frame[1]
        if i < len(moves):
            m = moves[i]
            frame[1] = i + 1
            prev = frame[3]
            card, src, dst = places(m)
            if prev is not None and prev[0] == card and prev[2] == src and not (dst == prev[1] and prev[3]):
                # the same card moves twice in a row: one move from the position before does the same
                continue
            if nodes >= max_nodes:
                return _unwound(outcome(NODES), state, path)
            if deadline is not None and not nodes & 255 and clock() > deadline:
                return _unwound(outcome(TIME), state, path)
            flip = do(m)
            path.append((m, flip))
            result = enter((card, src, dst, flip))
            if result is None:
                if len(frames) > max_depth:
                    max_depth = len(frames)
                continue
            if result == WON:
                return outcome(WON)
            if result == TABLE:
                return _unwound(outcome(TABLE), state, path)
            m, flip = path.pop()
            undo(m, flip)
        else:
            frames.pop()
            for _ in range(frame[2]):
                m, flip = path.pop()
                undo(m, flip)
            if frames:
                m, flip = path.pop()
                undo(m, flip)
    return outcome(EXHAUSTED)


def _unwound(result: Outcome, state: Any, path: list[tuple[Any, bool]]) -> Outcome:
    while path:
        m, flip = path.pop()
        state.undo(m, flip)
    return result


def best_first(state: Any, *, max_nodes: int, deadline: float | None, max_table: int,
               clock: Callable[[], float] = time.monotonic) -> Outcome:
    """Expand the position with the lowest ``state.estimate()`` first (ties: the
    oldest); every position is stored once (key → parent), so the table cap bounds memory."""
    import heapq

    started = clock()
    auto_move, do, undo, key, won, moves_of, places, encode, decode, estimate, dead = (
        state.auto_move, state.do, state.undo, state.key, state.won, state.moves, state.places,
        state.encode, state.decode, state.estimate, state.dead)
    parents: dict[bytes, tuple[bytes | None, tuple[Any, ...]]] = {}
    heap: list[tuple[int, int, bytes, bytes, Any]] = []
    nodes = 0
    key_bytes = 0
    seq = 0
    order = -1 if getattr(state, "newest_first", False) else 1  # ties: newest or oldest first

    def autos() -> list[tuple[Any, bool]]:
        done = []
        m = auto_move()
        while m is not None:
            done.append((m, do(m)))
            m = auto_move()
        return done

    def line(k: bytes | None, tail: tuple[Any, ...]) -> list[Any]:
        parts = [tail]
        while k is not None:
            k, moves = parents[k]
            parts.append(moves)
        return [m for part in reversed(parts) for m in part]

    def outcome(end: str, moves: list[Any] | None = None) -> Outcome:
        return Outcome(end, moves or [], nodes, len(parents), 0, clock() - started, key_bytes)

    root = encode()
    first = autos()
    if won():
        moves = [m for m, _ in first]
        decode(root)
        return outcome(WON, moves)
    k = key()
    parents[k] = (None, tuple(m for m, _ in first))
    key_bytes += len(k)
    if not dead():
        heap.append((estimate(), 0, encode(), k, None))
    decode(root)
    while heap:
        _, _, data, pk, prev = heapq.heappop(heap)
        decode(data)
        for m in moves_of():
            card, src, dst = places(m)
            if prev is not None and prev[0] == card and prev[2] == src and not (dst == prev[1] and prev[3]):
                continue
            if nodes >= max_nodes:
                decode(root)
                return outcome(NODES)
            if deadline is not None and not nodes & 255 and clock() > deadline:
                decode(root)
                return outcome(TIME)
            nodes += 1
            flip = do(m)
            done = autos()
            if won():
                moves = line(pk, (m,) + tuple(a for a, _ in done))
                decode(root)
                return outcome(WON, moves)
            k = key()
            if k not in parents:
                if len(parents) >= max_table:
                    decode(root)
                    return outcome(TABLE)
                parents[k] = (pk, (m,) + tuple(a for a, _ in done))
                key_bytes += len(k)
                seq += 1
                if not dead():
                    heapq.heappush(heap, (estimate(), order * seq, encode(), k, None if done else (card, src, dst, flip)))
            for a, f in reversed(done):
                undo(a, f)
            undo(m, flip)
    decode(root)
    return outcome(EXHAUSTED)
