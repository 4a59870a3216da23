"""The rules interpreter every game shares: actions compile to typed ops, and one
loop (:meth:`Rules.run`) checks and applies them.

An :class:`Op` holds what an action means whatever the position (pile indexes,
the named card, the canonical text); :meth:`Rules.run` holds every check that
depends on the position, in the order of ``docs/rules.md``. A check accepts at
once in the common case and otherwise calls a ``_refuse_*``/``_pick`` helper
that raises :class:`~engine.errors.IllegalActionError` naming the rule; nothing
changes before every check has passed. A subclass supplies only the rule logic
(what builds on what, what a move picks up); the data of a rule set (layout,
stock, scoring) comes from its :class:`~engine.rules.registry.RuleSet`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from ..actions import DRAW, UNDO, Action, Draw, Move, Undo, action_from_json, parse_text
from ..cards import DECK, SUIT_SYMBOLS, Card
from ..messages import illegal
from ..position import Position
from ..shuffle import shuffle_seeded

if TYPE_CHECKING:
    from ..game import Game
    from .registry import RuleSet

#: how many recent actions undo can reach
UNDO_DEPTH: Final = 100


@final
class UndoRecord:
    """What undoes one action: the source and target piles, the cards moved, the column whose
    face-down card turned up or -1, and the points and take-backs the action added."""

    __slots__ = ("src", "dst", "count", "flip", "score", "takebacks")

    def __init__(self, src: list[Card], dst: list[Card], count: int, flip: int, score: int, takebacks: int) -> None:
        self.src = src
        self.dst = dst
        self.count = count
        self.flip = flip
        self.score = score
        self.takebacks = takebacks


@final
class UndoStack:
    """The undo records of the last :data:`UNDO_DEPTH` actions still in effect, most recent
    last: a ring of records written over in place, so that an action allocates nothing."""

    __slots__ = ("records", "top", "size")

    def __init__(self) -> None:
        self.records: list[UndoRecord] = []
        #: where the most recent record is in ``records``
        self.top = -1
        #: records in effect (at most UNDO_DEPTH: a push past it drops the oldest)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def push(self, src: list[Card], dst: list[Card], count: int, flip: int, score: int, takebacks: int) -> None:
        top = self.top + 1 if self.top + 1 < UNDO_DEPTH else 0
        if top == len(self.records):
            self.records.append(UndoRecord(src, dst, count, flip, score, takebacks))
        else:
            record = self.records[top]
            record.src, record.dst, record.count = src, dst, count
            record.flip, record.score, record.takebacks = flip, score, takebacks
        self.top = top
        if self.size < UNDO_DEPTH:
            self.size += 1

    def copy(self, piles: dict[int, list[Card]]) -> UndoStack:
        """The same records over other piles: ``piles`` maps each pile's ``id`` to its copy (:meth:`Game.copy`)."""
        other = UndoStack()
        other.records = [UndoRecord(piles[id(record.src)], piles[id(record.dst)], record.count, record.flip,
                                    record.score, record.takebacks) for record in self.records]
        other.top, other.size = self.top, self.size
        return other

    def pop(self) -> UndoRecord:
        """The most recent record (there must be one)."""
        record = self.records[self.top]
        self.top = self.top - 1 if self.top else len(self.records) - 1
        self.size -= 1
        return record


class OpKind(IntEnum):
    """What a compiled action does."""

    COLUMN = 0  # a column's card (with the cards on it, where groups move) onto a column
    COLUMN_UP = 1  # a column's top card onto a foundation
    WASTE = 2  # the waste's top card onto a column
    WASTE_UP = 3  # the waste's top card onto a foundation
    TAKEBACK = 4  # a foundation's top card back onto a column
    DRAW = 5  # the stock's next card onto the waste
    UNDO = 6  # the last action still undoable, undone
    UNNAMED = 7  # a move naming no card: the source's top card moves
    REFUSED = 8  # refused in every position (a pile the game does not have)


#: the kinds :meth:`Rules._apply` tells apart, as module constants (an enum's attribute costs more to read)
_COLUMN: Final = OpKind.COLUMN
_COLUMN_UP: Final = OpKind.COLUMN_UP
_WASTE: Final = OpKind.WASTE
_WASTE_UP: Final = OpKind.WASTE_UP
_TAKEBACK: Final = OpKind.TAKEBACK
_DRAW: Final = OpKind.DRAW
_UNDO: Final = OpKind.UNDO
_UNNAMED: Final = OpKind.UNNAMED

#: ``target`` of an op whose target is refused once its source checks pass
#: (onto its own column, onto a column the game lacks, foundation to foundation)
BAD_TARGET: Final = 1 << 20


@final
class Op:
    """An action compiled for one rule set: everything about it that does not
    depend on the position. (A final class with slots: compiled code reads its
    fields directly, without the type checks a tuple's items need.)"""

    __slots__ = ("kind", "source", "target", "card", "text", "slots", "texts", "action")

    def __init__(
        self,
        kind: OpKind,
        source: int,
        target: int,
        card: Card | None,
        text: str,
        slots: tuple[int, ...],
        texts: tuple[str, ...],
        action: Action | None,
    ) -> None:
        self.kind = kind
        #: column index, foundation slot, or 0 for the waste
        self.source = source
        #: column index (``BAD_TARGET``: refused); -1 for a foundation
        self.target = target
        self.card = card
        #: canonical text (for a foundation, see ``texts``)
        self.text = text
        #: foundation slots that may take the card, left to right, and the canonical text for each slot
        self.slots = slots
        self.texts = texts
        #: the action, for error messages (None: parsed again from ``text`` when needed)
        self.action = action


_UNDO_OP = Op(OpKind.UNDO, 0, 0, None, "U", (), (), UNDO)


@lru_cache(maxsize=4096)
def _shuffled(decks: int, number: int) -> tuple[Card, ...]:
    """Shuffling is the costly part of a deal, and popular deals are replayed again and again."""
    deck = list(DECK) * decks
    shuffle_seeded(deck, number)
    return tuple(deck)


def step_back(pos: Position, stack: UndoStack, in_effect: int) -> str:
    """Undo the last action still on ``stack`` (the move counter stays); its canonical text.
    ``in_effect``: actions not undone, for the refusal when the stack is empty."""
    if not stack.size:
        refuse_undo(in_effect)
    record = stack.pop()
    src, dst, count = record.src, record.dst, record.count
    if count == 1:
        src.append(dst.pop())
    else:
        src.extend(dst[-count:])
        del dst[-count:]
    if record.flip >= 0:
        pos.down[record.flip] += 1
    pos.score -= record.score
    pos.takebacks -= record.takebacks
    return "U"


def refuse_undo(in_effect: int) -> NoReturn:
    """The undo stack is empty: past its depth (``in_effect`` actions not undone), or nothing played."""
    if in_effect:
        raise illegal("undo.max-100", UNDO, limit=UNDO_DEPTH)
    raise illegal("undo.nothing-to-undo", UNDO)


class Rules:
    """One rule set: its data from a :class:`RuleSet`, its rule logic from a subclass."""

    #: a move from a column takes any face-up card with the cards on it (Yukon)
    ANY_GROUP = False
    #: at most this many texts are remembered per rule set (logs repeat a few hundred actions)
    OPS_CAP = 8192

    def __init__(self, spec: RuleSet) -> None:
        if spec.stock is not None and (spec.stock.passes, spec.stock.per_draw) != (1, 1):
            raise ValueError("the interpreter draws one card at a time, in one pass through the stock")
        self.spec = spec
        self.game = spec.game.letters
        self.letter = spec.letter
        self.name = spec.game.title
        self.variant = spec.variant
        self.tag = spec.code_prefix
        layout = spec.layout
        self.decks = layout.decks
        self.n_columns = len(layout.columns)
        self.foundation_suits = layout.foundation_suits
        self.n_foundations = len(layout.foundation_suits)
        self.has_stock = spec.stock is not None
        self.has_face_down = any(layout.face_down)
        self.max_group = spec.max_group
        #: whether a column move takes any face-up card with everything on it (else the
        #: game's :meth:`_pick` says which cards move together)
        self.any_group = self.ANY_GROUP and self.max_group > 1
        scoring = spec.scoring
        self.score_foundation = scoring.foundation
        self.score_flip = scoring.flip
        self.score_waste_to_column = scoring.waste_to_column
        self.score_takeback = scoring.takeback
        #: onto a column whose last card is ``onto``: the cards that may go there
        self.fits: dict[Card, frozenset[Card]] = {
            onto: frozenset(card for card in DECK if self.builds_on(card, onto)) for onto in DECK
        }
        #: the cards an empty column takes
        self.fills_empty = frozenset(card for card in DECK if self.takes_empty(card))
        #: the same two tables for the interpreter, by card index: ``onto.index * 52 + card.index``
        #: (whether ``card`` may go onto ``onto``) and ``card.index`` (onto an empty column)
        self._fit_table = [card in self.fits[onto] for onto in DECK for card in DECK]
        self._empty_table = [card in self.fills_empty for card in DECK]
        #: the foundation slots of each suit, left to right
        self.slots_of_suit = tuple(
            tuple(slot for slot, s in enumerate(self.foundation_suits) if s == suit) for suit in range(4)
        )
        #: an action's text (or action object's key) → its op
        self._ops: dict[object, Op] = {}
        #: canonical pile names → (pile letter, number), for compiling canonical texts without parsing
        self._sources = {f"T{n}": ("T", n) for n in range(1, self.n_columns + 1)}
        self._sources.update({f"F{n}": ("F", n) for n in range(1, self.n_foundations + 1)})
        if self.has_stock:
            self._sources["W"] = ("W", 0)
        self._targets: dict[str, tuple[str, int | None]] = {k: v for k, v in self._sources.items() if k != "W"}
        self._targets["F"] = ("F", None)
        self._cards = {card._text: card for card in DECK}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tag}>"

    # -- the deal --------------------------------------------------------

    def deal(self, number: int) -> Position:
        """The starting position of deal ``number``: the layout's columns in deck order, then the stock."""
        deck = _shuffled(self.decks, number)
        layout = self.spec.layout
        columns = []
        at = 0
        for size in layout.columns:
            columns.append(list(deck[at : at + size]))
            at += size
        stock = list(deck[at:])
        stock.reverse()  # the next card to draw is kept last
        foundations: list[list[Card]] = [[] for _ in layout.foundation_suits]
        return Position(self, columns, list(layout.face_down), foundations, stock, [])

    # -- rule logic a subclass supplies ------------------------------------

    def builds_on(self, card: Card, onto: Card) -> bool:
        """Whether ``card`` may go onto a column whose last card is ``onto``."""
        raise NotImplementedError

    def takes_empty(self, card: Card) -> bool:
        """Whether ``card`` may go onto an empty column."""
        raise NotImplementedError

    def _pick(self, column: list[Card], down: int, index: int, action: Move) -> int:
        """Index in a non-empty ``column`` of the card ``action`` names (below the
        top card), which moves with everything on it; raise the rule if it may not."""
        raise NotImplementedError

    def _refuse_build(self, card: Card, onto: Card, action: Action) -> NoReturn:
        """Raise the rule that forbids ``card`` onto ``onto``."""
        raise NotImplementedError

    def _refuse_empty(self, card: Card, action: Action) -> NoReturn:
        """Raise the rule that forbids ``card`` onto an empty column."""
        raise NotImplementedError

    # -- compiling -------------------------------------------------------

    def compile(self, key: object, action: Action) -> Op:
        """The op of ``action``, remembered under ``key`` (its text, or an action object's
        :func:`~engine.actions.json_key`)."""
        if type(action) is Draw:
            op = _DRAW_OP if self.has_stock else Op(OpKind.REFUSED, 0, 0, None, "S", (), (), DRAW)
        elif type(action) is Move:
            op = self._move_op(
                action.source, action.source_index, action.target, action.target_index, action.card, action.text, action
            )
        else:
            op = _UNDO_OP
        if key is not None:
            self._remember(key, op)
        return op

    def compile_text(self, text: str) -> Op:
        """The op of an action text seen for the first time: a canonical text is
        looked up piece by piece, anything else is parsed
        (:class:`~engine.errors.InvalidActionError` on bad syntax)."""
        left, _, target = text.partition(">")
        source, _, card_text = left.partition(":")
        src = self._sources.get(source)
        dst = self._targets.get(target)
        card = self._cards.get(card_text)
        if src is None or dst is None or card is None:
            return (self.compile(text, parse_text(text)))
        op = self._move_op(src[0], src[1], dst[0], dst[1], card, text, None)
        return self._remember(text, op)

    def _remember(self, key: object, op: Op) -> Op:
        ops = self._ops
        if len(ops) >= self.OPS_CAP:
            ops.clear()  # texts no log repeats, or a flood of them: start again with those in use
        ops[key] = op
        return op

    def _move_op(
        self,
        source: str,
        number: int,
        target: str,
        target_number: int | None,
        card: Card | None,
        text: str,
        action: Move | None,
    ) -> Op:
        """The op of a move from pile ``source``/``number`` to ``target``/``target_number``."""
        if source == "T":
            if not 0 < number <= self.n_columns:
                return Op(OpKind.REFUSED, number, 0, card, text, (), (), action)
            index = number - 1
        elif source == "W":
            if not self.has_stock:
                return Op(OpKind.REFUSED, 0, 0, card, text, (), (), action)
            index = 0
        else:
            if not 0 < number <= self.n_foundations:
                return Op(OpKind.REFUSED, number, 0, card, text, (), (), action)
            index = number - 1
        if card is None:
            return Op(OpKind.UNNAMED, index, 0, None, text, (), (), action)
        if target == "F" and source != "F":
            slots = self.slots_of_suit[card.suit]
            if target_number is not None:
                slots = tuple(slot for slot in slots if slot == target_number - 1)
            head = f"{source}{number}:" if source != "W" else "W:"
            texts = tuple(
                f"{head}{card._text}>F{slot + 1}" if slot in slots else "" for slot in range(self.n_foundations)
            )
            kind = OpKind.COLUMN_UP if source == "T" else OpKind.WASTE_UP
            return Op(kind, index, -1, card, text, slots, texts, action)
        if target == "F" or target_number is None or not 0 < target_number <= self.n_columns:
            target_index = BAD_TARGET
        else:
            target_index = target_number - 1
            if source == "T" and target_index == index:
                target_index = BAD_TARGET
        kind = OpKind.COLUMN if source == "T" else OpKind.WASTE if source == "W" else OpKind.TAKEBACK
        return Op(kind, index, target_index, card, text, (), (), action)

    def _object_op(self, item: Any) -> Op:
        """The op of a log item that is not text: an action object (a JSON log's) or an action."""
        if isinstance(item, (Move, Draw, Undo)):
            key: object = item
            action: Action = item
        else:
            try:
                key = tuple(item.items())
                op = self._ops.get(key)
            except (AttributeError, TypeError):  # not an object, or a value no key can hold
                return self.compile(None, action_from_json(item))
            if op is not None:
                return op
            action = action_from_json(item)
        return self._ops.get(key) or self.compile(key, action)

    # -- the interpreter ---------------------------------------------------

    def run(self, game: Game, items: Iterable[Any], canonical: list[str], text_log: bool = False) -> None:
        """Check and apply log items in ``game``, as :meth:`Game.push_items` says."""
        base, rest = len(canonical), iter(items)
        try:
            if not game.won:
                self._apply(game, rest, canonical, base)
            for item in rest:  # the game is won: the next item is refused, once it parses
                self._game_over(item)
        finally:
            game.count(len(canonical) - base)

    def _apply(self, game: Game, items: Iterable[Any], canonical: list[str], base: int) -> None:
        """:meth:`run`'s loop over the items: until they run out or the game is won. Each op
        goes to the method of its kind, which checks it and applies it."""
        ops = self._ops
        pos, stack = game.position, game.stack
        for item in items:
            op = ops.get(item) if type(item) is str else self._object_op(item)
            if op is None:  # a text seen for the first time
                op = self.compile_text(item)
            kind = op.kind
            if kind is _UNNAMED:  # a move naming no card: named for this position
                op = self._name_card(pos, op)
                kind = op.kind
            if kind is _COLUMN:
                self._column_move(pos, stack, op, canonical)
            elif kind is _COLUMN_UP or kind is _WASTE_UP:
                if self._move_up(pos, stack, op, canonical):
                    game.won = True
                    return
            elif kind is _DRAW:
                self._draw(pos, stack, canonical)
            elif kind is _WASTE or kind is _TAKEBACK:
                self._top_onto_column(pos, stack, op, canonical)
            elif kind is _UNDO:
                canonical.append(step_back(pos, stack, game.in_effect + len(canonical) - base))
                game.stepped_back()
            else:
                self._refuse_source(op)

    def _column_move(self, pos: Position, stack: UndoStack, op: Op, canonical: list[str]) -> None:
        """A column's named card, with the cards on it where groups move, onto a column."""
        columns, down, si, card = pos.columns, pos.down, op.source, op.card
        src = columns[si]
        assert card is not None  # (named: a move naming no card is UNNAMED)
        if (n := len(src)) and src[-1] is card:
            start = n - 1
        else:  # where groups move, the named card and every card on it, if it is face up
            start = self._group_start(pos, src, op) if self.any_group else self._start(pos, src, op)
        dst = columns[op.target] if op.target != BAD_TARGET else self._refuse_target(op)
        if not (self._fit_table[dst[-1].index * 52 + card.index] if dst else self._empty_table[card.index]):
            self._refuse_column(card, dst, op)
        if start == n - 1:
            dst.append(src.pop())
        else:
            dst.extend(src[start:])
            del src[start:]
        flip = si if start and start == down[si] else -1  # a face-down card turns up
        if flip >= 0:
            down[si] = start - 1
            pos.score += self.score_flip
        stack.push(src, dst, n - start, flip, self.score_flip if flip >= 0 else 0, 0)
        canonical.append(op.text)

    def _move_up(self, pos: Position, stack: UndoStack, op: Op, canonical: list[str]) -> bool:
        """A column's or the waste's top card onto a foundation; whether it won the game."""
        si, card = op.source, op.card
        assert card is not None  # (named: a move naming no card is UNNAMED)
        from_column = op.kind is _COLUMN_UP
        src = pos.columns[si] if from_column else pos.waste
        if not ((n := len(src)) and src[-1] is card):
            self._start(pos, src, op)
        foundations, slots = pos.foundations, op.slots
        slot = slots[0] if slots and len(foundations[slots[0]]) == card.rank - 1 else self._up_slot(pos, op)
        foundations[slot].append(src.pop())
        flip = si if from_column and n > 1 and n - 1 == pos.down[si] else -1  # a face-down card turns up
        if flip >= 0:
            pos.down[si] = n - 2
        gain = self.score_foundation + (self.score_flip if flip >= 0 else 0)
        stack.push(src, foundations[slot], 1, flip, gain, 0)
        pos.score += gain
        canonical.append(op.texts[slot])
        return card.rank == 13 and pos.is_won  # the last card up is a king

    def _draw(self, pos: Position, stack: UndoStack, canonical: list[str]) -> None:
        """The stock's next card onto the waste."""
        if not pos.stock:
            self._refuse_draw()
        stack.push(pos.stock, pos.waste, 1, -1, 0, 0)
        pos.waste.append(pos.stock.pop())
        canonical.append("S")

    def _top_onto_column(self, pos: Position, stack: UndoStack, op: Op, canonical: list[str]) -> None:
        """The top card of the waste, or of a foundation (a take-back), onto a column."""
        from_waste = op.kind is _WASTE
        src = pos.waste if from_waste else pos.foundations[op.source]
        if not (src and src[-1] is op.card):
            self._start(pos, src, op)
        dst = pos.columns[op.target] if op.target != BAD_TARGET else self._refuse_target(op)
        top = src[-1]
        if not (self._fit_table[dst[-1].index * 52 + top.index] if dst else self._empty_table[top.index]):
            self._refuse_column(op.card, dst, op)
        dst.append(src.pop())
        before = pos.score
        score = before + (self.score_waste_to_column if from_waste else self.score_takeback)
        pos.score = score = score if score > 0 else 0
        takeback = 0 if from_waste else 1
        stack.push(src, dst, 1, -1, score - before, takeback)
        pos.takebacks += takeback
        canonical.append(op.text)

    def _group_start(self, pos: Position, src: list[Card], op: Op) -> int:
        """Where the group a column move takes starts in ``src`` (its named card is not the top
        card): the named card if it is face up and the group allowed, else the rule broken."""
        start, lowest = len(src) - 2, pos.down[op.source]
        while start >= lowest and src[start] is not op.card:
            start -= 1
        if start < lowest or len(src) - start > self.max_group or op.target == BAD_TARGET:
            return self._start(pos, src, op)
        return start

    def _up_slot(self, pos: Position, op: Op) -> int:
        """The foundation slot a move up goes to when it is not the first candidate (two decks: the
        suit's other slot), or the rule the move breaks."""
        assert op.card is not None
        for slot in op.slots[1:]:
            if len(pos.foundations[slot]) == op.card.rank - 1:
                return slot
        self._refuse_foundation(pos, op)

    @staticmethod
    def _refuse_draw() -> NoReturn:
        raise illegal("stock.empty", DRAW)

    def _game_over(self, item: Any) -> NoReturn:
        op = self._ops.get(item) or self.compile_text(item) if type(item) is str else self._object_op(item)
        raise illegal("game.over", self._action(op))

    # -- refusals: each raises the rule a check found broken ---------------------

    def _action(self, op: Op) -> Action:
        return op.action if op.action is not None else parse_text(op.text)

    def _refuse_source(self, op: Op) -> NoReturn:
        """A pile the rule set does not have, as the source (or the stock)."""
        action = self._action(op)
        if action is DRAW or (type(action) is Move and action.source == "W"):
            raise illegal("stock.none", action, game=self.name)
        assert type(action) is Move
        if action.source == "T":
            raise illegal(
                "pile.no-such-column", action, game=self.name, count=self.n_columns, number=action.source_index
            )
        raise illegal(
            "pile.no-such-foundation", action, game=self.name, count=self.n_foundations, number=action.source_index
        )

    def _refuse_top(self, src: list[Card], op: Op) -> NoReturn:
        """The waste or a foundation is empty, or its top card is not the one named."""
        action = self._action(op)
        where, number = ("waste", 0) if op.kind in (OpKind.WASTE, OpKind.WASTE_UP) else ("foundation", op.source + 1)
        if not src:
            if where == "waste":
                raise illegal("source.empty:waste", action)
            raise illegal("source.empty:foundation", action, number=number)
        raise illegal(f"card.mismatch:{where}", action, named=op.card, card=src[-1], number=number)

    def _start(self, pos: Position, src: list[Card], op: Op) -> int:
        """Where the cards ``op`` takes start in ``src`` when its named card is not the top
        one: the game's pick rule, then (onto a column) the target's and the group size's
        rules, or (onto a foundation) one card at a time; raise the first rule broken."""
        if op.kind not in (OpKind.COLUMN, OpKind.COLUMN_UP):
            self._refuse_top(src, op)
        action = self._action(op)
        assert type(action) is Move
        if not src:
            raise illegal("source.empty:column", action, number=op.source + 1)
        start = self._pick(src, pos.down[op.source], op.source, action)
        if op.kind is OpKind.COLUMN_UP:
            raise illegal("foundation.one-card", action, card=op.card, above=len(src) - start - 1)
        if op.target == BAD_TARGET:
            self._refuse_target(op)
        count = len(src) - start
        if count > self.max_group:
            raise illegal("group.max-20", action, limit=self.max_group, count=count)
        return start

    def _refuse_target(self, op: Op) -> NoReturn:
        action = self._action(op)
        assert type(action) is Move
        if action.target == "F":
            raise illegal("foundation.to-foundation", action)
        if action.source == "T" and action.source_index == action.target_index:
            raise illegal("move.same-column", action)
        raise illegal("pile.no-such-column", action, game=self.name, count=self.n_columns, number=action.target_index)

    def _refuse_column(self, card: Card | None, dst: list[Card], op: Op) -> NoReturn:
        assert card is not None  # (a move naming no card was named before its checks)
        if dst:
            self._refuse_build(card, dst[-1], self._action(op))
        self._refuse_empty(card, self._action(op))

    def _refuse_foundation(self, pos: Position, op: Op) -> NoReturn:
        """No slot the move allows takes its card: the rule each slot breaks, the
        named one's (``F3``) or the first of the card's suit (``F``)."""
        action = self._action(op)
        assert type(action) is Move and op.card is not None
        card = op.card
        if action.target_index is None:
            slot = self.slots_of_suit[card.suit][0]
        elif not 0 < action.target_index <= self.n_foundations:
            raise illegal(
                "pile.no-such-foundation", action, game=self.name, count=self.n_foundations, number=action.target_index
            )
        else:
            slot = action.target_index - 1
        suit = self.foundation_suits[slot]
        if suit != card.suit:
            raise illegal("foundation.suit", action, number=slot + 1, suit=SUIT_SYMBOLS[suit], card=card)
        f = pos.foundations[slot]
        if not f:
            raise illegal("foundation.build:empty", action, number=slot + 1, card=card)
        if len(f) == 13:
            raise illegal("foundation.build:complete", action, number=slot + 1, card=card)
        raise illegal(
            "foundation.build:next", action, number=slot + 1, top=f[-1], next=Card(len(f) + 1, suit), card=card
        )

    def _name_card(self, pos: Position, op: Op) -> Op:
        """The op of a move that names no card, for this position: its source's top card named."""
        action = self._action(op)
        assert type(action) is Move
        if action.source == "T":
            pile, where = pos.columns[op.source], "column"
        elif action.source == "W":
            pile, where = pos.waste, "waste"
        else:
            pile, where = pos.foundations[op.source], "foundation"
        if not pile:
            if where == "waste":
                raise illegal("source.empty:waste", action)
            raise illegal(f"source.empty:{where}", action, number=op.source + 1)
        named = Move(action.source, action.source_index, action.target, action.target_index, pile[-1])
        return self._move_op(
            named.source, named.source_index, named.target, named.target_index, named.card, named.text, action
        )

    # -- legal moves -----------------------------------------------------

    def accepts_on_column(self, card: Card, column: list[Card]) -> bool:
        """Whether ``card`` (as the bottom of what moves) may go onto ``column``."""
        return card in self.fits[column[-1]] if column else card in self.fills_empty

    def foundation_accepts(self, pos: Position, slot: int, card: Card) -> bool:
        return self.foundation_suits[slot] == card.suit and len(pos.foundations[slot]) == card.rank - 1

    def legal_moves(self, pos: Position) -> list[Action]:
        """Every legal action other than undo, in canonical form."""
        moves: list[Action] = []
        columns = pos.columns
        n = self.n_columns
        for i in range(n):
            src = columns[i]
            if not src:
                continue
            for start in range(max(pos.down[i], len(src) - self.max_group), len(src)):
                card = src[start]
                for j in range(n):
                    if j != i and self.accepts_on_column(card, columns[j]):
                        moves.append(Move("T", i + 1, "T", j + 1, card))
            top = src[-1]
            moves += self._up_moves(pos, "T", i + 1, top)
        if pos.waste:
            top = pos.waste[-1]
            for j in range(n):
                if self.accepts_on_column(top, columns[j]):
                    moves.append(Move("W", 0, "T", j + 1, top))
            moves += self._up_moves(pos, "W", 0, top)
        for slot, f in enumerate(pos.foundations):
            if f:
                for j in range(n):
                    if self.accepts_on_column(f[-1], columns[j]):
                        moves.append(Move("F", slot + 1, "T", j + 1, f[-1]))
        if pos.stock:
            moves.append(DRAW)
        return moves

    def _up_moves(self, pos: Position, source: str, number: int, card: Card) -> list[Action]:
        return [
            Move(source, number, "F", slot + 1, card)
            for slot in range(self.n_foundations)
            if self.foundation_accepts(pos, slot, card)
        ]


_DRAW_OP = Op(OpKind.DRAW, 0, 0, None, "S", (), (), DRAW)
