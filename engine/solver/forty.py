"""The solver's own mutable Forty Thieves state: card values, make/unmake, a canonical key.

A card is its value ``suit * 13 + rank - 1``; the two copies of a card are the
same value, so positions that differ only by which copy lies where share one
key. A move is a tuple ``(kind, source, target, card, score)``:

* ``COL_COL`` (0) column ``source`` → column ``target``;  ``COL_UP`` (1) column → slot ``target``;
* ``WASTE_COL`` (2) waste → column ``target``;  ``WASTE_UP`` (3) waste → slot ``target``;
* ``BACK`` (4) slot ``source`` → column ``target`` (a take-back);  ``DRAW`` (5) stock → waste.

Foundation slots are 0 … 7 with suits ``S H D C S H D C``: the two slots of a
suit are interchangeable, so a card goes to the first one that accepts it and
only the first of two equal slots gives a take-back.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Final

from ..cards import RANK_CHARS, SUIT_CHARS
from ..position import Position
from .state import Places, SearchSettings, SolverMove, Weights

#: move kinds (Final: compiled, constants, not module lookups in every move)
COL_COL: Final = 0
COL_UP: Final = 1
WASTE_COL: Final = 2
WASTE_UP: Final = 3
BACK: Final = 4
DRAW: Final = 5
#: place numbers beside columns 0 … 9
WASTE: Final = 50
STOCK: Final = 60
SLOT: Final = 100
MEMO_CAP: Final = 1 << 18  # piles whose estimate counts are remembered (some 40 MB at most), then forgotten
#: beam searches before the complete one; best-first ties: the newest position first, a dive
#: toward a win (it wins more deals: docs/winnability.md)
SETTINGS = SearchSettings(
    beam_widths=(10, 30, 100, 300, 1000, 3000),
    newest_first=True,
    covered_moves=(
        "column to column",
        "column to foundation",
        "waste to column",
        "waste to foundation",
        "stock to waste (draw)",
        "foundation to column (take-backs)",
    ),
    reductions=("the two copies of a card are interchangeable, and so are the two foundations of a suit",),
)
#: ``_LENGTHS[n]``: the byte ``n`` (a column key's first), made once (mypyc builds ``bytes((n,))`` by a generic call)
_LENGTHS: Final = tuple(bytes((n,)) for n in range(105))
#: a move's score (its last field), the key moves are sorted by: a C callable, cheaper than a function
_BY_SCORE: Final = itemgetter(4)
UNBUILT_WEIGHT: Final = 1  # of a card not on its successor in suit, in the stage beams' estimate


def card_text(card: int) -> str:
    return RANK_CHARS[card % 13] + SUIT_CHARS[card // 13]


class FortyState:
    """A Forty Thieves position the search changes in place and changes back."""

    __slots__ = ("cols", "n_stock", "waste", "found", "colkey", "placed", "_deck_stock", "_memo")

    n_cards = 104

    def __init__(self, pos: Position) -> None:
        self.cols = [[c.index for c in col] for col in pos.columns]
        # the stock only shrinks from its end: its cards are the first n_stock of the deal's (next to draw last)
        self._deck_stock = tuple(c.index for c in pos.stock)
        self.n_stock = len(self._deck_stock)
        self.waste = [c.index for c in pos.waste]
        self.found = [len(f) for f in pos.foundations]
        self.colkey = [self._colkey(i) for i in range(10)]
        self.placed = sum(self.found)
        self._memo: dict[bytes, tuple[int, int]] = {}  # a pile's bytes -> its counts (_pile_counts)

    def _colkey(self, i: int) -> bytes:
        """Column ``i``'s key: its length, then its cards, a byte each."""
        col = self.cols[i]
        return b"".join((_LENGTHS[len(col)], bytes(col)))

    def stage(self) -> int:
        """Cards left in the stock: no move adds one (engine.solver.search.stage_beam)."""
        return self.n_stock

    def won(self) -> bool:
        return self.placed == 104

    def key(self) -> bytes:
        """Stock size, waste, and the columns sorted; the foundations follow
        from the cards that are left (two copies of a card are one value)."""
        return b"".join((bytes([self.n_stock, len(self.waste)]), bytes(self.waste), *sorted(self.colkey)))

    def encode(self) -> bytes:
        """Everything needed to :meth:`decode` this position again (slots and columns in order)."""
        return b"".join((bytes(self.found), bytes([self.n_stock, len(self.waste)]), bytes(self.waste), *self.colkey))

    def decode(self, data: bytes) -> None:
        self.found = list(data[:8])
        self.n_stock, n_waste = data[8], data[9]
        at = 10 + n_waste
        self.waste = list(data[10:at])
        cols = []
        colkey = []
        for _ in range(10):
            end = at + 1 + data[at]
            colkey.append(data[at:end])
            cols.append(list(data[at + 1 : end]))
            at = end
        self.cols = cols
        self.colkey = colkey
        self.placed = sum(self.found)

    def estimate(self, weights: Weights | None = None) -> int:
        """Lower is closer to a win: cards not yet up, plus, for every card of a
        column or the waste, one if a lower card lies beneath it (it must move
        before that card can go up) and one more if that lower card is of its own
        suit (then it cannot go up first either)."""
        return 104 - self.placed + self._piles()[0]

    def stage_estimate(self) -> int:
        """The estimate :func:`~engine.solver.search.stage_beam` ranks by: :meth:`estimate`
        plus ``UNBUILT_WEIGHT`` for every card of a pile that does not lie on the
        next higher card of its suit (a column's bottom card excepted). Among
        positions with the same stock it prefers built sequences and a short
        waste; measured, it wins deals the plain estimate's stage beams miss, and
        the depth beams keep the plain one, so the two kinds of beam differ more."""
        blocked, unbuilt = self._piles()
        return 104 - self.placed + blocked + UNBUILT_WEIGHT * unbuilt

    def _piles(self) -> tuple[int, int]:
        """(blocked, unbuilt) summed over the columns and the waste (:func:`_pile_counts`).
        A pile's counts depend on its cards alone, so they are remembered by the
        pile's bytes: most piles recur many times in a search."""
        memo = self._memo
        blocked, unbuilt = _remembered(memo, b"".join((_LENGTHS[len(self.waste)], bytes(self.waste))))
        for pile in self.colkey:
            counts = _remembered(memo, pile)
            blocked += counts[0]
            unbuilt += counts[1]
        return blocked, unbuilt

    # -- safe foundation moves -----------------------------------------

    def auto_move(self) -> SolverMove | None:
        """A foundation move that provably loses nothing (docs/winnability.md):
        the card goes onto the lower of its suit's two foundations."""
        found, cols = self.found, self.cols
        for i in range(10):
            col = cols[i]
            if col:
                slot = _safe_slot(found, col[-1])
                if slot >= 0:
                    return (COL_UP, i, slot, col[-1], 0)
        if self.waste:
            c = self.waste[-1]
            slot = _safe_slot(found, c)
            if slot >= 0:
                return (WASTE_UP, WASTE, slot, c, 0)
        return None

    def dead(self) -> bool:
        """No dead-end test for Forty Thieves (an empty column takes any card)."""
        return False

    # -- moves -----------------------------------------------------------

    def moves(self) -> list[SolverMove]:
        cols, found = self.cols, self.found
        out: list[SolverMove] = []
        empty = -1
        # onto[v]: the columns whose top card is of value v, as bits (column j: bit j)
        onto = [0] * 52
        for j in range(10):
            col = cols[j]
            if col:
                onto[col[-1]] |= 1 << j
            elif empty < 0:
                empty = j
        for i in range(10):
            src = cols[i]
            if not src:
                continue
            c = src[-1]
            slot = _first_slot(found, c)
            if slot >= 0:
                out.append((COL_UP, i, slot, c, 1000))
            n = len(src)
            score = _score_col(found, src[-2] if n > 1 else -1, c)
            if c % 13 != 12:
                _onto_columns(out, onto[c + 1] & ~(1 << i), COL_COL, i, c, score)
            if empty >= 0 and n > 1:
                out.append((COL_COL, i, empty, c, score - 150))
        if self.waste:
            c = self.waste[-1]
            slot = _first_slot(found, c)
            if slot >= 0:
                out.append((WASTE_UP, WASTE, slot, c, 1000))
            if c % 13 != 12:
                _onto_columns(out, onto[c + 1], WASTE_COL, WASTE, c, 400)
            if empty >= 0:
                out.append((WASTE_COL, WASTE, empty, c, 150))
        for k in range(8):
            level = found[k]
            if not level or (k >= 4 and found[k - 4] == level):
                continue
            f = (k % 4) * 13 + level - 1
            if f % 13 != 12:
                _onto_columns(out, onto[f + 1], BACK, SLOT + k, f, -1000)
            if empty >= 0:
                out.append((BACK, SLOT + k, empty, f, -1100))
        if self.n_stock:
            out.append((DRAW, STOCK, WASTE, self._deck_stock[self.n_stock - 1], 50))
        out.sort(key=_BY_SCORE, reverse=True)
        return out

    # -- make / unmake -------------------------------------------------

    def lean_moves(self) -> list[SolverMove]:
        """The moves but take-backs (for beams with ``lean_beams``, which Forty Thieves does not set:
        docs/CHANGELOG.md, "Relaxed beams without take-backs")."""
        return [m for m in self.moves() if m[0] != BACK]

    def do(self, m: SolverMove) -> bool:
        kind, a, b, card, _ = m
        if kind == COL_COL:
            self.cols[b].append(self.cols[a].pop())
            self.colkey[a] = self._colkey(a)
            self.colkey[b] = self._colkey(b)
        elif kind == COL_UP:
            self.cols[a].pop()
            self.found[b] += 1
            self.placed += 1
            self.colkey[a] = self._colkey(a)
        elif kind == WASTE_COL:
            self.cols[b].append(self.waste.pop())
            self.colkey[b] = self._colkey(b)
        elif kind == WASTE_UP:
            self.waste.pop()
            self.found[b] += 1
            self.placed += 1
        elif kind == BACK:
            self.found[a - SLOT] -= 1
            self.placed -= 1
            self.cols[b].append(card)
            self.colkey[b] = self._colkey(b)
        else:
            self.n_stock -= 1
            self.waste.append(self._deck_stock[self.n_stock])
        return False

    def undo(self, m: SolverMove, flip: bool) -> None:
        kind, a, b, card, _ = m
        if kind == COL_COL:
            self.cols[a].append(self.cols[b].pop())
            self.colkey[a] = self._colkey(a)
            self.colkey[b] = self._colkey(b)
        elif kind == COL_UP:
            self.cols[a].append(card)
            self.found[b] -= 1
            self.placed -= 1
            self.colkey[a] = self._colkey(a)
        elif kind == WASTE_COL:
            self.waste.append(self.cols[b].pop())
            self.colkey[b] = self._colkey(b)
        elif kind == WASTE_UP:
            self.waste.append(card)
            self.found[b] -= 1
            self.placed -= 1
        elif kind == BACK:
            self.found[a - SLOT] += 1
            self.placed += 1
            self.cols[b].pop()
            self.colkey[b] = self._colkey(b)
        else:
            self.waste.pop()
            self.n_stock += 1

    # -- text ------------------------------------------------------------

    @staticmethod
    def action_text(m: SolverMove) -> str:
        kind, a, b, card, _ = m
        text = card_text(card)
        if kind == COL_COL:
            return f"T{a + 1}:{text}>T{b + 1}"
        if kind == COL_UP:
            return f"T{a + 1}:{text}>F{b + 1}"
        if kind == WASTE_COL:
            return f"W:{text}>T{b + 1}"
        if kind == WASTE_UP:
            return f"W:{text}>F{b + 1}"
        if kind == BACK:
            return f"F{a - SLOT + 1}:{text}>T{b + 1}"
        return "S"

    @staticmethod
    def between_columns(m: SolverMove) -> bool:
        """Never claimed: depth-first search prunes nothing more for Forty Thieves."""
        return False

    @staticmethod
    def places(m: SolverMove) -> Places:
        """(the card moved, where it came from, where it went); a draw names no card (-1)."""
        kind, a, b, card, _ = m
        if kind == DRAW:
            return -1, STOCK, WASTE
        if kind in (COL_UP, WASTE_UP):
            return card, a, SLOT + b
        return card, a, b


def _score_col(found: list[int], under: int, c: int) -> int:
    """How promising moving the top card ``c`` of a column is, by the card ``under`` it (-1: none)."""
    if under < 0:
        return 300  # empties a column
    if under == c + 1:
        return -50  # it already lies on a card it builds on
    if _first_slot(found, under) >= 0:
        return 600  # uncovers a card that can go up
    return 200


def _first_slot(found: list[int], c: int) -> int:
    """The first foundation slot that takes card ``c`` (its suit's two, left to right), or -1."""
    s = c // 13
    r = c % 13
    if found[s] == r:
        return s
    if found[s + 4] == r:
        return s + 4
    return -1


def _safe_slot(found: list[int], c: int) -> int:
    """The slot card ``c`` goes up to safely (:meth:`FortyState.auto_move`): the lower of its
    suit's two foundations (the first of two at one height), if ``c`` is its next card; or -1."""
    s = c // 13
    low = s if found[s] <= found[s + 4] else s + 4
    return low if found[low] == c % 13 else -1


def _onto_columns(out: list[SolverMove], columns: int, kind: int, source: int, card: int, score: int) -> None:
    """A move of ``kind`` taking ``card`` from ``source`` onto each column of the bits ``columns``,
    left to right."""
    j = 0
    while columns:
        if columns & 1:
            out.append((kind, source, j, card, score))
        columns >>= 1
        j += 1


def _remembered(memo: dict[bytes, tuple[int, int]], pile: bytes) -> tuple[int, int]:
    """``pile``'s counts (:func:`_pile_counts`) from ``memo``, or worked out and remembered there
    (at most MEMO_CAP piles: then it starts afresh)."""
    counts = memo.get(pile)
    if counts is None:
        if len(memo) >= MEMO_CAP:
            memo.clear()
        counts = memo[pile] = _pile_counts(pile)
    return counts


def _pile_counts(pile: bytes) -> tuple[int, int]:
    """For one pile, given as its length byte and then its cards (a column's key):
    the blocked count of :meth:`FortyState.estimate` and the unbuilt count of
    :meth:`FortyState.stage_estimate`."""
    blocked = unbuilt = 0
    low = 99
    lows = [99, 99, 99, 99]
    prev = -1
    for c in pile[1:]:
        s, r = divmod(c, 13)
        if prev >= 0 and (prev != c + 1 or r == 12):
            unbuilt += 1
        prev = c
        if r > low:
            blocked += 1
            if r > lows[s]:
                blocked += 1
            else:
                lows[s] = r
        else:
            low = lows[s] = r
    return blocked, unbuilt
