"""``Game``: a position plus its undo stack.

Actions are pushed one at a time; each push keeps a small undo record (which
lists moved how many cards, whether a card was turned up, the points and
take-backs the action added), never a copy of the position.

>>> game = Game.from_code("FT1-N-AAAAAAB")
>>> str(game.push(parse_action("S")))
'S'
>>> game.position.waste
[Card.from_text('6D')]
>>> game.undo(); game.position.waste, game.position.moves
([], 1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, final

from .actions import Action, parse_action, parse_text
from .cards import Card
from .codes import GameCode
from .position import Position
from .rules import Rules, UndoStack
from .rules.base import step_back
from .rules.registry import rule_set


@final
class Game:
    """A game in progress under one rule set; :meth:`Rules.run` plays its actions."""

    __slots__ = ("rules", "position", "code", "actions", "undos", "stack", "in_effect", "won")

    def __init__(self, rules: Rules, position: Position, code: GameCode | None = None) -> None:
        self.rules = rules
        self.position = position
        self.code = code
        #: actions applied so far, undos included
        self.actions = 0
        #: undo actions applied so far
        self.undos = 0
        #: undo records of the most recent actions still in effect
        self.stack = UndoStack()
        #: actions applied and not undone (undo refuses past the stack's depth, or with none)
        self.in_effect = 0
        #: every card is on the foundations: the game is over
        self.won = position.is_won

    @classmethod
    def from_code(cls, code: GameCode | object) -> Game:
        """A new game at the start of the deal the code names (:class:`InvalidCodeError` for
        anything else, text or not: the argument may come straight from a client's JSON)."""
        if not isinstance(code, GameCode):
            code = GameCode.from_text(code)
        rules = rule_set(code.game, code.rules).rules
        return cls(rules, rules.deal(code.number), code)

    @classmethod
    def from_position(cls, text: object) -> Game:
        """A game that starts at a position's text form, with nothing to undo."""
        position = Position.from_text(text)
        return cls(position.rules, position)

    def copy(self) -> Game:
        """An independent game at the same position with the same undo stack and counters: a line
        can be tried on it (and undo back into the game's own actions) without replaying them."""
        position = self.position.copy()
        mine = self.position
        piles: dict[int, list[Card]] = {id(mine.stock): position.stock, id(mine.waste): position.waste}
        for old, new in zip(mine.columns + mine.foundations, position.columns + position.foundations):
            piles[id(old)] = new
        other = Game(self.rules, position, self.code)
        other.actions, other.undos, other.in_effect, other.won = self.actions, self.undos, self.in_effect, self.won
        other.stack = self.stack.copy(piles)
        return other

    # -- playing -------------------------------------------------------

    @property
    def is_won(self) -> bool:
        """All cards on the foundations: the game is over."""
        return self.won

    def push(self, action: Action) -> Action:
        """Apply a legal action and return it in canonical form; raise
        :class:`IllegalActionError` (and change nothing) if it breaks a rule.
        A won game is over: every action after the win is refused (``game.over``)."""
        canonical: list[str] = []
        self.rules.run(self, (action,), canonical)
        return action if action.text == canonical[0] else parse_text(canonical[0])

    def push_items(self, items: Iterable[Any], canonical: list[str], text_log: bool = False) -> None:
        """Parse and push the items of a log (text actions or JSON action objects)
        one by one, appending each one's canonical text to ``canonical``; stops at
        the first item that is not an action or breaks a rule, with the game at the
        position before it (that item's index is then ``len(canonical)``). ``text_log``:
        ``items`` is a list of texts (the tokens of a text log)."""
        self.rules.run(self, items, canonical, text_log)

    def push_text(self, text: str) -> Action:
        """Parse one action in text form and push it."""
        return self.push(parse_action(text))

    def undo(self) -> None:
        """Undo the last action still undoable: cards, face-up state, score and
        take-backs return; the move counter stays. (In a log, ``U`` after a win
        is refused by :meth:`push`; this method itself also steps back from a win.)"""
        step_back(self.position, self.stack, self.in_effect)
        self.won = self.position.is_won
        self.in_effect -= 1
        self.undos += 1
        self.actions += 1

    def count(self, done: int) -> None:
        """Count ``done`` actions just applied (their undos counted already, by :meth:`stepped_back`)."""
        self.actions += done
        self.in_effect += done
        self.position.moves += done

    def stepped_back(self) -> None:
        """Count an undo the interpreter applied, ahead of :meth:`count`: an undo adds no move
        and takes one action out of effect, where :meth:`count` counts a move in effect."""
        self.undos += 1
        self.in_effect -= 2
        self.position.moves -= 1

    @property
    def can_undo(self) -> bool:
        return self.stack.size > 0

    def legal_actions(self) -> list[Action]:
        """Every legal action (undo excepted) in canonical form; none once the game is won."""
        if self.won:
            return []
        return self.rules.legal_moves(self.position)
