"""Forty Thieves (Quarante Voleurs): two decks, ten columns, one card at a time, in suit."""

from __future__ import annotations

from ..actions import Move
from ..cards import ACE, Card
from ..messages import illegal
from ..position import Position
from .base import Rules


class FortyThieves(Rules):
    game = "FT"
    letter = "N"
    name = "Forty Thieves"
    variant = "forty-thieves"
    decks = 2
    n_columns = 10
    foundation_suits = (0, 1, 2, 3, 0, 1, 2, 3)
    has_stock = True
    has_face_down = False
    max_group = 1
    SCORE_WASTE_TO_COLUMN = 5
    SCORE_TAKEBACK = -15

    def deal(self, number: int) -> Position:
        deck = self.shuffled_deck(number)
        columns = [deck[4 * i:4 * i + 4] for i in range(10)]
        stock = deck[40:]
        stock.reverse()  # the next card to draw is kept last
        return Position(self, columns, [0] * 10, [[] for _ in range(8)], stock, [])

    def _pick(self, column: list[Card], down: int, index: int, move: Move) -> int:
        top = len(column) - 1
        card = move.card
        if card is not None and card is not column[top]:
            if any(c is card for c in column):
                raise illegal("move.single-card", move, top=column[top], card=card)
            raise illegal("card.mismatch:column-top", move, named=card, number=index + 1, card=column[top])
        return top

    def builds_on(self, card: Card, onto: Card) -> bool:
        return onto.suit == card.suit and onto.rank == card.rank + 1

    def fills_empty(self, card: Card) -> bool:
        return True

    def _check_build(self, card: Card, onto: Card, move: Move) -> None:
        if onto.rank == ACE:
            raise illegal("tableau.nothing-on-ace", move, onto=onto)
        if onto.suit != card.suit:
            raise illegal("tableau.same-suit", move, card=card, onto=onto)
        if onto.rank != card.rank + 1:
            raise illegal("tableau.build:suit", move, card=card, onto=onto)

    def _check_empty(self, card: Card, move: Move) -> None:  # pragma: no cover - an empty column takes any card
        raise AssertionError("an empty column takes any single card")
