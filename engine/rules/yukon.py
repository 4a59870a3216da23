"""Yukon's rule logic: any face-up group moves; builds down by one rank, in
alternating colours under classic rules; only a king fills an empty column."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from ..actions import Action, Move
from ..cards import KING, Card
from ..messages import illegal
from .base import Rules

if TYPE_CHECKING:
    from .registry import RuleSet


class Yukon(Rules):
    """Classic (``alternate_colours``) and relaxed Yukon."""

    ANY_GROUP = True

    def __init__(self, spec: RuleSet, *, alternate_colours: bool) -> None:
        #: does the tableau build ask for alternating colours?
        self.alternate_colours = alternate_colours
        super().__init__(spec)

    def builds_on(self, card: Card, onto: Card) -> bool:
        return onto.rank == card.rank + 1 and (onto.red != card.red or not self.alternate_colours)

    def takes_empty(self, card: Card) -> bool:
        return card.rank == KING

    def _pick(self, column: list[Card], down: int, index: int, action: Move) -> int:
        card = action.card
        assert card is not None  # (a move naming no card takes the top card, never picked)
        try:
            return column.index(card, down)  # one deck: each card at most once
        except ValueError:
            if card in column:
                raise illegal("card.face-down", action, card=card, number=index + 1) from None
            raise illegal("card.mismatch:column", action, named=card, number=index + 1) from None

    def _refuse_build(self, card: Card, onto: Card, action: Action) -> NoReturn:
        if onto.rank != card.rank + 1:
            raise illegal("tableau.build", action, card=card, onto=onto)
        raise illegal("tableau.alternate-colour", action, card=card, onto=onto)

    def _refuse_empty(self, card: Card, action: Action) -> NoReturn:
        raise illegal("empty-column.king-only", action, card=card)
