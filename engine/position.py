"""The position: columns, foundations, stock, waste, score and counters, with a
compact text form that round-trips (the project's FEN).

Text form, eight fields separated by one space::

    <rules> <columns> <foundations> <stock> <waste> <score> <moves> <takebacks>

- ``rules``: ``YU1-C``, ``YU1-R`` or ``FT1-N``;
- ``columns``: separated by ``/``, each bottom to top, face-down cards in lower
  case (``9s``), an empty column ``-``;
- ``foundations``: one character a slot, the rank of its top card, or ``-``;
- ``stock``: cards, first drawn first, or ``-``; ``waste``: bottom to top, or ``-``;
- ``score``, ``moves`` (the move counter) and ``takebacks``: whole numbers.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, ClassVar, final

from .cards import DECK, RANK_CHARS, Card
from .errors import InvalidCardError, InvalidPositionError

if TYPE_CHECKING:
    from .rules.base import Rules


@final
class Position:
    """Where every card lies, plus score, move counter and take-backs in effect.

    ``columns[i]`` lists column ``T(i+1)`` bottom to top; its first ``down[i]``
    cards are face down. ``foundations[i]`` lists slot ``F(i+1)`` bottom to top.
    ``stock`` is kept with the next card to draw *last* (so drawing is a
    ``pop()``); ``waste`` is bottom to top.
    """

    __slots__ = ("rules", "columns", "down", "foundations", "stock", "waste", "score", "moves", "takebacks")

    #: the rule sets a text form may name, by tag (``YU1-C``): filled by
    #: :mod:`engine.rules.registry`, which imports this module, so the lookup needs no import
    known_rules: ClassVar[dict[str, Rules]] = {}

    @classmethod
    def register_rules(cls, rules: Rules) -> None:
        cls.known_rules[rules.tag] = rules

    def __init__(
        self,
        rules: Rules,
        columns: list[list[Card]],
        down: list[int],
        foundations: list[list[Card]],
        stock: list[Card],
        waste: list[Card],
        score: int = 0,
        moves: int = 0,
        takebacks: int = 0,
    ) -> None:
        self.rules = rules
        self.columns = columns
        self.down = down
        self.foundations = foundations
        self.stock = stock
        self.waste = waste
        self.score = score
        self.moves = moves
        self.takebacks = takebacks

    # -- derived facts -------------------------------------------------

    @property
    def foundation_cards(self) -> int:
        """How many cards are on the foundations."""
        count = 0
        for foundation in self.foundations:
            count += len(foundation)
        return count

    @property
    def is_won(self) -> bool:
        """All cards on the foundations."""
        return self.foundation_cards == 13 * len(self.foundations)

    def layout(self) -> str:
        """The text form without score and counters: where every card lies, face up or down.
        Positions with one layout have the same legal moves and the same winning lines.

        >>> from engine import Game
        >>> Game.from_code("YU1-C-AAAAAAB").position.layout().count(" ")
        4
        """
        return str(self).rsplit(" ", 3)[0]

    def copy(self) -> Position:
        return Position(
            self.rules,
            [list(c) for c in self.columns],
            list(self.down),
            [list(f) for f in self.foundations],
            list(self.stock),
            list(self.waste),
            self.score,
            self.moves,
            self.takebacks,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        return f"Position.from_text({str(self)!r})"

    # -- text form -----------------------------------------------------

    def __str__(self) -> str:
        # (every verdict carries its final position: plain loops and list comprehensions, no generators)
        piles = []
        for col, d in zip(self.columns, self.down):
            if d:
                piles.append("".join([c._text for c in col[:d]]).lower() + "".join([c._text for c in col[d:]]))
            else:
                piles.append("".join([c._text for c in col]) or "-")
        foundations = "".join([RANK_CHARS[len(f) - 1] if f else "-" for f in self.foundations])
        stock = "".join([c._text for c in reversed(self.stock)]) or "-"
        waste = "".join([c._text for c in self.waste]) or "-"
        columns = "/".join(piles)
        return f"{self.rules.tag} {columns} {foundations} {stock} {waste} {self.score} {self.moves} {self.takebacks}"

    @classmethod
    def from_text(cls, text: object) -> Position:
        """Read a position back; raise :class:`InvalidPositionError` if it is not one."""
        if not isinstance(text, str):
            raise InvalidPositionError("a position is text")
        fields = text.split()
        if len(fields) != 8:
            raise InvalidPositionError(
                f"a position has 8 fields (rules columns foundations stock waste score moves takebacks), "
                f"found {len(fields)}"
            )
        tag, columns_text, foundations_text, stock_text, waste_text, *numbers = fields
        rules = cls.known_rules.get(tag)
        if rules is None:
            known = list(cls.known_rules)
            raise InvalidPositionError(f"unknown rules {tag!r}: expected {', '.join(known[:-1])} or {known[-1]}")
        column_texts = columns_text.split("/")
        if len(column_texts) != rules.n_columns:
            raise InvalidPositionError(f"{tag} has {rules.n_columns} columns, found {len(column_texts)}")
        columns: list[list[Card]] = []
        down: list[int] = []
        for number, col_text in enumerate(column_texts, 1):
            cards = _cards(col_text, f"column {number}")
            pairs = _pairs(col_text)
            flags = [pair[1].islower() for pair in pairs]
            hidden = flags.index(False) if False in flags else len(flags)
            if any(flags[hidden:]):
                raise InvalidPositionError(f"column {number}: face-down (lower case) cards must lie below face-up ones")
            if any(p != p.lower() for p in pairs[:hidden]) or any(p != p.upper() for p in pairs[hidden:]):
                raise InvalidPositionError(
                    f"column {number}: write face-down cards all in lower case, face-up ones all in upper case"
                )
            if cards and hidden == len(cards):
                raise InvalidPositionError(f"column {number} ends with a face-down card; it would be turned up")
            if hidden and not rules.has_face_down:
                raise InvalidPositionError(f"column {number}: {rules.name} has no face-down cards")
            columns.append(cards)
            down.append(hidden)
        if len(foundations_text) != rules.n_foundations:
            raise InvalidPositionError(
                f"{tag} has {rules.n_foundations} foundations, found {len(foundations_text)} characters"
            )
        foundations: list[list[Card]] = []
        for slot, (suit, ch) in enumerate(zip(rules.foundation_suits, foundations_text), 1):
            if ch == "-":
                foundations.append([])
            elif ch in RANK_CHARS:
                foundations.append([Card(rank, suit) for rank in range(1, RANK_CHARS.index(ch) + 2)])
            else:
                raise InvalidPositionError(f"foundation {slot}: {ch!r} is not a rank or '-'")
        stock = _cards(stock_text, "stock")
        waste = _cards(waste_text, "waste")
        if (stock or waste) and not rules.has_stock:
            raise InvalidPositionError(f"{rules.name} has no stock and no waste: write '-'")
        if any(p != p.upper() for p in _pairs(stock_text) + _pairs(waste_text)):
            raise InvalidPositionError("stock and waste cards are written in upper case")
        values: list[int] = []
        for name, raw in zip(("score", "moves", "takebacks"), numbers):
            if not raw.isdigit() or not raw.isascii():
                raise InvalidPositionError(f"{name} {raw!r} is not a whole number")
            values.append(int(raw))
        position = cls(rules, columns, down, foundations, list(reversed(stock)), waste, *values)
        counts = Counter(c for col in columns for c in col)
        counts.update(c for f in foundations for c in f)
        counts.update(stock)
        counts.update(waste)
        for card in DECK:
            if counts[card] != rules.decks:
                raise InvalidPositionError(
                    f"{card} appears {counts[card]} times; {rules.name} has it {rules.decks} time(s)"
                )
        return position

    # -- JSON and board views -------------------------------------------

    def to_json(self, reveal: bool = True) -> dict[str, Any]:
        """Columns as ``{"card", "face_up"}`` lists; face-down cards and the stock hidden unless ``reveal``."""
        return {
            "tableau": [
                [{"card": str(c) if reveal or i >= d else None, "face_up": i >= d} for i, c in enumerate(col)]
                for col, d in zip(self.columns, self.down)
            ],
            "foundations": [[str(c) for c in f] for f in self.foundations],
            "stock": [str(c) for c in reversed(self.stock)] if reveal else None,
            "stock_size": len(self.stock),
            "waste": [str(c) for c in self.waste],
        }

    def board(self, reveal: bool = True) -> str:
        """A readable board: one line a pile, ``(XX)`` face down, ``(??)`` hidden."""
        lines = []
        for i, (col, d) in enumerate(zip(self.columns, self.down), 1):
            cells = [(f"({c})" if reveal else "(??)") if j < d else str(c) for j, c in enumerate(col)]
            lines.append(f"T{i}: {' '.join(cells)}".rstrip())
        tops = [f"F{i}: {f[-1] if f else '--'}" for i, f in enumerate(self.foundations, 1)]
        lines.append("  ".join(tops))
        if self.rules.has_stock:
            if reveal:
                lines.append(
                    f"stock ({len(self.stock)}), first drawn first: "
                    + (" ".join(str(c) for c in reversed(self.stock)) or "-")
                )
            else:
                lines.append(f"stock: {len(self.stock)} cards")
            lines.append("waste, top last: " + (" ".join(map(str, self.waste)) or "-"))
        lines.append(f"score {self.score}  moves {self.moves}  take-backs {self.takebacks}")
        return "\n".join(lines)


def _pairs(text: str) -> list[str]:
    return [] if text == "-" else [text[i : i + 2] for i in range(0, len(text), 2)]


def _cards(text: str, where: str) -> list[Card]:
    if text == "-":
        return []
    if not text:
        raise InvalidPositionError(f"{where}: write '-' for an empty pile")
    if len(text) % 2:
        raise InvalidPositionError(f"{where}: {text!r} is not a list of two-character cards")
    try:
        return [Card.from_text(pair) for pair in _pairs(text)]
    except InvalidCardError as exc:
        raise InvalidPositionError(f"{where}: {exc}") from None
