"""``Game``: a position plus its undo stack.

Actions are pushed one at a time; each push keeps a small undo record (which
lists moved how many cards, whether a card was turned up, the score and
take-backs before), never a copy of the position.

>>> game = Game.from_code("FT1-N-AAAAAAB")
>>> str(game.push(parse_action("S")))
'S'
>>> game.position.waste
[Card.from_text('6D')]
>>> game.undo(); game.position.waste, game.position.moves
([], 1)
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable

from .actions import DRAW, UNDO, Action, Draw, Move, Undo, action_from_json, json_key, parse_action, parse_text
from .codes import GameCode
from .messages import illegal
from .position import Position
from .rules import UNDO_DEPTH, Rules, UndoStack, rules_for


_NO_OPS: dict[str, tuple] = {}


class Game:
    """A game in progress under one rule set."""

    __slots__ = ("rules", "position", "code", "actions", "undos", "_stack", "_in_effect", "_won", "_play")

    def __init__(self, rules: Rules, position: Position, code: GameCode | None = None) -> None:
        self.rules = rules
        self.position = position
        self.code = code
        #: actions applied so far, undos included
        self.actions = 0
        #: undo actions applied so far
        self.undos = 0
        self._stack: UndoStack = deque(maxlen=UNDO_DEPTH)
        self._in_effect = 0  # actions applied and not undone
        self._won = position.is_won
        self._play = rules.play

    @classmethod
    def from_code(cls, code: GameCode | str) -> "Game":
        """A new game at the start of the deal the code names."""
        if not isinstance(code, GameCode):
            code = GameCode.from_text(code)
        rules = rules_for(code.game, code.rules)
        return cls(rules, rules.deal(code.number), code)

    @classmethod
    def from_position(cls, text: str) -> "Game":
        """A game that starts at a position's text form, with nothing to undo."""
        position = Position.from_text(text)
        return cls(position.rules, position)

    # -- playing -------------------------------------------------------

    @property
    def is_won(self) -> bool:
        """All cards on the foundations: the game is over."""
        return self._won

    def push(self, action: Action) -> Action:
        """Apply a legal action and return it in canonical form; raise
        :class:`IllegalActionError` (and change nothing) if it breaks a rule.
        A won game is over: every action after the win is refused (``game.over``)."""
        if self._won:
            self._game_over(action)
        pos = self.position
        if type(action) is Move:
            canonical = self._play(pos, action, self._stack)
            self._in_effect += 1
            self.actions += 1
            if canonical.target == "F" and canonical.card.rank == 13:  # type: ignore[union-attr]
                self._won = pos.is_won  # the last card up is always a king
            return canonical
        if type(action) is Draw:
            self.rules.check_draw(pos)
            self._draw(pos)
            return DRAW
        if type(action) is Undo:
            self.undo()
            return UNDO
        raise TypeError(f"not an action: {action!r}")

    def push_items(self, items: Iterable[Any], canonical: list[str]) -> None:
        """Parse and push the items of a log (text actions or JSON action objects)
        one by one, appending each one's canonical text to ``canonical``.

        Stops at the first item that is not an action (:class:`InvalidActionError`)
        or breaks a rule (:class:`IllegalActionError`), with the game at the
        position before it: that item's index is then ``len(canonical)``.
        The same as :meth:`push` on each item, in one loop: this is the replay
        hot path. A text (or action object) seen before (logs repeat the same
        few hundred actions) comes compiled (:meth:`Rules.compile`), and the
        common moves are checked and applied right here, with the same checks as
        :meth:`Rules.play`; an action that fails one, or is not compiled, takes
        the general path, which names the rule it breaks.
        """
        rules = self.rules
        # a won game refuses every action: none is looked up, each takes the general path, which says so
        compiled = rules._ops.get if not self._won else _NO_OPS.get
        stack, pos = self._stack, self.position
        columns, down, foundations, waste, stock = pos.columns, pos.down, pos.foundations, pos.waste, pos.stock
        fits, fills_empty, max_group, groups = rules._fits, rules._fills_empty, rules.max_group, rules.max_group > 1
        flip_gain, up_gain, waste_gain = rules.SCORE_FLIP, rules.SCORE_FOUNDATION, rules.SCORE_WASTE_TO_COLUMN
        takeback_gain = rules.SCORE_TAKEBACK
        push_item, push_stack = self._push_item, stack.append
        append = canonical.append
        applied = 0  # moves and draws applied here and not yet counted in the game and the position's move counter
        try:
            for item in items:
                if type(item) is str:
                    op = compiled(item)
                else:  # an action object: its keys and values (json_key, inline), if they make a key
                    try:
                        op = compiled(tuple(item.items()))
                    except (AttributeError, TypeError):
                        op = None
                if op is not None:
                    kind, target, card, text, si = op
                    if kind == 0:  # Rules.OP_COLUMN: a column's top card or (Yukon) face-up group onto a column
                        src = columns[si]
                        n = len(src)
                        if n and src[-1] is card:
                            start = n - 1
                        elif groups:
                            try:
                                start = src.index(card, down[si])  # one deck: each card at most once
                            except ValueError:
                                start = -1
                            if n - start > max_group:
                                start = -1
                        else:
                            start = -1
                        dst = columns[target]
                        if start >= 0 and (card in fits[dst[-1]] if dst else card in fills_empty):
                            if start == n - 1:
                                dst.append(src.pop())
                            else:
                                dst.extend(src[start:])
                                del src[start:]
                            if start and start == down[si]:  # a face-down card is turned up
                                down[si] = start - 1
                                score = pos.score
                                push_stack((src, dst, n - start, si, score, pos.takebacks))
                                pos.score = score + flip_gain
                            else:
                                push_stack((src, dst, n - start, -1, pos.score, pos.takebacks))
                            applied += 1
                            append(text)
                            continue
                    elif kind == 1 or kind == 3:  # Rules.OP_COLUMN_UP / OP_WASTE_UP: a top card onto its foundation
                        slots, height, texts = target
                        src = columns[si] if kind == 1 else waste
                        n = len(src)
                        if n and src[-1] is card:
                            for slot in slots:
                                if len(foundations[slot]) == height:
                                    dst = foundations[slot]
                                    dst.append(src.pop())
                                    score = pos.score
                                    start = n - 1
                                    if kind == 1 and start and start == down[si]:
                                        down[si] = start - 1
                                        push_stack((src, dst, 1, si, score, pos.takebacks))
                                        pos.score = score + up_gain + flip_gain
                                    else:
                                        push_stack((src, dst, 1, -1, score, pos.takebacks))
                                        pos.score = score + up_gain
                                    applied += 1
                                    if height == 12 and pos.is_won:  # the last card up is always a king
                                        self._won = True
                                        compiled = _NO_OPS.get
                                    append(texts[slot])
                                    break
                            else:
                                slot = -1
                            if slot >= 0:
                                continue
                    elif kind == 2:  # Rules.OP_WASTE: the waste's top card onto a column
                        dst = columns[target]
                        if waste and waste[-1] is card and (card in fits[dst[-1]] if dst else card in fills_empty):
                            dst.append(waste.pop())
                            score = pos.score
                            push_stack((waste, dst, 1, -1, score, pos.takebacks))
                            pos.score = score + waste_gain
                            applied += 1
                            append(text)
                            continue
                    elif kind == 5:  # Rules.OP_UNDO, when there is something to undo (Game.undo, inline)
                        if stack:
                            src, dst, count, flip, score, takebacks = stack.pop()
                            if count == 1:
                                src.append(dst.pop())
                            else:
                                src.extend(dst[-count:])
                                del dst[-count:]
                            if flip >= 0:
                                down[flip] += 1
                            pos.score = score
                            pos.takebacks = takebacks
                            # (the game is not won: it was not when the undone action was played)
                            self._in_effect -= 1
                            self.undos += 1
                            self.actions += 1
                            append("U")
                            continue
                    elif kind == 6:  # Rules.OP_TAKEBACK: a foundation's top card back onto a column
                        src = foundations[si]
                        dst = columns[target]
                        if src and src[-1] is card and (card in fits[dst[-1]] if dst else card in fills_empty):
                            dst.append(src.pop())
                            score, takebacks = pos.score, pos.takebacks
                            push_stack((src, dst, 1, -1, score, takebacks))
                            score += takeback_gain
                            pos.score = score if score > 0 else 0
                            pos.takebacks = takebacks + 1
                            applied += 1
                            append(text)
                            continue
                    elif kind == 4:  # Rules.OP_DRAW: the stock's next card onto the waste
                        if stock:
                            push_stack((stock, waste, 1, -1, pos.score, pos.takebacks))
                            waste.append(stock.pop())
                            applied += 1
                            append("S")
                            continue
                # an action not compiled, or one that failed a check: the general path
                if applied:
                    self.actions += applied
                    self._in_effect += applied
                    pos.moves += applied
                    applied = 0
                push_item(item, append)  # names the rule a failed check stands for
                if self._won:
                    compiled = _NO_OPS.get
        finally:
            self.actions += applied
            self._in_effect += applied
            pos.moves += applied

    def _push_item(self, item: Any, append: Any) -> None:
        """:meth:`push_items` for one item, the general way (an item seen for the first
        time, or one the loop's checks refuse): parse it, compile it for the next
        time, :meth:`push` it, append its canonical text."""
        rules = self.rules
        if type(item) is str:
            action = parse_text(item)
            if item not in rules._ops:
                rules.compile(item, action)
        else:
            action = action_from_json(item)
            try:
                key = json_key(item)
            except TypeError:  # (a value no key can hold: parsed anew each time)
                pass
            else:
                if key not in rules._ops:
                    rules.compile(key, action)
        append(self.push(action).text)

    def _draw(self, pos: Position) -> None:
        """Turn the next stock card onto the waste (the caller has checked there is one)."""
        self._stack.append((pos.stock, pos.waste, 1, -1, pos.score, pos.takebacks))
        pos.waste.append(pos.stock.pop())
        pos.moves += 1
        self._in_effect += 1
        self.actions += 1

    def push_text(self, text: str) -> Action:
        """Parse one action in text form and push it."""
        return self.push(parse_action(text))

    def undo(self) -> None:
        """Undo the last action still undoable: cards, face-up state, score and
        take-backs return; the move counter stays. (In a log, ``U`` after a win
        is refused by :meth:`push`; this method itself also steps back from a win.)"""
        if not self._stack:
            if self._in_effect:
                raise illegal("undo.max-100", UNDO, limit=UNDO_DEPTH)
            raise illegal("undo.nothing-to-undo", UNDO)
        src, dst, count, flip, score, takebacks = self._stack.pop()
        if count == 1:
            src.append(dst.pop())
        else:
            src.extend(dst[-count:])
            del dst[-count:]
        pos = self.position
        if flip >= 0:
            pos.down[flip] += 1
        pos.score = score
        pos.takebacks = takebacks
        self._won = pos.is_won
        self._in_effect -= 1
        self.undos += 1
        self.actions += 1

    @property
    def can_undo(self) -> bool:
        return bool(self._stack)

    def legal_actions(self) -> list[Action]:
        """Every legal action (undo excepted) in canonical form; none once the game is won."""
        if self._won:
            return []
        return self.rules.legal_moves(self.position)

    def play(self, actions: Iterable[Action]) -> list[Action]:
        """Push several actions; return their canonical forms."""
        return [self.push(action) for action in actions]

    @staticmethod
    def _game_over(action: Action) -> None:
        raise illegal("game.over", action)
