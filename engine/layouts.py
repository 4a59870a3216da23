"""Layout hashes and the effective line of a game (fair play's evidence, ``docs/fair-play.md``).

A layout is a position without its score and counters: the rule set, each column (its
face-down count and its cards bottom to top, by :attr:`engine.Card.index`), the waste's
cards, and the sizes of the foundations (a slot's suit is fixed) and of the stock (cards
only leave it, in the deal's order). Its hash is stable (BLAKE2b, not Python's salted
``hash``): the values are stored with records. Here rather than in the service so that
the per-action loop is compiled with the rest of the engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import blake2b
from struct import Struct
from typing import Final, final

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


def _cards(cards: list[Card], start: int) -> bytes:
    return bytes([card.index for card in cards[start:]])


@final
class Layouts:
    """The hashes of a game's successive layouts: the XOR of one BLAKE2b hash per pile (a
    column's bytes: its index, its face-down count, its cards; the waste's: 255, its cards)
    and of one value per size of the stock and of each foundation. An action changes the
    size of every pile it touches, so only those piles are hashed again.

    A pile's bytes are kept, and an action only takes cards off a pile's top or puts cards
    on it (and may turn up the card it uncovers): so a pile's new bytes are its old ones cut
    short or with the new cards added, and only a turned card makes them anew."""

    def __init__(self, position: Position) -> None:
        piles = len(position.columns) + 1
        self.data: list[bytes] = [b""] * piles
        self.marks: list[int] = [-1] * piles
        self.high: list[int] = [0] * piles
        self.low: list[int] = [0] * piles
        self.counts: list[int] = [-1] * (1 + len(position.foundations))  # the stock's size, each foundation's
        self.total_high, self.total_low = _halves(hash64(position.rules.tag))

    def _pile(self, index: int, mark: int, cards: list[Card]) -> None:
        """Hash pile ``index`` again if its size or mark changed."""
        old = self.data[index]
        head = 1 if mark == WASTE else 2
        size = head + len(cards)
        if len(old) == size and self.marks[index] == mark:
            return
        if self.marks[index] != mark:
            data = (bytes((mark,)) if mark == WASTE else bytes((index, mark))) + _cards(cards, 0)
        elif size < len(old):
            data = old[:size]
        else:
            data = old + _cards(cards, len(old) - head)
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
        columns, down = position.columns, position.down
        for index in range(len(columns)):
            self._pile(index, down[index], columns[index])
        self._pile(len(columns), WASTE, position.waste)
        self._count(0, len(position.stock))
        for slot, pile in enumerate(position.foundations):
            self._count(slot + 1, len(pile))
        high = self.total_high
        return (high - (1 << 32) if high >> 31 else high) << 32 | self.total_low


def position_hash(position: Position) -> int:
    """The stable 64-bit hash of a position's layout (score and counters left out)."""
    return Layouts(position).hash(position)


def effective_line(code: str, actions: Iterable[str]) -> list[int]:
    """The layout hashes of the path a game went through, in order (the deal's start left
    out: every game of the deal has it). An undone action's position leaves the path, and a
    position reached again cuts the loop in between. ``actions`` are a verified log's
    canonical texts; an action the engine refuses raises :class:`ValueError`."""
    game = Game.from_code(code)
    layouts = Layouts(game.position)
    path: list[int] = []
    where: dict[int, int] = {layouts.hash(game.position): -1}  # position -> its index in the path
    done: list[str] = []
    index = 0
    for text in actions:
        game.push_items([text], done, True)
        if len(done) == index:
            raise ValueError(f"action {index} {text!r} is not a legal action here: not a verified log")
        index += 1
        if done[-1] == "U":  # the undone action's position leaves the path
            if path:
                where.pop(path.pop(), None)
            layouts.hash(game.position)  # (keeps the piles' sizes in step)
            continue
        here = layouts.hash(game.position)
        seen = where.get(here)
        if seen is not None:  # back where the path was: the loop falls away
            for dropped in path[seen + 1:]:
                where.pop(dropped, None)
            del path[seen + 1:]
            continue
        where[here] = len(path)
        path.append(here)
    return path
