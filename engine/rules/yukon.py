"""Yukon: one deck, seven columns, groups of up to 20 face-up cards in any order."""

from __future__ import annotations

from ..actions import Move
from ..cards import KING, Card
from ..messages import illegal
from ..position import Position
from .base import Rules


class Yukon(Rules):
    """Rules shared by classic and relaxed Yukon."""

    game = "YU"
    name = "Yukon"
    decks = 1
    n_columns = 7
    foundation_suits = (0, 1, 2, 3)
    has_stock = False
    has_face_down = True
    max_group = 20
    SCORE_FLIP = 5
    #: does the tableau build ask for alternating colours?
    alternate_colours = True

    def deal(self, number: int) -> Position:
        deck = self.shuffled_deck(number)
        columns = [[deck[0]]]
        down = [0]
        at = 1
        for k in range(2, 8):
            columns.append(deck[at:at + k - 1 + 5])
            down.append(k - 1)
            at += k - 1 + 5
        return Position(self, columns, down, [[] for _ in range(4)], [], [])

    def _pick(self, column: list[Card], down: int, index: int, move: Move) -> int:
        card = move.card
        if card is None:
            return len(column) - 1
        try:
            return column.index(card, down)  # one deck: each card at most once; cards compare by identity
        except ValueError:
            if card in column:
                raise illegal("card.face-down", move, card=card, number=index + 1) from None
            raise illegal("card.mismatch:column", move, named=card, number=index + 1) from None

    def builds_on(self, card: Card, onto: Card) -> bool:
        return onto.rank == card.rank + 1 and (onto.red != card.red or not self.alternate_colours)

    def fills_empty(self, card: Card) -> bool:
        return card.rank == KING

    def _check_build(self, card: Card, onto: Card, move: Move) -> None:
        if onto.rank != card.rank + 1:
            raise illegal("tableau.build", move, card=card, onto=onto)
        if self.alternate_colours and onto.red == card.red:
            raise illegal("tableau.alternate-colour", move, card=card, onto=onto)

    def _check_empty(self, card: Card, move: Move) -> None:
        if card.rank != KING:
            raise illegal("empty-column.king-only", move, card=card)


class YukonClassic(Yukon):
    letter = "C"
    variant = "yukon-classic"


class YukonRelaxed(Yukon):
    letter = "R"
    variant = "yukon-relaxed"
    alternate_colours = False
