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
from typing import Final, final

from .game import Game
from .position import Position


def hash64(data: str | bytes) -> int:
    """A stable signed 64-bit hash of ``data`` (BLAKE2b; not Python's salted ``hash``).

    >>> hash64("YU1-C -")
    -6293131075318884663
    """
    raw = data.encode() if isinstance(data, str) else data
    return int.from_bytes(blake2b(raw, digest_size=8).digest(), "big", signed=True)


#: one stable random value per stock size (0 …) and per foundation slot and size (slot << 8 | size)
_COUNTS: Final = [hash64(f"count {value}") for value in range(9 << 8)]


@final
class Layouts:
    """The hashes of a game's successive layouts: the XOR of one BLAKE2b hash per pile (with
    the pile's place in it). An action changes the size of every pile it touches, so only
    those piles are hashed again: a few microseconds a position."""

    def __init__(self, position: Position) -> None:
        piles = len(position.columns) + 1
        self.sizes: list[int] = [-1] * piles
        self.parts: list[int] = [0] * piles
        self.total: int = hash64(position.rules.tag)

    def _set(self, index: int, size: int, data: bytes) -> None:
        new = int.from_bytes(blake2b(data, digest_size=8).digest(), "big", signed=True)
        self.total ^= self.parts[index] ^ new
        self.parts[index] = new
        self.sizes[index] = size

    def hash(self, position: Position) -> int:
        columns, down, sizes = position.columns, position.down, self.sizes
        for index in range(len(columns)):
            column = columns[index]
            size = len(column) << 8 | down[index]
            if size != sizes[index]:
                self._set(index, size, bytes([index, down[index], *[card.index for card in column]]))
        waste, last = position.waste, len(columns)
        if len(waste) != sizes[last]:
            self._set(last, len(waste), bytes([255, *[card.index for card in waste]]))
        total = self.total ^ _COUNTS[len(position.stock)]
        for slot, pile in enumerate(position.foundations):
            total ^= _COUNTS[(slot + 1) << 8 | len(pile)]
        return total


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
