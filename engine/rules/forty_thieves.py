"""Forty Thieves (Quarante Voleurs): two decks, ten columns, one card at a time, in suit."""

from __future__ import annotations

from ..actions import Move
from ..cards import ACE, Card
from ..errors import IllegalActionError
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
                raise IllegalActionError(
                    "move.single-card",
                    f"Only one card moves at a time, the top card of a column ({column[top]}); {card} cannot move "
                    f"with the cards on top of it.", move)
            raise IllegalActionError(
                "card.mismatch", f"The action names {card}, but the top card of column {index + 1} is {column[top]}.",
                move)
        return top

    def builds_on(self, card: Card, onto: Card) -> bool:
        return onto.suit == card.suit and onto.rank == card.rank + 1

    def fills_empty(self, card: Card) -> bool:
        return True

    def _check_build(self, card: Card, onto: Card, move: Move) -> None:
        if onto.rank == ACE:
            raise IllegalActionError("tableau.nothing-on-ace", f"Nothing goes onto an ace in a column ({onto}).", move)
        if onto.suit != card.suit:
            raise IllegalActionError(
                "tableau.same-suit",
                f"A card goes onto a card of the same suit exactly one rank higher: {card} cannot go onto {onto}.",
                move)
        if onto.rank != card.rank + 1:
            raise IllegalActionError(
                "tableau.build",
                f"A card goes onto a card of the same suit exactly one rank higher: {card} cannot go onto {onto}.",
                move)

    def _check_empty(self, card: Card, move: Move) -> None:  # pragma: no cover - an empty column takes any card
        raise AssertionError("an empty column takes any single card")
