"""A trial, not part of the solver: strong stubborn sets for Yukon's depth-first search
(docs/winnability.md, "Issue 25, seventh round"). Of a position's moves, only those of a set
that some shortest winning line starts with (after reordering) need trying, so a complete search
may leave the others out. Prints, for each deal, the solver's depth-first search against the
same search trying the stubborn sets' moves only (and without its "same card twice" rules),
with the positions each dropped as lost and those it expanded:

    python -m bench.stubborn_trial YU1-C-2KU2AKA YU1-C-WUOO352 --nodes 3000000

With ``--never``, it instead runs the solver's own depth-first search with a second dead-end
test after the stuck-card test (:func:`never_up`: a card whose going up no line can ever make
possible).

Actions are named by cards, not columns, so that a set does not depend on the columns' order:
``card * 53 + target`` puts a card (with the cards on it) onto ``target`` (a card, or ``EMPTY``:
an empty column), ``UP + card`` puts a card up, ``BACK + card * 53 + target`` takes one back.
A set starts from a *landmark*, actions one of which every winning line makes (the next card
of a suit goes up; the card lying on a card leaves it), and grows until it holds, for each of
its actions that can be made now, every action that does not commute with it, and, for each
that cannot, every action that makes one of its missing conditions true.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Final

from engine import Game
from engine.solver import state_for
from engine.solver.state import CardValue
from engine.solver.yukon import BACK as MOVE_BACK
from engine.solver.yukon import MAX_GROUP, NO_CARD
from engine.solver.yukon import UP as MOVE_UP

EMPTY: Final = 52
UP: Final = 53 * 53
BACK: Final = UP + 52
N_ACTIONS: Final = BACK + 52 * 53


def targets_of(state: Any) -> tuple[tuple[int, ...], ...]:
    """``targets_of(state)[g]``: the cards ``g`` builds on, from the state's own bit masks."""
    return tuple(tuple(t for t in range(52) if state.targets[g] >> t & 1) for g in range(52))


class Stubborn:
    """One position's stubborn-set computation (make one per position: it reads the columns once)."""

    def __init__(self, cols: list[list[CardValue]], down: list[int], found: list[int], loc: list[int],
                 above: list[int], onto: tuple[tuple[int, ...], ...], targets: tuple[tuple[int, ...], ...],
                 mark: list[int], stamp: int) -> None:
        self.cols, self.down, self.found, self.loc, self.above = cols, down, found, loc, above
        self.onto, self.targets, self.mark, self.stamp = onto, targets, mark, stamp
        idx = [0] * 53
        empty = False
        bottoms: list[int] = []
        for col in cols:
            if not col:
                empty = True
                continue
            bottoms.append(col[0])
            for p in range(len(col)):
                idx[col[p]] = p
        self.idx, self.empty, self.bottoms = idx, empty, bottoms

    # -- the model's facts ---------------------------------------------------

    def clear(self, c: int) -> bool:
        return self.loc[c] >= 0 and self.above[c] == NO_CARD

    def target_ok(self, t: int) -> bool:
        return self.empty if t == EMPTY else self.clear(t)

    def applicable(self, a: int) -> bool:
        loc, idx = self.loc, self.idx
        if a < UP:
            x, t = a // 53, a % 53
            i = loc[x]
            if i < 0 or idx[x] < self.down[i] or len(self.cols[i]) - idx[x] > MAX_GROUP:
                return False
            if t == EMPTY:
                return idx[x] > 0 and self.empty  # a king already at the bottom changes nothing
            return loc[t] != i and self.clear(t)
        if a < BACK:
            c = a - UP
            return self.clear(c) and self.found[c // 13] == c % 13
        c, t = (a - BACK) // 53, (a - BACK) % 53
        return self.found[c // 13] == c % 13 + 1 and self.target_ok(t)

    # -- sets of actions -----------------------------------------------------

    def every_action(self) -> list[int]:
        """Every action there is, whether it can be made now or not."""
        out: list[int] = []
        for c in range(52):
            self.leaving(c, out)
            self.backs(c, out)
        return out

    def leaving(self, d: int, out: list[int]) -> None:
        """Every action taking card ``d`` off its place."""
        for t in self.targets[d]:
            out.append(d * 53 + t)
        if d % 13 == 12:
            out.append(d * 53 + EMPTY)
        out.append(UP + d)

    def backs(self, c: int, out: list[int]) -> None:
        """Every take-back of card ``c``."""
        for t in self.targets[c]:
            out.append(BACK + c * 53 + t)
        if c % 13 == 12:
            out.append(BACK + c * 53 + EMPTY)

    def onto_target(self, t: int, out: list[int]) -> None:
        """Every action needing target ``t`` free (a card, or an empty column) or taking ``t`` up;
        and, for a card, every move of a group ``t`` would belong to (it grows: ``MAX_GROUP``)."""
        if t == EMPTY:
            for k in (12, 25, 38, 51):
                out.append(k * 53 + EMPTY)
                out.append(BACK + k * 53 + EMPTY)
            return
        for y in self.onto[t]:
            out.append(y * 53 + t)
            out.append(BACK + y * 53 + t)
        out.append(UP + t)
        i = self.loc[t]
        col = self.cols[i]
        for p in range(self.down[i], self.idx[t] + 1):
            self.leaving(col[p], out)

    def making_free(self, t: int, out: list[int]) -> None:
        """Every action that makes target ``t`` free when it is not (one must come first)."""
        if t == EMPTY:
            for b in self.bottoms:
                if b % 13 == 12:
                    out.append(UP + b)
                else:
                    self.leaving(b, out)
        elif self.loc[t] < 0:
            self.backs(t, out)
        else:
            self.leaving(self.above[t], out)

    def interfering(self, a: int, out: list[int]) -> None:
        """Every action that may not commute with ``a`` (which can be made now)."""
        if a < UP:
            x, t = a // 53, a % 53
            self.leaving(x, out)
            self.backs(x, out)
            self.onto_target(t, out)
        elif a < BACK:
            c = a - UP
            self.leaving(c, out)
            self.backs(c, out)
            if c % 13:
                self.backs(c - 1, out)
            for y in self.onto[c]:
                out.append(y * 53 + c)
                out.append(BACK + y * 53 + c)
        else:
            c, t = (a - BACK) // 53, (a - BACK) % 53
            self.leaving(c, out)
            self.backs(c, out)
            if c % 13 < 12:
                out.append(UP + c + 1)
            self.onto_target(t, out)

    def enabling(self, a: int) -> list[list[int]]:
        """For ``a``, which cannot be made now: one list per missing condition, of the actions
        that make it true (every winning line that makes ``a`` makes one of each list first)."""
        loc, idx = self.loc, self.idx
        alts: list[list[int]] = []
        if a < UP:
            x, t = a // 53, a % 53
            out: list[int] = []
            i = loc[x]
            if i < 0:
                self.backs(x, out)
                return [out]
            col = self.cols[i]
            if t == EMPTY and idx[x] == 0:
                return [out]  # not an action: nothing makes it
            if idx[x] < self.down[i]:
                self.leaving(self.above[x], out)
                alts.append(out)
                out = []
            if len(col) - idx[x] > MAX_GROUP:
                for p in range(idx[x] + 1, len(col)):
                    self.leaving(col[p], out)
                alts.append(out)
                out = []
            if t != EMPTY and loc[t] == i and idx[t] > idx[x]:
                for p in range(idx[x] + 1, idx[t] + 1):  # t must leave x's group first
                    self.leaving(col[p], out)
                alts.append(out)
                out = []
            if not self.target_ok(t):
                self.making_free(t, out)
                alts.append(out)
            return alts
        if a < BACK:
            c = a - UP
            out = []
            if loc[c] < 0:
                self.backs(c, out)
                return [out]
            if self.found[c // 13] < c % 13:
                alts.append([UP + c - 1])
            if self.above[c] != NO_CARD:
                self.leaving(self.above[c], out)
                alts.append(out)
            return alts
        c, t = (a - BACK) // 53, (a - BACK) % 53
        f = self.found[c // 13]
        if f < c % 13 + 1:
            alts.append([UP + c])
        elif f > c % 13 + 1:
            out = []
            self.backs(c // 13 * 13 + f - 1, out)
            alts.append(out)
        if not self.target_ok(t):
            out = []
            self.making_free(t, out)
            alts.append(out)
        return alts

    def grow(self, landmark: list[int], best: int) -> list[int] | None:
        """The actions that can be made now of the stubborn set grown from ``landmark``, or None
        as soon as it holds ``best`` or more of them."""
        self.stamp += 1
        stamp, mark = self.stamp, self.mark
        work: list[int] = []
        for a in landmark:
            if mark[a] != stamp:
                mark[a] = stamp
                work.append(a)
        now: list[int] = []
        more: list[int] = []
        while work:
            a = work.pop()
            if self.applicable(a):
                now.append(a)
                if len(now) >= best:
                    return None
                more.clear()
                self.interfering(a, more)
            else:
                alts = self.enabling(a)
                if not alts:
                    raise AssertionError(f"action {a} can be made")  # applicable() and enabling() disagree
                more = alts[0]
                fewest = len(more) + 1
                for alt in alts:
                    new = 0
                    for b in alt:
                        if mark[b] != stamp:
                            new += 1
                    if new < fewest:
                        more, fewest = alt, new
                more = more[:]
            for b in more:
                if mark[b] != stamp:
                    mark[b] = stamp
                    work.append(b)
        return now

    def smallest(self) -> list[int]:
        """The actions that can be made now of the smallest stubborn set found, trying every
        landmark of the two kinds. None at all: the position is lost."""
        best: list[int] | None = None
        size = N_ACTIONS
        landmarks: list[list[int]] = []
        for s in range(4):
            if self.found[s] < 13:
                landmarks.append([UP + s * 13 + self.found[s]])
        for col in self.cols:
            for p in range(len(col) - 1):
                out: list[int] = []
                self.leaving(col[p + 1], out)
                landmarks.append(out)
        for landmark in landmarks:
            now = self.grow(landmark, size)
            if now is not None:
                best, size = now, len(now)
                if size <= 1:
                    break
        assert best is not None
        return best


def never_up(state: Any, targets: tuple[tuple[int, ...], ...]) -> bool:
    """Whether some column card can never go up. The actions no line can ever make are a greatest
    fixed point: one that cannot be made now stays in it while some condition it lacks is made
    true only by actions in it (the first of them ever made would need one of them made before)."""
    sets = Stubborn(state.cols, state.down, state.found, state.loc, state.above, state.onto,
                    targets, [0] * N_ACTIONS, 0)
    actions = sets.every_action()
    possible = {a for a in actions if sets.applicable(a)}
    pending = {a: sets.enabling(a) for a in actions if a not in possible}
    changed = True
    while changed:
        changed = False
        for a, conditions in list(pending.items()):
            if all(any(b in possible for b in makers) for makers in conditions):
                possible.add(a)
                del pending[a]
                changed = True
    return any(state.loc[c] >= 0 and UP + c not in possible for c in range(52))


def stubborn_moves(state: Any, targets: tuple[tuple[int, ...], ...], marks: list[int], stamp: list[int]
                   ) -> list[tuple[int, ...]]:
    """The state's moves that are in the smallest stubborn set found (none: the position is lost)."""
    moves: list[tuple[int, ...]] = state.moves()
    if len(moves) < 2:
        return moves
    cols = state.cols
    sets = Stubborn(cols, state.down, state.found, state.loc, state.above, state.onto, targets,
                    marks, stamp[0])
    keep = set(sets.smallest())
    stamp[0] = sets.stamp
    out = []
    for m in moves:
        kind, card, b = m[0], m[4], m[3]
        if kind == MOVE_UP:
            action = UP + card
        else:
            dst = cols[b]
            action = card * 53 + (dst[-1] if dst else EMPTY) + (BACK if kind == MOVE_BACK else 0)
        if action in keep:
            out.append(m)
    return out


def search(code: str, max_nodes: int, *, stubborn: bool = False, never: bool = False) -> tuple[Any, list[int]]:
    """The solver's depth-first search on ``code``: with ``stubborn``, the stubborn sets' moves only
    and without the "same card twice" rules (their proof needs every move of the positions up the
    line tried), and with ``never``, :func:`never_up` after the stuck-card test. Its outcome, and
    the positions dropped by each test and those expanded."""
    from engine.solver.search import depth_first

    state: Any = state_for(Game.from_code(code).position)
    targets = targets_of(state)
    marks, stamp = [0] * N_ACTIONS, [0]
    counts = [0, 0, 0]
    fresh = iter(range(-1, -(1 << 62), -2))

    class Tried:
        def __getattr__(self, name: str) -> Any:
            return getattr(state, name)

        def dead(self) -> bool:
            which = 0 if state.dead() else 1 if never and never_up(state, targets) else 2
            counts[which] += 1
            return which < 2

        def moves(self) -> list[tuple[int, ...]]:
            return stubborn_moves(state, targets, marks, stamp) if stubborn else state.moves()

        def places(self, m: tuple[int, ...]) -> tuple[int, int, int]:
            if not stubborn:
                return state.places(m)  # type: ignore[no-any-return]
            return m[4], next(fresh), next(fresh)  # places that never match: no "same card" rule fires

    return depth_first(Tried(), max_nodes=max_nodes, deadline=None, max_table=10**8), counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("codes", nargs="+")
    parser.add_argument("--nodes", type=int, default=3_000_000)
    parser.add_argument("--never", action="store_true", help="the second dead-end test instead")
    args = parser.parse_args()
    runs = (("never_up", {"never": True}),) if args.never else (
        ("every move", {}), ("stubborn", {"stubborn": True}))
    for code in args.codes:
        for name, options in runs:
            started = time.process_time()
            out, (stuck, never, expanded) = search(code, args.nodes, **options)
            print(f"{code} {name:10s} {out.end:9s} {out.nodes:>9,} nodes; dropped by the stuck-card test {stuck:,}, "
                  f"by never_up {never:,}; expanded {expanded:,}; {time.process_time() - started:.1f} CPU s",
                  flush=True)


if __name__ == "__main__":
    main()
