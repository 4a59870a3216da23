"""Ranks, suits and cards: small immutable values with a text round trip.

>>> Card.from_text("10♦") is Card.from_text("td") is Card.from_text("TD")
True
>>> str(Card.from_text("10♦"))
'TD'
"""

from __future__ import annotations

from operator import attrgetter
from typing import ClassVar, final

from .errors import InvalidCardError

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
RANK_NAMES = ("ace", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king")
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")

# Suits in the order of the unshuffled deck and of the foundations.
SPADES, HEARTS, DIAMONDS, CLUBS = range(4)
ACE, KING = 1, 13


@final
class Card:
    """One card: ``rank`` 1 (ace) … 13 (king), ``suit`` 0 … 3 (``S H D C``).

    The 52 cards are interned: ``Card(1, 0) is Card(1, 0)``, so cards compare
    by identity and hash cheaply. ``index`` is the card's place in the
    unshuffled deck (``AS`` = 0 … ``KC`` = 51).
    """

    __slots__ = ("rank", "suit", "red", "index", "_text")
    _interned: ClassVar[dict[tuple[int, int], Card]] = {}
    rank: int
    suit: int
    red: bool
    index: int
    _text: str

    def __new__(cls, rank: int, suit: int) -> Card:
        card = cls._interned.get((rank, suit))
        if card is None:
            if not (isinstance(rank, int) and isinstance(suit, int) and 1 <= rank <= 13 and 0 <= suit <= 3):
                raise InvalidCardError(f"no card has rank {rank!r} and suit {suit!r}")
            card = object.__new__(cls)
            object.__setattr__(card, "rank", rank)
            object.__setattr__(card, "suit", suit)
            object.__setattr__(card, "red", suit in (HEARTS, DIAMONDS))
            object.__setattr__(card, "index", suit * 13 + rank - 1)
            object.__setattr__(card, "_text", RANK_CHARS[rank - 1] + SUIT_CHARS[suit])
            cls._interned[(rank, suit)] = card
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int, int]]:
        return (Card, (self.rank, self.suit))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    @classmethod
    def from_text(cls, text: object) -> Card:
        """Parse ``TD``, ``10♦``, ``td``; raise :class:`InvalidCardError` otherwise."""
        card = _BY_TEXT.get(ascii_upper(text.strip())) if isinstance(text, str) else None
        if card is None:
            raise InvalidCardError(
                f"{text!r} is not a card: write rank A 2-9 T J Q K (or 10) then suit S H D C (or ♠ ♥ ♦ ♣)"
            )
        return card

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.from_text({self._text!r})"

    @property
    def name(self) -> str:
        """Plain words, for screen readers: ``ten of diamonds``."""
        return f"{RANK_NAMES[self.rank - 1]} of {SUIT_NAMES[self.suit]}"

    @property
    def symbol(self) -> str:
        """With the suit symbol: ``10♦``."""
        rank = "10" if self.rank == 10 else RANK_CHARS[self.rank - 1]
        return rank + SUIT_SYMBOLS[self.suit]


#: ``str`` of a card, at C speed (``map(card_text, cards)``): position texts are built on every replay
card_text = attrgetter("_text")

#: The 52 cards in the order of the unshuffled deck: ``AS 2S … KS AH … KC``.
DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in range(4) for rank in range(1, 14))


def _text_table() -> dict[str, Card]:
    table: dict[str, Card] = {}
    for card in DECK:
        ranks = [RANK_CHARS[card.rank - 1]] + (["10"] if card.rank == 10 else [])
        for rank in ranks:
            for suit in (SUIT_CHARS[card.suit], SUIT_SYMBOLS[card.suit]):
                table[rank + suit] = card
    return table


_BY_TEXT = _text_table()


_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def ascii_upper(text: str) -> str:
    """Upper-case the ASCII letters only: ``str.upper`` also maps ``ı`` to ``I`` and
    ``ﬀ`` to ``FF``, which would let non-ASCII text pass as a card, action or code.
    (ASCII text, the usual case, is upper-cased by ``str.upper``: the same, and faster.)"""
    return text.upper() if text.isascii() else text.translate(_ASCII_UPPER)
