"""The solver's own mutable Yukon state: small integers, make/unmake, a canonical key.

Cards are integers ``suit * 13 + rank - 1`` (the engine's ``Card.index``).
A move is a tuple ``(kind, source, start, target, card, score)``:

* ``GROUP`` (0): the group from ``cols[source][start]`` up onto column ``target``;
* ``UP`` (1): the top card of column ``source`` onto its foundation;
* ``BACK`` (2): the top card of foundation ``source`` (a suit) back onto column ``target``.

``score`` only orders the moves (higher first). Nothing here reads or writes
files; the search lives in :mod:`engine.solver.search`.
"""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, Final, final

from ..cards import RANK_CHARS, SUIT_CHARS
from ..position import Position
from .state import CardValue, Places, SearchSettings, SolverMove, Weights

if TYPE_CHECKING:  # (for the type checker and mypyc only: nothing is imported at run time)
    from mypy_extensions import i64

#: move kinds (Final: compiled, a constant, not a module lookup in every move)
GROUP: Final = 0
UP: Final = 1
BACK: Final = 2
#: weights of :meth:`YukonState.estimate` (face-down cards, unbuilt face-up cards, cards on
#: face-down ones); the first is the default. Each wins classic deals the others do not, so
#: the beams try them in turn (how they were chosen: docs/CHANGELOG.md).
STYLES = ((4, 2, 1), (4, 2, 0), (4, 8, 0), (4, 0, 0))
#: the beam portfolio for classic deals: (weights, part of the beam share)
PORTFOLIO = ((STYLES[0], 4), (STYLES[1], 1), (STYLES[3], 1), (STYLES[2], 1))
#: the beam searches' share of the budgets for classic deals, and at most this many positions:
#: the rest goes to the complete search, which decides lost deals (docs/winnability.md)
CLASSIC_BEAM_SHARE = 0.4
CLASSIC_BEAM_CAP = 150_000
#: widths of the beam searches before the complete search (they find most wins of classic
#: deals far sooner; starting at 5, not 10, the easy deals cost a third less: docs/CHANGELOG.md)
BEAM_WIDTHS = (5, 15, 50, 150, 500, 1000)
#: what an ``unwinnable`` answer covers (engine.solver.coverage_for)
COVERED_MOVES = (
    "column to column: every group of up to 20 face-up cards whose bottom card fits",
    "column to foundation",
    "foundation to column (take-backs)",
)
REDUCTIONS = (
    "positions where some card can never leave the card it lies on are dropped as lost: every place it could "
    "go is buried for good, it cannot go up to its foundation, and no column can empty for a king "
    "(stuck cards, proved in docs/winnability.md)",
    "a card counts as never going up when a stuck card lies right on it, or a lower card of its suit never goes "
    "up, so a card waiting for it is stuck too (buried cards, proved in docs/winnability.md)",
)
#: classic deals the beams leave undecided are mostly lost, and depth-first examines positions
#: about twice as fast as best-first, so it wins or exhausts more of them within the rest
CLASSIC_SETTINGS = SearchSettings(
    styles=PORTFOLIO,
    beam_widths=BEAM_WIDTHS,
    beam_share=CLASSIC_BEAM_SHARE,
    beam_cap=CLASSIC_BEAM_CAP,
    complete_search="depth",
    covered_moves=COVERED_MOVES,
    reductions=REDUCTIONS,
)
#: relaxed beams leave take-backs out (``lean_moves``): they win the same deals with fewer positions
RELAXED_SETTINGS = SearchSettings(
    styles=((STYLES[0], 1),),
    beam_widths=BEAM_WIDTHS,
    lean_beams=True,
    covered_moves=COVERED_MOVES,
    reductions=REDUCTIONS,
)
FOUNDATION: Final = 100  # "place" number of a foundation, beside column numbers 0 … 6
TERMS_CAP: Final = 1 << 16  # columns whose estimate terms are remembered (a few MB), then forgotten
MAX_GROUP: Final = 20
ALL_CARDS: Final = (1 << 52) - 1  # the bit mask of every card (YukonState.dead)
NO_CARD: Final = 52  # "no card" in YukonState.dead's tables
#: ``NO_CARD_BIT >> NO_CARD - c`` is card ``c``'s bit: mypyc writes ``1 << c`` with a 32-bit 1
NO_CARD_BIT: Final = 1 << NO_CARD
#: ``_HEADS[n << 3 | d]``: the first two bytes of the key of a column of ``n`` cards, ``d`` of them face down,
#: made once (mypyc builds ``bytes((n, d))`` by a generic call)
_HEADS: Final = tuple(bytes((n, d)) for n in range(53) for d in range(8))
#: where a column key's cards start, after its length and face-down count (:func:`_column_key`)
_KEY_CARDS: Final = 2
#: ``_BYTE[c]``: card ``c`` as the one byte of a column key
_BYTE: Final = tuple(bytes((c,)) for c in range(52))
#: ``_UP_TO[14 * s + f]``: the bit mask of the ``f`` lowest cards of suit ``s`` (up when its foundation is at ``f``)
_UP_TO: Final = tuple(((1 << f) - 1) << 13 * s for s in range(4) for f in range(14))


def card_text(card: int) -> str:
    return RANK_CHARS[card % 13] + SUIT_CHARS[card // 13]


class YukonState:
    """A Yukon position the search changes in place and changes back."""

    __slots__ = (
        "cols", "down", "found", "loc", "colkey", "onto", "targets", "relaxed", "placed", "fits", "_terms", "_saved",
        "above", "below",
    )

    n_cards = 52

    def __init__(self, pos: Position, *, relaxed: bool) -> None:
        self.relaxed = relaxed
        #: onto[t]: the cards that may be put onto a face-up ``t``; targets[g]: the cards ``g``
        #: may be put onto, as a bit mask (bit ``t``); fits[g * 52 + t]: whether ``g`` may be put onto ``t``
        self.onto, self.targets, self.fits = _build_tables(self.relaxed)
        #: each column's terms of the estimate by its key (:meth:`estimate`), up to TERMS_CAP columns
        self._terms: dict[bytes, int] = {}
        self.decode(b"".join(_column_key([c.index for c in col], d) for col, d in zip(pos.columns, pos.down)))

    # -- facts ---------------------------------------------------------

    def won(self) -> bool:
        return self.placed == 52

    def key(self) -> bytes:
        """Columns sorted (their order does not matter to the rules); the
        foundations follow from the cards left on the columns."""
        return b"".join(sorted(self.colkey))

    def encode(self) -> bytes:
        """Everything needed to :meth:`decode` this position again (columns in order)."""
        return b"".join(self.colkey)

    def decode(self, data: bytes) -> None:
        """The columns, their keys (sliced from ``data``: it is the keys in a row), the
        foundations (every card not on a column is up), each card's column (``loc``) and
        its neighbours: ``above[c]``, ``below[c]``, the card right above and right below column
        card ``c`` (NO_CARD: none), kept by every move for :meth:`dead` (entry NO_CARD is
        written freely and never read). :meth:`undo` puts back the column keys each
        :meth:`do` replaced (``_saved``; moves are undone last first)."""
        cols, down, colkey, loc = [], [], [], [-1] * 52
        above, below = [NO_CARD] * 53, [NO_CARD] * 53
        on: i64 = 0  # the column cards of each suit, 6 bits a suit (compiled: no list item to box)
        at = 0
        c: i64
        for i in range(7):
            end = at + _KEY_CARDS + data[at]
            colkey.append(data[at:end])
            down.append(data[at + 1])
            col: list[CardValue] = []
            prev = NO_CARD
            for p in range(at + _KEY_CARDS, end):  # (not list(data[…]): compiled, a generic call)
                c = data[p]
                col.append(c)
                loc[c] = i
                on += 1 << 6 * (c // 13)
                above[prev] = c
                below[c] = prev
                prev = c
            cols.append(col)
            at = end
        self.cols, self.down, self.loc, self.colkey = cols, down, loc, colkey
        self.above, self.below = above, below
        self._saved: list[bytes] = []
        self.found = [13 - (on & 63), 13 - (on >> 6 & 63), 13 - (on >> 12 & 63), 13 - (on >> 18)]
        self.placed = 52 + 7 * _KEY_CARDS - len(data)  # (data: a byte per column card, and a head per column)

    def estimate(self, weights: Weights | None = None) -> int:
        """Lower is closer to a win, weighed by ``weights`` (default ``STYLES[0]``):
        face-down cards, cards not yet up, face-up cards not built on the card
        below them (each needs at least one more move), and face-up cards lying
        on face-down ones (they must all move before those turn up). Each column's
        three counts depend on the column alone, so they are remembered by its key."""
        w_down, w_break, w_cover = weights or STYLES[0]
        terms = self._terms
        total = 0
        for k in self.colkey:
            t = terms.get(k)
            if t is None:
                t = self._column_terms(k)
                if len(terms) >= TERMS_CAP:
                    terms.clear()
                terms[k] = t
            total += t
        # the sums fit their fields: at most 21 face-down cards and 52 covers or breaks
        down, covers, breaks = total & 63, (total >> 6) & 63, total >> 12
        return w_down * down + 52 - self.placed + w_break * breaks + w_cover * covers

    def _column_terms(self, k: bytes) -> int:
        """A column's face-down cards, covers and breaks (see :meth:`estimate`), packed into
        one number (6 bits each, breaks highest) from its key (:func:`_column_key`)."""
        n, d = k[0], k[1]
        fits = self.fits
        breaks = 0
        for p in range(d + 3, n + 2):
            if not fits[k[p] * 52 + k[p - 1]]:
                breaks += 1
        return d + ((n - d if d else 0) << 6) + (breaks << 12)

    # -- safe foundation moves -----------------------------------------

    def auto_move(self) -> SolverMove | None:
        """A foundation move that provably loses nothing (docs/winnability.md), or None.

        Classic: rank ≤ both opposite-colour foundations + 1 and ≤ the other
        same-colour foundation + 2. Relaxed: rank ≤ every other foundation + 1.
        """
        found = self.found
        ok = _safe_suits(found[0], found[1], found[2], found[3], self.relaxed)
        if not ok:
            return None
        suit_of, rank_of = _SUIT, _RANK
        for i, col in enumerate(self.cols):
            if not col:
                continue
            c = col[-1]
            suit = suit_of[c]
            if ok >> suit & 1 and found[suit] == rank_of[c]:
                return (UP, i, len(col) - 1, FOUNDATION, c, 0)
        return None

    # -- dead ends -------------------------------------------------------

    def dead(self) -> bool:
        """Whether some card can provably never leave its place ("stuck cards"): then the
        position is lost. A greatest fixed point over held and glued cards, let out
        through a worklist; docs/winnability.md ("Computing the stuck-card test") says how.
        Sets of cards are bit masks (bit ``c``): machine words when compiled."""
        # may_empty: a column is or may become empty (the king's own one too: the king may
        # leave it on top of the card below it and come back to it alone)
        held, free, downs, may_empty = _column_facts(self.cols, self.down, self.found)
        return _glued_left(self.colkey, self.found[:], held, free, downs, may_empty, 52 - self.placed,
                           self.targets, self.onto, self.above, self.below)

    # -- moves -----------------------------------------------------------

    def moves(self) -> list[SolverMove]:
        """Every legal move (symmetric duplicates left out), best first."""
        cols, down, loc, found = self.cols, self.down, self.loc, self.found
        out: list[SolverMove] = []
        empty = -1
        for j in range(7):
            if not cols[j]:
                empty = j
                break
        for j in range(7):
            dst = cols[j]
            if not dst:
                continue
            t = dst[-1]
            for g in self.onto[t]:
                i = loc[g]
                if i < 0 or i == j:
                    continue
                src = cols[i]
                start = src.index(g)
                d = down[i]
                if start < d or len(src) - start > MAX_GROUP:
                    continue
                out.append((GROUP, i, start, j, g, self._score(i, start, g)))
        if empty >= 0:
            for g in (12, 25, 38, 51):  # kings
                i = loc[g]
                if i < 0:
                    continue
                src = cols[i]
                start = src.index(g)
                if start == 0 or start < down[i] or len(src) - start > MAX_GROUP:
                    continue
                out.append((GROUP, i, start, empty, g, self._score(i, start, g) - 5))
        for i in range(7):
            src = cols[i]
            if src:
                c = src[-1]
                if found[c // 13] == c % 13:
                    sc = 1000 + (50 if len(src) - 1 == down[i] and down[i] else 0)
                    out.append((UP, i, len(src) - 1, FOUNDATION, c, sc))
        f0, f1, f2, f3, relaxed = found[0], found[1], found[2], found[3], self.relaxed
        for s in range(4):
            level = found[s]
            if not level:
                continue
            # a card that would go straight back up: the position after is this one (docs/winnability.md)
            if _safe_suits(f0 - (s == 0), f1 - (s == 1), f2 - (s == 2), f3 - (s == 3), relaxed) >> s & 1:
                continue
            f = s * 13 + level - 1
            for j in range(7):
                dst = cols[j]
                if dst:
                    if self.fits[f * 52 + dst[-1]]:
                        out.append((BACK, s, level - 1, j, f, -1000))
                elif j == empty and level == 13:
                    out.append((BACK, s, level - 1, j, f, -1000))
        out.sort(key=_BY_SCORE, reverse=True)
        return out

    def lean_moves(self) -> list[SolverMove]:
        """The moves a beam tries: :meth:`moves` but take-backs. A beam proves nothing, so it
        may leave out moves; a complete search never does."""
        return [m for m in self.moves() if m[0] != BACK]

    def _score(self, i: int, start: int, g: int) -> int:
        d = self.down[i]
        src = self.cols[i]
        if start == d and d:
            return 500 + 10 * d  # turns a face-down card up
        if start == 0:
            return 200  # empties a column
        below = src[start - 1]
        if self.fits[g * 52 + below]:
            return -100  # leaves one good place for another
        return 100 - len(src) + start

    # -- make / unmake -------------------------------------------------

    def do(self, m: SolverMove) -> bool:
        """Apply a move; return whether it turned a face-down card up."""
        kind, a, start, b, card, _ = m
        cols, loc, colkey, saved, above, below = self.cols, self.loc, self.colkey, self._saved, self.above, self.below
        flip = False
        if kind == GROUP:
            src, dst = cols[a], cols[b]
            under = src[start - 1] if start else NO_CARD
            onto = dst[-1] if dst else NO_CARD
            above[under] = NO_CARD
            above[onto] = card
            below[card] = onto
            if start == len(src) - 1:
                dst.append(src.pop())
                loc[card] = b
            else:
                group = src[start:]
                dst.extend(group)
                for c in group:  # (pops, not del src[start:]: compiled, a slice deletion is a generic call)
                    loc[c] = b
                    src.pop()
            if start and start == self.down[a]:
                self.down[a] -= 1
                flip = True
            key_a, key_b = colkey[a], colkey[b]
            saved.append(key_a)
            saved.append(key_b)
            colkey[a] = _key_cut(key_a, start, self.down[a])
            colkey[b] = _key_grown(key_b, self.down[b], key_a[_KEY_CARDS + start :])
        elif kind == UP:
            src = cols[a]
            src.pop()
            above[src[-1] if src else NO_CARD] = NO_CARD
            below[card] = NO_CARD
            loc[card] = -1
            self.found[card // 13] += 1
            self.placed += 1
            if start and start == self.down[a]:
                self.down[a] -= 1
                flip = True
            key_a = colkey[a]
            saved.append(key_a)
            colkey[a] = _key_cut(key_a, start, self.down[a])
        else:
            self.found[a] -= 1
            self.placed -= 1
            dst = cols[b]
            onto = dst[-1] if dst else NO_CARD
            above[onto] = card
            below[card] = onto
            dst.append(card)
            loc[card] = b
            key_b = colkey[b]
            saved.append(key_b)
            colkey[b] = _key_grown(key_b, self.down[b], _BYTE[card])
        return flip

    def undo(self, m: SolverMove, flip: bool) -> None:
        """Take back ``m``, the last move made and not yet undone (``flip``: what :meth:`do` returned)."""
        kind, a, start, b, card, _ = m
        cols, loc, colkey, saved, above, below = self.cols, self.loc, self.colkey, self._saved, self.above, self.below
        if kind == GROUP:
            if flip:
                self.down[a] += 1
            src, dst = cols[a], cols[b]
            under = src[-1] if src else NO_CARD
            above[below[card]] = NO_CARD
            above[under] = card
            below[card] = under
            count = len(dst) - dst.index(card)
            if count == 1:
                src.append(dst.pop())
                loc[card] = a
            else:
                group = dst[-count:]
                src.extend(group)
                for c in group:  # (pops: see do)
                    loc[c] = a
                    dst.pop()
            colkey[b] = saved.pop()
            colkey[a] = saved.pop()
        elif kind == UP:
            if flip:
                self.down[a] += 1
            src = cols[a]
            under = src[-1] if src else NO_CARD
            above[under] = card
            below[card] = under
            src.append(card)
            loc[card] = a
            self.found[card // 13] -= 1
            self.placed -= 1
            colkey[a] = saved.pop()
        else:
            cols[b].pop()
            above[below[card]] = NO_CARD
            below[card] = NO_CARD
            loc[card] = -1
            self.found[a] += 1
            self.placed += 1
            colkey[b] = saved.pop()

    # -- text ------------------------------------------------------------

    @staticmethod
    def action_text(m: SolverMove) -> str:
        kind, a, _, b, card, _ = m
        if kind == GROUP:
            return f"T{a + 1}:{card_text(card)}>T{b + 1}"
        if kind == UP:
            return f"T{a + 1}:{card_text(card)}>F{card // 13 + 1}"
        return f"F{a + 1}:{card_text(card)}>T{b + 1}"

    @staticmethod
    def between_columns(m: SolverMove) -> bool:
        """Group moves: they change no foundation, and whether and how one can be made depends on
        its two columns alone, not on the foundations (docs/winnability.md, "A card taken back
        across one move")."""
        return m[0] == GROUP

    @staticmethod
    def places(m: SolverMove) -> Places:
        """(the card moved, where it came from, where it went): column numbers or FOUNDATION."""
        kind, a, _, b, card, _ = m
        if kind == GROUP:
            return card, a, b
        if kind == UP:
            return card, a, FOUNDATION
        return card, FOUNDATION, b


def _safe_suits(s0: int, s1: int, s2: int, s3: int, relaxed: bool) -> int:
    """Bit ``s`` set: with the foundations at these heights, the next card of suit ``s`` goes up
    safely (the theorem in docs/winnability.md; the conditions read the foundations only)."""
    if relaxed:
        low = min(s0, s1, s2, s3)
        return (s0 == low) | (s1 == low) << 1 | (s2 == low) << 2 | (s3 == low) << 3
    # suits S H D C: colours black red red black
    return ((s3 >= s0 - 1 and s1 >= s0 and s2 >= s0)
            | (s2 >= s1 - 1 and s0 >= s1 and s3 >= s1) << 1
            | (s1 >= s2 - 1 and s0 >= s2 and s3 >= s2) << 2
            | (s0 >= s3 - 1 and s1 >= s3 and s2 >= s3) << 3)


def _column_facts(cols: list[list[CardValue]], down: list[int], found: list[int]
                  ) -> tuple[i64, i64, i64, bool]:
    """The starting sets of :meth:`YukonState.dead`, as bit masks: ``held`` (every column card:
    every card not up), ``free`` (a card may be put on it: a foundation card, or a column's top
    card) and the face-down cards; then whether a column is empty."""
    held: i64 = ALL_CARDS ^ (_UP_TO[found[0]] | _UP_TO[14 + found[1]] | _UP_TO[28 + found[2]]
                             | _UP_TO[42 + found[3]])
    downs: i64 = 0
    tops: i64 = 0
    empty = False
    for i in range(7):
        col = cols[i]
        if not col:
            empty = True
            continue
        for p in range(down[i]):
            downs |= NO_CARD_BIT >> NO_CARD - col[p]
        tops |= NO_CARD_BIT >> NO_CARD - col[-1]
    return held, ALL_CARDS ^ held | tops, downs, empty


def _glued_left(keys: list[bytes], lowest: list[int], held: i64, free: i64, downs: i64, may_empty: bool,
                stuck: int, targets: tuple[int, ...], onto: tuple[tuple[int, ...], ...], above: list[int],
                below: list[int]) -> bool:
    """The worklist of :meth:`YukonState.dead` from its starting sets: whether a card stays glued.
    The worklist holds first each column's cards top down, read from its key (a card turns up
    once the one above it leaves), then the cards put back on it (:attr:`_Glue.work`)."""
    glue = _Glue(lowest, held, free, downs, may_empty, stuck, targets, onto, above, below)
    first = _KEY_CARDS  # (a local, not a name looked up a card)
    for col in range(7):
        key = keys[col]
        for p in range(len(key) - 1, first - 1, -1):
            if glue.take(key[p]):
                return False
    work = glue.work
    taken = 0
    while taken < len(work):
        c = work[taken]
        taken += 1
        if glue.take(c):
            return False
    return glue.glued != 0  # a glued card never goes up


@final
class _Glue:
    """The sets of :meth:`YukonState.dead`'s fixed point while its worklist runs, as bit masks,
    and what each card taken off the worklist does to them. ``lowest[s]``: the lowest rank of
    suit ``s`` that may never go up (13: none), a card still glued or with a glued card right
    above it ("buried"); ``stuck``: the cards still glued (at none the position is not lost,
    whatever is left to do)."""

    __slots__ = ("lowest", "glued", "queued", "held", "free", "downs", "may_empty", "stuck", "targets", "onto",
                 "above", "below", "work")

    def __init__(self, lowest: list[int], held: i64, free: i64, downs: i64, may_empty: bool, stuck: int,
                 targets: tuple[int, ...], onto: tuple[tuple[int, ...], ...], above: list[int],
                 below: list[int]) -> None:
        self.lowest = lowest
        self.glued: i64 = held  # bit NO_CARD is never set
        # cards on the worklist not yet taken: a card goes on it again only once taken, and only while glued
        self.queued: i64 = held
        self.held: i64 = held
        self.free: i64 = free
        self.downs: i64 = downs
        self.may_empty = may_empty
        self.stuck = stuck
        self.targets = targets
        self.onto = onto
        self.above = above
        self.below = below
        #: the cards put back on the worklist, in order (those before ``taken`` are taken)
        self.work: list[CardValue] = []

    def take(self, c: i64) -> bool:
        """Take card ``c`` off the worklist: if it is glued, let it out when it may leave, and
        let it move when it may; whether no card is stuck any more."""
        self.queued ^= NO_CARD_BIT >> NO_CARD - c
        if not self.glued >> c & 1:
            return False
        a: i64 = self.above[c]  # a face-down card always has one
        face_down = self.downs >> c & 1 != 0
        if self._leaves(c, a, face_down):
            if self._let_out(c):
                return True
        elif not self._may_move(c, a, face_down):
            return False
        if self.held >> c & 1:
            self._release(c, a, face_down)
        return False

    def _leaves(self, c: i64, a: i64, face_down: bool) -> bool:
        """Whether glued card ``c`` (``a`` the card on it) has a way out once up."""
        if face_down and self.glued >> a & 1:
            return False  # it never turns up
        r: i64 = c % 13
        if self.lowest[c // 13] >= r and not self.glued >> a & 1:
            return True  # it can go up
        # a king: an empty column; another card: a card it builds on with nothing glued on it
        return self.may_empty if r == 12 else self.free & self.targets[c] != 0

    def _let_out(self, c: i64) -> bool:
        """Card ``c`` is glued no more: the cards that may leave because of it go back on the
        worklist; whether no card is stuck any more."""
        self.glued ^= NO_CARD_BIT >> NO_CARD - c
        self.stuck -= 1
        if not self.stuck:
            return True
        b: i64 = self.below[c]
        if b == NO_CARD:
            if not self.may_empty:
                self.may_empty = True
                for g in (12, 25, 38, 51):
                    self._enqueue(g)
        else:
            self._enqueue(b)  # b may turn up, or go up
            if not self.downs >> b & 1:
                self.free |= NO_CARD_BIT >> NO_CARD - b  # nothing glued on b any more
                for g in self.onto[b]:
                    self._enqueue(g)
        if self.lowest[c // 13] == c % 13:  # (checked here first: most cards leave no suit unburied)
            self._unburied(c)
        if b != NO_CARD and self.lowest[b // 13] == b % 13:
            self._unburied(b)
        return False

    def _may_move(self, c: i64, a: i64, face_down: bool) -> bool:
        """Whether held card ``c``, glued still, is held no more: face down, when the card on it
        (``a``) is not glued; face up, when it moves along with the card below it."""
        if not self.held >> c & 1:
            return False
        if face_down:
            return not self.glued >> a & 1  # else it never turns up
        b: i64 = self.below[c]
        return not (b == NO_CARD or self.downs >> b & 1 or self.held >> b & 1)

    def _release(self, c: i64, a: i64, face_down: bool) -> None:
        """Card ``c`` is held no more: the cards that may move because of it go back on the worklist."""
        self.held ^= NO_CARD_BIT >> NO_CARD - c
        if face_down:
            self.free |= NO_CARD_BIT >> NO_CARD - c  # may turn up, with nothing glued on it
            for g in self.onto[c]:
                self._enqueue(g)
        elif a != NO_CARD:
            self._enqueue(a)  # may move along with c

    def _enqueue(self, c: i64) -> None:
        """Put card ``c`` on the worklist if it is glued and not on it already."""
        bit: i64 = NO_CARD_BIT >> NO_CARD - c
        if self.glued & bit and not self.queued & bit:
            self.work.append(c)
            self.queued |= bit

    def _unburied(self, v: i64) -> None:
        """Card ``v`` is no longer buried: if it may go up now, so may the higher cards of its
        suit up to the next buried one (``lowest`` moves up, and those cards go back on the worklist)."""
        lowest, glued, above = self.lowest, self.glued, self.above
        s: i64 = v // 13
        r: i64 = v % 13
        if lowest[s] == r and not glued >> v & 1 and not glued >> above[v] & 1:
            q: i64 = r + 1
            while q < 13 and not glued >> (13 * s + q) & 1 and not glued >> above[13 * s + q] & 1:
                q += 1
            lowest[s] = q
            for k in range(13 * s + r + 1, 13 * s + min(q + 1, 13)):
                self._enqueue(k)


def _column_key(col: list[CardValue], down: int) -> bytes:
    """The key of a column of cards ``col``, ``down`` of them face down: its length, its
    face-down count, its cards, a byte each (what :meth:`YukonState.decode` reads back).
    A move makes its columns' new keys from the old ones' bytes instead (:func:`_key_cut`,
    :func:`_key_grown`): compiled, ``bytes(col)`` of a list is a generic call, several times a
    slice's cost."""
    return b"".join((_HEADS[len(col) << 3 | down], bytes(col)))


def _key_cut(key: bytes, n: int, down: int) -> bytes:
    """The key of column ``key`` cut down to its first ``n`` cards, ``down`` of them face down."""
    return b"".join((_HEADS[n << 3 | down], key[_KEY_CARDS : _KEY_CARDS + n]))


def _key_grown(key: bytes, down: int, cards: bytes) -> bytes:
    """The key of column ``key`` with ``cards`` (a byte each) put on top, ``down`` face down."""
    return b"".join((_HEADS[(len(key) - _KEY_CARDS + len(cards)) << 3 | down], key[_KEY_CARDS:], cards))


def _red(card: int) -> bool:
    return card // 13 in (1, 2)


@lru_cache(maxsize=2)
def _build_tables(relaxed: bool) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], bytes]:
    """What builds on what, for one rule set (built once, shared by every state of it):
    ``g`` goes onto ``t`` one rank higher, of the other colour unless ``relaxed``."""

    def builds(g: int, t: int) -> bool:
        return t % 13 == g % 13 + 1 and (relaxed or _red(g) != _red(t))

    onto = tuple(tuple(g for g in range(52) if builds(g, t)) for t in range(52))
    targets = tuple(sum(1 << t for t in range(52) if builds(g, t)) for g in range(52))
    fits = bytes(builds(g, t) for g in range(52) for t in range(52))
    return onto, targets, fits


#: a card's suit and rank - 1 (``divmod(card, 13)``), looked up in the inner loops
_SUIT: Final = tuple(c // 13 for c in range(52))
_RANK: Final = tuple(c % 13 for c in range(52))
#: a move's score (its last field), the key moves are sorted by: a C callable, cheaper than a function
_BY_SCORE: Final = itemgetter(5)
