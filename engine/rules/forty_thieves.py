"""Forty Thieves' rule logic: one card moves at a time; builds down in suit;
nothing goes onto an ace; an empty column takes any card."""

from __future__ import annotations

from typing import NoReturn

from ..actions import Action, Move
from ..cards import ACE, Card
from ..messages import illegal
from .base import Rules


class FortyThieves(Rules):
    def builds_on(self, card: Card, onto: Card) -> bool:
        return onto.suit == card.suit and onto.rank == card.rank + 1

    def takes_empty(self, card: Card) -> bool:
        return True

    def _pick(self, column: list[Card], down: int, index: int, action: Move) -> int:
        top, card = column[-1], action.card
        if any(c is card for c in column):
            raise illegal("move.single-card", action, top=top, card=card)
        raise illegal("card.mismatch:column-top", action, named=card, number=index + 1, card=top)

    def _refuse_build(self, card: Card, onto: Card, action: Action) -> NoReturn:
        if onto.rank == ACE:
            raise illegal("tableau.nothing-on-ace", action, onto=onto)
        if onto.suit != card.suit:
            raise illegal("tableau.same-suit", action, card=card, onto=onto)
        raise illegal("tableau.build:suit", action, card=card, onto=onto)

    def _refuse_empty(self, card: Card, action: Action) -> NoReturn:  # pragma: no cover - never refused
        raise AssertionError("an empty column takes any single card")
