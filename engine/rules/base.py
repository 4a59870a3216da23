"""What both games share: piles, foundations, take-backs, scoring with a floor at 0.

A rule set is a :class:`Rules` subclass. :meth:`Rules.play` checks one move
against a position, and only when every rule holds applies it and appends a
compact undo record (never a copy of the position) to the game's undo stack.
:meth:`Rules.compile` turns an action's text into what the replay loop
(:meth:`engine.game.Game.push_items`) needs to check and apply the common moves
itself, with the same checks; every refusal is still named by :meth:`Rules.play`.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from typing import ClassVar

from ..actions import DRAW, Action, Move
from ..cards import DECK, SUIT_SYMBOLS, Card
from ..messages import illegal
from ..position import Position
from ..shuffle import SplitMix64, shuffle

#: how many recent actions undo can reach
UNDO_DEPTH = 100


#: One undo record: (source list, target list, cards moved, column turned up or -1,
#: score before, take-backs before); the game keeps the last :data:`UNDO_DEPTH`.
UndoRecord = tuple[list[Card], list[Card], int, int, int, int]
UndoStack = deque[UndoRecord]


@lru_cache(maxsize=4096)
def _shuffled(decks: int, number: int) -> tuple[Card, ...]:
    """Shuffling is the costly part of a deal, and popular deals are replayed again and again."""
    deck = list(DECK) * decks
    shuffle(deck, SplitMix64(number))
    return tuple(deck)


class Rules:
    """One rule set. Subclasses set the class attributes and the column rules."""

    game: ClassVar[str]          # "YU" / "FT"
    letter: ClassVar[str]        # "C" / "R" / "N"
    name: ClassVar[str]          # for messages: "Yukon", "Forty Thieves"
    variant: ClassVar[str]       # "yukon-classic", ...
    decks: ClassVar[int]
    n_columns: ClassVar[int]
    foundation_suits: ClassVar[tuple[int, ...]]
    has_stock: ClassVar[bool]
    has_face_down: ClassVar[bool]
    max_group: ClassVar[int]
    #: points: card onto a foundation, face-down card turned up, waste card onto a column, take-back
    SCORE_FOUNDATION: ClassVar[int] = 10
    SCORE_FLIP: ClassVar[int] = 0
    SCORE_WASTE_TO_COLUMN: ClassVar[int] = 0
    SCORE_TAKEBACK: ClassVar[int] = 0

    @property
    def tag(self) -> str:
        """``YU1-C``: the rules field of a position's text form."""
        return f"{self.game}1-{self.letter}"

    @property
    def n_foundations(self) -> int:
        return len(self.foundation_suits)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tag}>"

    # -- the deal --------------------------------------------------------

    def shuffled_deck(self, number: int) -> list[Card]:
        """The deck(s) in unshuffled order, shuffled with SplitMix64 seeded by ``number``."""
        return list(_shuffled(self.decks, number))

    def deal(self, number: int) -> Position:
        """The starting position of deal ``number``."""
        raise NotImplementedError

    # -- checking moves ----------------------------------------------------

    def __init__(self) -> None:
        # the constants the replay hot path reads, copied onto the instance: CPython 3.11
        # looks an instance attribute up much faster than a class attribute through an instance
        for name in ("n_columns", "max_group", "has_stock", "SCORE_FLIP", "SCORE_FOUNDATION", "SCORE_TAKEBACK",
                     "SCORE_WASTE_TO_COLUMN"):
            setattr(self, name, getattr(type(self), name))
        # lookup tables for the replay hot path, built from the rule methods once per rule set
        #: onto a column whose last card is ``onto``: the cards that may go there
        self._fits: dict[Card, frozenset[Card]] = {
            onto: frozenset(card for card in DECK if self.builds_on(card, onto)) for onto in DECK}
        #: the cards an empty column takes
        self._fills_empty = frozenset(card for card in DECK if self.fills_empty(card))
        #: the foundation slots of each suit, left to right
        self._slots_of_suit = tuple(tuple(slot for slot, s in enumerate(self.foundation_suits) if s == suit)
                                    for suit in range(4))
        #: an action's text (or an action object's :func:`~engine.actions.json_key`) → its compiled
        #: form for :meth:`Game.push_items` (see :meth:`compile`)
        self._ops: dict[str | tuple, tuple] = {}

    #: the compiled forms :meth:`compile` makes, by their first field
    OP_COLUMN, OP_COLUMN_UP, OP_WASTE, OP_WASTE_UP, OP_DRAW, OP_UNDO, OP_TAKEBACK, OP_GENERAL = range(8)
    #: at most this many texts are remembered per rule set (the same few hundred actions make up most logs)
    OPS_CAP = 8192

    def compile(self, text: str | tuple, action: Action) -> tuple:
        """The compiled form of ``action`` (parsed from ``text``, or from an action
        object with that :func:`~engine.actions.json_key`), for the replay loop of
        :meth:`Game.push_items`, remembered for ``text``: a tuple ``(kind,
        target, card, canonical text, source column index)``, of kind ``OP_GENERAL``
        for an action that always takes the general path (:meth:`play`), which is
        any action whose canonical text depends on the position (no card named),
        a move from one foundation to another, or a pile number out of range.

        A compiled form holds what does not depend on the position: the piles'
        indexes, the named card and the canonical text (for a foundation, one per
        slot). The loop checks the rest, the same checks as :meth:`play`, and
        hands every action that fails one to :meth:`play`, which names the rule.
        """
        op: tuple = (self.OP_GENERAL, None, None, None, None)
        if action is DRAW:
            if self.has_stock:
                op = (self.OP_DRAW, None, None, "S", None)
        elif type(action) is not Move:
            op = (self.OP_UNDO, None, None, "U", None)
        elif action.card is not None and not (action.source == "F" and action.target == "F"):
            card = action.card
            if action.target == "F":
                slots = self._slots_of_suit[card.suit]
                if action.target_index is not None:
                    slots = tuple(slot for slot in slots if slot == action.target_index - 1)
                texts = {slot: Move(action.source, action.source_index, "F", slot + 1, card).text for slot in slots}
                target: object = (slots, card.rank - 1, texts)
            elif 0 < action.target_index <= self.n_columns:  # type: ignore[operator]
                target = action.target_index - 1  # type: ignore[operator]
            else:
                target = None
            if target is None:
                pass
            elif action.source == "F":
                if 0 < action.source_index <= self.n_foundations:
                    op = (self.OP_TAKEBACK, target, card, action.text, action.source_index - 1)
            elif action.source == "W":
                if self.has_stock:
                    op = (self.OP_WASTE if action.target == "T" else self.OP_WASTE_UP, target, card, action.text, None)
            elif 0 < action.source_index <= self.n_columns and action.source_index - 1 != target:
                op = (self.OP_COLUMN if action.target == "T" else self.OP_COLUMN_UP, target, card, action.text,
                      action.source_index - 1)
        if len(self._ops) >= self.OPS_CAP:
            self._ops.clear()  # (texts no log repeats, or a flood of them: start again with those in use)
        self._ops[text] = op
        return op

    def play(self, pos: Position, move: Move, undo: UndoStack) -> Move:
        """Check ``move`` in ``pos``, raising :class:`IllegalActionError` at the
        first broken rule (and changing nothing); then apply it, append its undo
        record to ``undo`` and return it in canonical form.

        The general path of a replay (a log's first use of a text, a move whose
        canonical text depends on the position, every refusal) and of
        :meth:`Game.push`: plain locals, table lookups instead of method calls
        for the common checks, every check before the first change, no
        allocation but the undo record (and a canonical move when the input was
        not one). Each failure is explained by the slower ``_check_*`` methods,
        which name the exact rule.
        """
        source = move.source
        named = move.card
        flip = -1
        gain = 0
        if source == "T":
            number = move.source_index
            if not 0 < number <= self.n_columns:
                self._column(pos, number, move)
            src = pos.columns[number - 1]
            if not src:
                raise illegal("source.empty:column", move, number=number)
            down = pos.down[number - 1]
            start = len(src) - 1
            if named is not None and named is not src[start]:  # a named card below the top
                start = self._pick(src, down, number - 1, move)
            if start and start == down:
                flip = number - 1
                gain = self.SCORE_FLIP
        elif source == "W":
            if not self.has_stock:
                self._no_stock(move)
            src = pos.waste
            if not src:
                raise illegal("source.empty:waste", move)
            start = len(src) - 1
            if named is not None and named is not src[start]:
                self._named_top(src[start], move, "waste", 0)
        else:
            slot = self._foundation(pos, move.source_index, move)
            src = pos.foundations[slot]
            if not src:
                raise illegal("source.empty:foundation", move, number=slot + 1)
            start = len(src) - 1
            if named is not None and named is not src[start]:
                self._named_top(src[start], move, "foundation", slot + 1)
        card = src[start]
        count = len(src) - start

        target_index = move.target_index
        if move.target == "F":
            if source == "F":
                raise illegal("foundation.to-foundation", move)
            if count > 1:
                raise illegal("foundation.one-card", move, card=card, above=count - 1)
            foundations = pos.foundations
            height = card.rank - 1
            if target_index is None:  # the first foundation of the card's suit that takes it
                for slot in self._slots_of_suit[card.suit]:
                    if len(foundations[slot]) == height:
                        break
                else:
                    slot = self._foundation_slot(pos, card, move)
            else:
                slot = target_index - 1
                if not (slot in self._slots_of_suit[card.suit] and len(foundations[slot]) == height):
                    slot = self._foundation_slot(pos, card, move)
            dst = foundations[slot]
            gain += self.SCORE_FOUNDATION
            takeback = 0
            target_index = slot + 1
        else:
            if not 0 < target_index <= self.n_columns:  # type: ignore[operator]
                self._column(pos, target_index, move)  # type: ignore[arg-type]
            dst = pos.columns[target_index - 1]  # type: ignore[operator]
            if dst is src:
                raise illegal("move.same-column", move)
            if count > self.max_group:
                raise illegal("group.max-20", move, limit=self.max_group, count=count)
            if dst:
                if card not in self._fits[dst[-1]]:
                    self._check_build(card, dst[-1], move)
            elif card not in self._fills_empty:
                self._check_empty(card, move)
            if source == "F":
                gain = self.SCORE_TAKEBACK
                takeback = 1
            else:
                takeback = 0
                if source == "W":
                    gain = self.SCORE_WASTE_TO_COLUMN
        # every rule holds: move the cards, keep the undo record, score
        if count == 1:
            dst.append(src.pop())
        else:
            dst.extend(src[start:])
            del src[start:]
        if flip >= 0:
            pos.down[flip] -= 1
        score = pos.score
        undo.append((src, dst, count, flip, score, pos.takebacks))
        score += gain
        pos.score = score if score > 0 else 0
        if takeback:
            pos.takebacks += 1
        pos.moves += 1
        if named is card and move.target_index == target_index:
            return move
        return Move(source, move.source_index, move.target, target_index, card)

    def check_draw(self, pos: Position) -> None:
        if not self.has_stock:
            self._no_stock(DRAW)
        if not pos.stock:
            raise illegal("stock.empty", DRAW)

    # -- pieces the subclasses refine -----------------------------------

    def _pick(self, column: list[Card], down: int, index: int, move: Move) -> int:
        """Index in ``column`` of the card the move picks up (with everything on top of it)."""
        raise NotImplementedError

    def _check_build(self, card: Card, onto: Card, move: Move) -> None:
        """Raise the rule that forbids ``card`` onto ``onto``."""
        raise NotImplementedError

    def _check_empty(self, card: Card, move: Move) -> None:
        """Raise the rule that forbids ``card`` onto an empty column."""
        raise NotImplementedError

    def builds_on(self, card: Card, onto: Card) -> bool:
        """Whether ``card`` may go onto a column whose last card is ``onto``."""
        raise NotImplementedError

    def fills_empty(self, card: Card) -> bool:
        """Whether ``card`` may go onto an empty column."""
        raise NotImplementedError

    def accepts_on_column(self, card: Card, column: list[Card]) -> bool:
        """Whether ``card`` (as the bottom of what moves) may go onto ``column``."""
        return self.builds_on(card, column[-1]) if column else self.fills_empty(card)

    # -- shared checks -------------------------------------------------

    def _column(self, pos: Position, number: int, move: Action) -> int:
        if not 1 <= number <= self.n_columns:
            raise illegal("pile.no-such-column", move, game=self.name, count=self.n_columns, number=number)
        return number - 1

    def _foundation(self, pos: Position, number: int, move: Action) -> int:
        if not 1 <= number <= self.n_foundations:
            raise illegal("pile.no-such-foundation", move, game=self.name, count=self.n_foundations, number=number)
        return number - 1

    def _no_stock(self, move: Action) -> None:
        raise illegal("stock.none", move, game=self.name)

    @staticmethod
    def _named_top(card: Card, move: Move, where: str, number: int) -> None:
        if move.card is not None and move.card is not card:
            raise illegal(f"card.mismatch:{where}", move, named=move.card, card=card, number=number)

    def foundation_accepts(self, pos: Position, slot: int, card: Card) -> bool:
        f = pos.foundations[slot]
        return self.foundation_suits[slot] == card.suit and len(f) == card.rank - 1

    def _foundation_slot(self, pos: Position, card: Card, move: Move) -> int:
        if move.target_index is not None:
            slot = self._foundation(pos, move.target_index, move)
            self._check_foundation(pos, slot, card, move)
            return slot
        slots = [i for i, suit in enumerate(self.foundation_suits) if suit == card.suit]
        for slot in slots:
            if self.foundation_accepts(pos, slot, card):
                return slot
        self._check_foundation(pos, slots[0], card, move)
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_foundation(self, pos: Position, slot: int, card: Card, move: Move) -> None:
        suit = self.foundation_suits[slot]
        if suit != card.suit:
            raise illegal("foundation.suit", move, number=slot + 1, suit=SUIT_SYMBOLS[suit], card=card)
        f = pos.foundations[slot]
        if len(f) != card.rank - 1:
            if not f:
                raise illegal("foundation.build:empty", move, number=slot + 1, card=card)
            if len(f) == 13:
                raise illegal("foundation.build:complete", move, number=slot + 1, card=card)
            raise illegal("foundation.build:next", move, number=slot + 1, top=f[-1], next=Card(len(f) + 1, suit),
                          card=card)

    # -- legal moves -----------------------------------------------------

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
            for slot in range(self.n_foundations):
                if self.foundation_accepts(pos, slot, top):
                    moves.append(Move("T", i + 1, "F", slot + 1, top))
        if pos.waste:
            top = pos.waste[-1]
            for j in range(n):
                if self.accepts_on_column(top, columns[j]):
                    moves.append(Move("W", 0, "T", j + 1, top))
            for slot in range(self.n_foundations):
                if self.foundation_accepts(pos, slot, top):
                    moves.append(Move("W", 0, "F", slot + 1, top))
        for slot, f in enumerate(pos.foundations):
            if f:
                for j in range(n):
                    if self.accepts_on_column(f[-1], columns[j]):
                        moves.append(Move("F", slot + 1, "T", j + 1, f[-1]))
        if pos.stock:
            moves.append(DRAW)
        return moves

