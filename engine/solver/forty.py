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

from ..cards import RANK_CHARS, SUIT_CHARS
from ..position import Position

COL_COL, COL_UP, WASTE_COL, WASTE_UP, BACK, DRAW = range(6)
WASTE, STOCK, SLOT = 50, 60, 100  # place numbers beside columns 0 … 9


def card_text(card: int) -> str:
    return RANK_CHARS[card % 13] + SUIT_CHARS[card // 13]


class FortyState:
    """A Forty Thieves position the search changes in place and changes back."""

    __slots__ = ("cols", "stock", "waste", "found", "colkey", "placed", "_deck_stock")

    n_cards = 104
    beam_widths = (10, 30, 100, 300, 1000, 3000)  # beam searches before the complete one (engine.solver.solve)
    newest_first = True  # best-first ties: the newest position first, a dive toward a win (measured: more wins)

    def __init__(self, pos: Position) -> None:
        self.cols = [[c.index for c in col] for col in pos.columns]
        self.stock = [c.index for c in pos.stock]  # next card to draw last
        self._deck_stock = tuple(self.stock)  # the stock only shrinks from its end
        self.waste = [c.index for c in pos.waste]
        self.found = [len(f) for f in pos.foundations]
        self.colkey = [self._colkey(i) for i in range(10)]
        self.placed = sum(self.found)

    def _colkey(self, i: int) -> bytes:
        col = self.cols[i]
        return bytes((len(col),)) + bytes(col)

    def stage(self) -> int:
        """Cards left in the stock: no move adds one (engine.solver.search.stage_beam)."""
        return len(self.stock)

    def won(self) -> bool:
        return self.placed == 104

    def key(self) -> bytes:
        """Stock size, waste, and the columns sorted; the foundations follow
        from the cards that are left (two copies of a card are one value)."""
        return bytes((len(self.stock), len(self.waste))) + bytes(self.waste) + b"".join(sorted(self.colkey))

    def encode(self) -> bytes:
        """Everything needed to :meth:`decode` this position again (slots and columns in order)."""
        return (bytes(self.found) + bytes((len(self.stock), len(self.waste))) + bytes(self.waste)
                + b"".join(self.colkey))

    def decode(self, data: bytes) -> None:
        self.found = list(data[:8])
        n_stock, n_waste = data[8], data[9]
        at = 10 + n_waste
        self.waste = list(data[10:at])
        self.stock = list(self._deck_stock[:n_stock])
        cols = []
        for _ in range(10):
            n = data[at]
            cols.append(list(data[at + 1:at + 1 + n]))
            at += 1 + n
        self.cols = cols
        self.colkey = [self._colkey(i) for i in range(10)]
        self.placed = sum(self.found)

    def estimate(self) -> int:
        """Lower is closer to a win: cards not yet up, plus, for every card of a
        column or the waste, one if a lower card lies beneath it (it must move
        before that card can go up) and one more if that lower card is of its own
        suit (then it cannot go up first either)."""
        blocked = 0
        for pile in (*self.cols, self.waste):
            low = 99
            lows = [99, 99, 99, 99]
            for c in pile:
                s, r = divmod(c, 13)
                if r > low:
                    blocked += 1
                    if r > lows[s]:
                        blocked += 1
                    else:
                        lows[s] = r
                else:
                    low = lows[s] = r
        return 104 - self.placed + blocked

    def _slot_for(self, c: int) -> int:
        """The first slot that accepts card value ``c``, or -1."""
        s, r = divmod(c, 13)
        if self.found[s] == r:
            return s
        if self.found[s + 4] == r:
            return s + 4
        return -1

    # -- safe foundation moves -----------------------------------------

    def auto_move(self):
        """A foundation move that provably loses nothing (docs/winnability.md):
        the card goes onto the lower of its suit's two foundations."""
        found = self.found
        tops = [(COL_UP, i, col[-1]) for i, col in enumerate(self.cols) if col]
        if self.waste:
            tops.append((WASTE_UP, WASTE, self.waste[-1]))
        for kind, source, c in tops:
            s, r = divmod(c, 13)
            a, b = found[s], found[s + 4]
            if a == r and b >= r:
                return (kind, source, s, c, 0)
            if b == r and a >= r:
                return (kind, source, s + 4, c, 0)
        return None

    def dead(self) -> bool:
        """No dead-end test for Forty Thieves (an empty column takes any card)."""
        return False

    # -- moves -----------------------------------------------------------

    def moves(self) -> list:
        cols, found = self.cols, self.found
        out = []
        empty = -1
        by_top: dict[int, list[int]] = {}
        for j in range(10):
            col = cols[j]
            if col:
                by_top.setdefault(col[-1], []).append(j)
            elif empty < 0:
                empty = j
        for i in range(10):
            src = cols[i]
            if not src:
                continue
            c = src[-1]
            slot = self._slot_for(c)
            if slot >= 0:
                out.append((COL_UP, i, slot, c, 1000))
            n = len(src)
            under = src[-2] if n > 1 else -1
            if c % 13 != 12:
                for j in by_top.get(c + 1, ()):
                    if j != i:
                        out.append((COL_COL, i, j, c, self._score_col(src, under, c)))
            if empty >= 0 and n > 1:
                out.append((COL_COL, i, empty, c, self._score_col(src, under, c) - 150))
        if self.waste:
            c = self.waste[-1]
            slot = self._slot_for(c)
            if slot >= 0:
                out.append((WASTE_UP, WASTE, slot, c, 1000))
            if c % 13 != 12:
                for j in by_top.get(c + 1, ()):
                    out.append((WASTE_COL, WASTE, j, c, 400))
            if empty >= 0:
                out.append((WASTE_COL, WASTE, empty, c, 150))
        for k in range(8):
            level = found[k]
            if not level or (k >= 4 and found[k - 4] == level):
                continue
            f = (k % 4) * 13 + level - 1
            if f % 13 != 12:
                for j in by_top.get(f + 1, ()):
                    out.append((BACK, SLOT + k, j, f, -1000))
            if empty >= 0:
                out.append((BACK, SLOT + k, empty, f, -1100))
        if self.stock:
            out.append((DRAW, STOCK, WASTE, self.stock[-1], 50))
        out.sort(key=_by_score, reverse=True)
        return out

    def _score_col(self, src: list[int], under: int, c: int) -> int:
        if under < 0:
            return 300  # empties a column
        if under == c + 1:
            return -50  # it already lies on a card it builds on
        if self._slot_for(under) >= 0:
            return 600  # uncovers a card that can go up
        return 200

    # -- make / unmake -------------------------------------------------

    def do(self, m) -> bool:
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
            self.waste.append(self.stock.pop())
        return False

    def undo(self, m, flip: bool) -> None:
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
            self.stock.append(self.waste.pop())

    # -- text ------------------------------------------------------------

    @staticmethod
    def action_text(m) -> str:
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
    def places(m) -> tuple[int, int, int]:
        """(the card moved, where it came from, where it went); a draw names no card (-1)."""
        kind, a, b, card, _ = m
        if kind == DRAW:
            return -1, STOCK, WASTE
        if kind in (COL_UP, WASTE_UP):
            return card, a, SLOT + b
        return card, a, b


def _by_score(m) -> int:
    return m[4]
