"""Layout hashes and the effective line of a game (fair play's evidence, ``docs/fair-play.md``).

A layout is a position without its score and counters: the rule set, each column (its
face-down count and its cards bottom to top, by :attr:`engine.Card.index`), the waste's
cards, and the sizes of the foundations (a slot's suit is fixed) and of the stock (cards
only leave it, in the deal's order). Its hash is stable (BLAKE2b, not Python's salted
``hash``): the values are stored with records. Here rather than in the service so that
the per-action loop is compiled with the rest of the engine.

Fair play hashes a position *settled* (:func:`settled_hash`): every card that can go to a
foundation (a column's top card, the waste's) put there, again and again until none can,
and then only the columns, the waste and the stock's size hashed (the foundations follow
from where the other cards lie). Moving cards home never stops another card from going
home, so a position settles to one layout whatever order the cards go up in; a position
and the one a move to a foundation leads to settle alike, and so do a position and the
one that postpones or advances such a move. A log that plays its foundation moves later
or earlier (a "lazy foundation" reorder) goes through the same settled positions.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import blake2b
from struct import Struct
from typing import Any, Final, final

from .cards import Card
from .game import Game
from .position import Position

#: BLAKE2b of 8 bytes before any data (:func:`_digest`)
_EMPTY: Final = blake2b(digest_size=8)


def hash64(data: str | bytes) -> int:
    """A stable signed 64-bit hash of ``data`` (BLAKE2b; not Python's salted ``hash``).

    >>> hash64("YU1-C -")
    -6293131075318884663
    """
    return int.from_bytes(_digest(data.encode() if isinstance(data, str) else data), "big", signed=True)


def _digest(data: bytes) -> bytes:
    """BLAKE2b of ``data``, 8 bytes: copied from an empty state, which skips parsing the constructor's arguments."""
    hasher = _EMPTY.copy()
    hasher.update(data)
    return hasher.digest()


def _halves(value: int) -> tuple[int, int]:
    """A 64-bit value as its high and low 32 bits (unsigned): the compiled build keeps these in
    machine words, where a 64-bit value is an object and each XOR of two of them makes one."""
    return value >> 32 & 0xFFFFFFFF, value & 0xFFFFFFFF


#: one stable random value per stock size (0 …) and per foundation slot and size (slot << 8 | size), halved
_COUNTS: Final = [_halves(hash64(f"count {value}")) for value in range(9 << 8)]
_HALVES: Final = Struct(">II")
#: the waste's mark, where a column's is its face-down count (its bytes start with it alone)
WASTE: Final = 255


def _cards(cards: list[Card], start: int, end: int) -> bytes:
    return bytes([card.index for card in cards[start:end]])


@final
class Layouts:
    """The hashes of a game's successive layouts: the XOR of one BLAKE2b hash per pile (a
    column's bytes: its index, its face-down count, its cards; the waste's: 255, its cards)
    and of one value per size of the stock and of each foundation. An action changes the
    size of every pile it touches, so only those piles are hashed again.

    A pile's bytes are kept, and an action only takes cards off a pile's top or puts cards
    on it (and may turn up the card it uncovers): so a pile's new bytes are its old ones cut
    short or with the new cards added, and only a turned card makes them anew."""

    def __init__(self, position: Position, settle: bool = False) -> None:
        piles = len(position.columns) + 1
        #: whether each position is hashed settled (:func:`settled_hash`), its foundations left out
        self.settle = settle
        self.slots_of_suit = position.rules.slots_of_suit
        self.data: list[bytes] = [b""] * piles
        self.marks: list[int] = [-1] * piles
        self.high: list[int] = [0] * piles
        self.low: list[int] = [0] * piles
        self.counts: list[int] = [-1] * (1 + len(position.foundations))  # the stock's size, each foundation's
        self.total_high, self.total_low = _halves(hash64(position.rules.tag + (" settled" if settle else "")))

    def _pile(self, index: int, mark: int, cards: list[Card], end: int) -> None:
        """Hash pile ``index`` (its first ``end`` cards) again if its size or mark changed."""
        old = self.data[index]
        head = 1 if mark == WASTE else 2
        size = head + end
        if len(old) == size and self.marks[index] == mark:
            return
        if self.marks[index] != mark:
            data = b"".join((bytes((mark,)) if mark == WASTE else bytes((index, mark)), _cards(cards, 0, end)))
        elif size < len(old):
            data = old[:size]
        else:
            data = b"".join((old, _cards(cards, len(old) - head, end)))
        halves = _HALVES.unpack(_digest(data))
        high: int = halves[0]  # (typed: the compiled XORs are then of machine words)
        low: int = halves[1]
        self.total_high ^= self.high[index] ^ high
        self.total_low ^= self.low[index] ^ low
        self.high[index], self.low[index], self.data[index], self.marks[index] = high, low, data, mark

    def _count(self, slot: int, size: int) -> None:
        """Count ``size`` cards in ``slot`` (0: the stock, 1 …: the foundations)."""
        old = self.counts[slot]
        if old == size:
            return
        if old >= 0:
            high, low = _COUNTS[slot << 8 | old]
            self.total_high ^= high
            self.total_low ^= low
        high, low = _COUNTS[slot << 8 | size]
        self.total_high ^= high
        self.total_low ^= low
        self.counts[slot] = size

    def hash(self, position: Position) -> int:
        if self.settle:
            return self._settled(position)
        columns, down = position.columns, position.down
        for index in range(len(columns)):
            self._pile(index, down[index], columns[index], len(columns[index]))
        self._pile(len(columns), WASTE, position.waste, len(position.waste))
        self._count(0, len(position.stock))
        for slot, pile in enumerate(position.foundations):
            self._count(slot + 1, len(pile))
        return self._value()

    def _settled(self, position: Position) -> int:
        """The hash of ``position`` settled: its piles cut where the cards that can go home start
        (a face-down card they uncover turned up), the foundations left out.

        Each pile is only ever cut short of the position's own, and a position's piles are
        each the one before cut short or added to: so two settled piles in a row are each
        a start of the other, as :meth:`_pile` needs."""
        columns, waste = position.columns, position.waste
        sizes = [len(pile) for pile in position.foundations]
        downs = list(position.down)
        ends = [len(column) for column in columns]
        waste_end = len(waste)
        moved = True
        while moved:
            moved = False
            for index in range(len(columns)):
                column, end = columns[index], ends[index]
                while end > downs[index] and self._home(sizes, column[end - 1]):
                    end -= 1
                    moved = True
                    if end and end == downs[index]:  # the card under it turns up
                        downs[index] = end - 1
                ends[index] = end
            while waste_end and self._home(sizes, waste[waste_end - 1]):
                waste_end -= 1
                moved = True
        for index in range(len(columns)):
            self._pile(index, downs[index], columns[index], ends[index])
        self._pile(len(columns), WASTE, waste, waste_end)
        self._count(0, len(position.stock))
        return self._value()

    def _home(self, sizes: list[int], card: Card) -> bool:
        """Put ``card`` on a foundation slot of its suit that takes it (counted in ``sizes``), if one does."""
        for slot in self.slots_of_suit[card.suit]:
            if sizes[slot] == card.rank - 1:
                sizes[slot] += 1
                return True
        return False

    def _value(self) -> int:
        high = self.total_high
        return (high - (1 << 32) if high >> 31 else high) << 32 | self.total_low


def position_hash(position: Position) -> int:
    """The stable 64-bit hash of a position's layout (score and counters left out)."""
    return Layouts(position).hash(position)


def settled_hash(position: Position) -> int:
    """The stable 64-bit hash of a position settled: every card that can go to a foundation
    put there until none can, then the columns, the waste and the stock's size (fair play's
    positions: a move to a foundation, postponed or advanced, changes none of them)."""
    return Layouts(position, settle=True).hash(position)


@final
class Line:
    """A game played with its effective line kept as it goes (:func:`effective_line`): each
    action in effect leaves the settled hash (:func:`settled_hash`) of the position it
    reached, whether a draw reached it, and the points it earned for good (its score's share,
    a take-back's card −(a foundation card's points): ``verifier.earned``); an undo takes its
    action's entry off again. So one replay gives the verdict, the line fair play judges and
    the earned points. ``game`` is played in place; the line starts from its position."""

    __slots__ = ("game", "layouts", "hashes", "drawn", "shares")

    def __init__(self, game: Game) -> None:
        self.game = game
        self.layouts = Layouts(game.position, settle=True)
        #: the settled hashes of the positions of the actions in effect, the start first
        self.hashes = [self.layouts.hash(game.position)]
        #: whether each was reached by a draw (the start counts as one: it is left out)
        self.drawn = [True]
        #: the points each action in effect earned for good (the start none)
        self.shares = [0]

    def push_items(self, items: Iterable[Any], canonical: list[str], text_log: bool = False) -> None:
        """Play ``items`` as :meth:`Game.push_items` does (the same canonical texts, the same
        error at the same item, the game left before it), keeping the line of each action played."""
        game = self.game
        position = game.position
        foundation = game.rules.score_foundation
        for item in items:
            score, takebacks, played = position.score, position.takebacks, len(canonical)
            game.push_items((item,), canonical, text_log)
            if len(canonical) == played:  # (nothing applied: never without an error)
                continue
            here = self.layouts.hash(position)  # (after an undo too: keeps the piles' sizes in step)
            if canonical[-1] == "U":
                if len(self.hashes) > 1:
                    self.hashes.pop()
                    self.drawn.pop()
                    self.shares.pop()
                continue
            self.hashes.append(here)
            self.drawn.append(canonical[-1] == "S")
            self.shares.append(-foundation if position.takebacks > takebacks else position.score - score)

    def positions(self) -> list[int]:
        """The effective line: the settled positions of the actions in effect, loops cut out
        (:func:`loop_erased`), then those a draw reached left out."""
        hashes, drawn = self.hashes, self.drawn
        return [hashes[step] for step in loop_erased(hashes) if not drawn[step]]

    @property
    def earned(self) -> int:
        """The points the actions in effect earned for good (``verifier.earned``)."""
        return sum(self.shares)


def effective_line(code: str, actions: Iterable[str]) -> list[int]:
    """The settled hashes (:func:`settled_hash`) of the path a game went through, in order:
    the positions on the undo stack when the log ends, each loop cut out where a position is
    reached again (a move to a foundation reaches its own position again, settled: it adds
    nothing), and then the positions a draw reached left out, as is the deal's start: every
    game of the deal draws the same cards in the same order, so they say nothing of how it
    was played (the next move's position still has the stock and waste it was made with).
    ``actions`` are a verified log's canonical texts; an action the engine refuses raises
    its error (:class:`~engine.errors.EngineError`). A replay that judges the log as well
    keeps its :class:`Line` instead (``verifier.play``)."""
    line = Line(Game.from_code(code))
    line.push_items(actions, [], True)
    return line.positions()


def loop_erased(walk: list[int]) -> list[int]:
    """The steps of ``walk`` left when every loop is cut out, in order: where a position comes
    again, the steps since its first visit fall away (and so does the step that came back).

    >>> loop_erased([1, 2, 3, 2, 4, 4, 1, 5])
    [0, 7]
    """
    path: list[int] = []  # steps
    where: dict[int, int] = {}  # position -> its index in the path
    for step, here in enumerate(walk):
        seen = where.get(here)
        if seen is not None:
            for dropped in path[seen + 1:]:
                del where[walk[dropped]]
            del path[seen + 1:]
            continue
        where[here] = len(path)
        path.append(step)
    return path
