"""A toy game, declared the way ``docs/adding-a-game.md`` says, for the test that adds it
(``tests/test_adding_a_game.py``): its rule logic here, and its declaration, which that test
adds to the registry of a temporary copy of the engine, imported in place of the real one by a
fresh interpreter, so that everything that derives from the registry sees the toy.

Toy: one deck in eight columns of 7 or 6 face-up cards, no stock; one card moves at a time, down by
one rank in any suit; an empty column takes any card. A take-back costs 5 of the card's 10 points.
"""

from __future__ import annotations

from typing import NoReturn

from engine.actions import Action, Move
from engine.cards import Card
from engine.messages import illegal
from engine.rules.base import Rules

VARIANT, PREFIX, TITLE = "toy-game", "TY1-T", "Toy"

#: the declaration a developer adds to ``RULE_SETS`` (here appended to it in the registry's copy)
DECLARATION = '''
from tests.toy_game import Toy

RULE_SETS = (*RULE_SETS, RuleSet(
    game=GameFamily(letters="TY", name="toy", title="Toy"),
    letter="T",
    rules_name="toy",
    variant="toy-game",
    title="Toy",
    layout=Layout(decks=1, columns=(7,) * 4 + (6,) * 4, face_down=(0,) * 8, foundation_suits=(0, 1, 2, 3)),
    stock=None,
    scoring=Scoring(takeback=-5),
    max_group=1,
    rules_factory=Toy,
))

'''


class Toy(Rules):
    def builds_on(self, card: Card, onto: Card) -> bool:
        return onto.rank == card.rank + 1

    def takes_empty(self, card: Card) -> bool:
        return True

    def _pick(self, column: list[Card], down: int, index: int, action: Move) -> int:
        raise illegal("move.single-card", action, top=column[-1], card=action.card)

    def _refuse_build(self, card: Card, onto: Card, action: Action) -> NoReturn:
        raise illegal("tableau.build", action, card=card, onto=onto)

    def _refuse_empty(self, card: Card, action: Action) -> NoReturn:  # pragma: no cover - never refused
        raise AssertionError("an empty column takes any card")
