"""Every rule sentence the engine can say, in one place.

A key is a rule id, optionally with a ``:case`` suffix where one rule reads
differently in different situations; the rule id is the part before ``:``.
Templates take named parameters (cards as text such as ``7H``, suits as
symbols, numbers), so that a service can translate a template by its key and
fill in the same parameters.
"""

from __future__ import annotations

from typing import Any

from .errors import IllegalActionError

MESSAGES: dict[str, str] = {
    "pile.no-such-column": "{game} has columns T1 to T{count}; there is no T{number}.",
    "pile.no-such-foundation": "{game} has foundations F1 to F{count}; there is no F{number}.",
    "stock.none": "{game} has no stock and no waste: every card is dealt to the columns.",
    "stock.empty": "The stock is empty: it is gone through only once, with no redeal.",
    "source.empty:column": "Column {number} is empty: there is no card to move.",
    "source.empty:waste": "The waste is empty: draw from the stock first.",
    "source.empty:foundation": "Foundation {number} is empty: there is no card to take back.",
    "card.mismatch:column": "The action names {named}, but it is not in column {number}.",
    "card.mismatch:column-top": "The action names {named}, but the top card of column {number} is {card}.",
    "card.mismatch:waste": "The action names {named}, but the top card of the waste is {card}.",
    "card.mismatch:foundation": "The action names {named}, but the top card of foundation {number} is {card}.",
    "card.face-down": "{card} is face down in column {number}: only face-up cards move.",
    "move.single-card": "Only one card moves at a time, the top card of a column ({top}); {card} cannot move "
    "with the cards on top of it.",
    "move.same-column": "A card never moves onto the column it came from.",
    "group.max-20": "The app moves at most {limit} cards at once; this group has {count}.",
    "foundation.to-foundation": "A foundation card goes back only to a column, never to another foundation.",
    "foundation.one-card": "Foundations take one card at a time, from the end of a column: {card} has {above} "
    "card(s) on top of it.",
    "foundation.suit": "Foundation {number} takes only {suit}; {card} cannot go there.",
    "foundation.build:empty": "Foundations are built up in suit from ace to king: foundation {number} is empty, "
    "so it starts with the ace, not {card}.",
    "foundation.build:next": "Foundations are built up in suit from ace to king, one card at a time: foundation "
    "{number} shows {top}, so it takes {next} next, not {card}.",
    "foundation.build:complete": "Foundation {number} is complete, up to the king; {card} cannot go there.",
    "tableau.build": "A card goes onto a card exactly one rank higher: {card} cannot go onto {onto}.",
    "tableau.build:suit": "A card goes onto a card of the same suit exactly one rank higher: {card} cannot go "
    "onto {onto}.",
    "tableau.alternate-colour": "Under classic rules colours alternate, red on black and black on red: {card} "
    "cannot go onto {onto}. (Relaxed rules ignore colour.)",
    "tableau.same-suit": "A card goes onto a card of the same suit exactly one rank higher: {card} cannot go "
    "onto {onto}.",
    "tableau.nothing-on-ace": "Nothing goes onto an ace in a column ({onto}).",
    "empty-column.king-only": "An empty column takes only a king, alone or with the cards on top of it; {card} "
    "is not a king.",
    "undo.nothing-to-undo": "There is nothing to undo.",
    "undo.max-100": "Only the {limit} most recent actions can be undone.",
    "game.over": "The game is won: every card is on the foundations, so no further action is played.",
}

#: every stable rule id
RULE_IDS: tuple[str, ...] = tuple(sorted({key.split(":")[0] for key in MESSAGES}))


def illegal(key: str, action: object, **params: Any) -> IllegalActionError:
    """The error for message ``key`` (rule id plus optional ``:case``), filled in with ``params``."""
    params = {name: str(value) for name, value in params.items()}
    return IllegalActionError(key.split(":")[0], MESSAGES[key].format(**params), action, key=key, params=params)
