"""What both games share: piles, foundations, take-backs, scoring with a floor at 0.

A rule set is a :class:`Rules` subclass. :meth:`Rules.plan` checks one move
against a position without changing it and returns a :class:`Plan`; the game
applies the plan and keeps a compact undo record of it.
"""

from __future__ import annotations

from typing import ClassVar

from ..actions import DRAW, Action, Move
from ..cards import ACE, KING, SUIT_NAMES, Card
from ..errors import IllegalActionError
from ..position import Position
from ..shuffle import SplitMix64, shuffle

#: how many recent actions undo can reach
UNDO_DEPTH = 100


#: What a legal move does, as a plain tuple (cheap on the hot path):
#: ``(src, start, dst, canonical, gain, takeback, flip)`` — take ``src[start:]``
#: onto ``dst``; ``canonical`` is the move naming its card and foundation;
#: ``gain`` the score change before the floor at 0; ``takeback`` 1 for a
#: foundation card put back on a column; ``flip`` the column whose face-down
#: card is turned up, or -1.
Plan = tuple[list[Card], int, list[Card], Move, int, int, int]


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
        from ..cards import DECK

        deck = list(DECK) * self.decks
        shuffle(deck, SplitMix64(number))
        return deck

    def deal(self, number: int) -> Position:
        """The starting position of deal ``number``."""
        raise NotImplementedError

    # -- checking moves ----------------------------------------------------

    def plan(self, pos: Position, move: Move) -> Plan:
        """Check ``move`` in ``pos``; raise :class:`IllegalActionError` at the first broken rule.

        This is the replay hot path: plain locals and early checks, no allocation
        but the result tuple (and a canonical move when the input was not one).
        """
        source = move.source
        flip = -1
        gain = 0
        if source == "T":
            number = move.source_index
            if not 0 < number <= self.n_columns:
                self._column(pos, number, move)
            src = pos.columns[number - 1]
            if not src:
                raise IllegalActionError("source.empty", f"Column {number} is empty: there is no card to move.", move)
            down = pos.down[number - 1]
            start = self._pick(src, down, number - 1, move)
            if start and start == down:
                flip = number - 1
                gain = self.SCORE_FLIP
        elif source == "W":
            if not self.has_stock:
                self._no_stock(move)
            src = pos.waste
            if not src:
                raise IllegalActionError("source.empty", "The waste is empty: draw from the stock first.", move)
            start = len(src) - 1
            self._named_top(src[start], move, "the waste")
        else:
            slot = self._foundation(pos, move.source_index, move)
            src = pos.foundations[slot]
            if not src:
                raise IllegalActionError("source.empty", f"Foundation {slot + 1} is empty: there is no card to take back.", move)
            start = len(src) - 1
            self._named_top(src[start], move, f"foundation {slot + 1}")
        card = src[start]
        count = len(src) - start

        if move.target == "F":
            if source == "F":
                raise IllegalActionError(
                    "foundation.to-foundation",
                    "A foundation card goes back only to a column, never to another foundation.", move)
            if count > 1:
                raise IllegalActionError(
                    "foundation.one-card",
                    f"Foundations take one card at a time, from the end of a column: {card} has "
                    f"{count - 1} card(s) on top of it.", move)
            slot = self._foundation_slot(pos, card, move)
            dst = pos.foundations[slot]
            gain += self.SCORE_FOUNDATION
            takeback = 0
            target_index = slot + 1
        else:
            target_index = move.target_index  # type: ignore[assignment]
            if not 0 < target_index <= self.n_columns:
                self._column(pos, target_index, move)
            dst = pos.columns[target_index - 1]
            if dst is src:
                raise IllegalActionError("move.same-column",
                                         "A card never moves onto the column it came from.", move)
            if count > self.max_group:
                raise IllegalActionError(
                    "group.max-20", f"The app moves at most {self.max_group} cards at once; this group has {count}.",
                    move)
            if dst:
                if not self.builds_on(card, dst[-1]):
                    self._check_build(card, dst[-1], move)
            elif not self.fills_empty(card):
                self._check_empty(card, move)
            if source == "F":
                gain = self.SCORE_TAKEBACK
                takeback = 1
            else:
                takeback = 0
                if source == "W":
                    gain = self.SCORE_WASTE_TO_COLUMN
        if move.card is card and move.target_index == target_index:
            return src, start, dst, move, gain, takeback, flip
        return src, start, dst, Move(source, move.source_index, move.target, target_index, card), gain, takeback, flip

    def check_draw(self, pos: Position) -> None:
        if not self.has_stock:
            self._no_stock(DRAW)
        if not pos.stock:
            raise IllegalActionError(
                "stock.empty", "The stock is empty: it is gone through only once, with no redeal.", DRAW)

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
            raise IllegalActionError(
                "pile.no-such-column", f"{self.name} has columns T1 to T{self.n_columns}; there is no T{number}.", move)
        return number - 1

    def _foundation(self, pos: Position, number: int, move: Action) -> int:
        if not 1 <= number <= self.n_foundations:
            raise IllegalActionError(
                "pile.no-such-foundation",
                f"{self.name} has foundations F1 to F{self.n_foundations}; there is no F{number}.", move)
        return number - 1

    def _no_stock(self, move: Action) -> None:
        raise IllegalActionError("stock.none", f"{self.name} has no stock and no waste: every card is dealt to the columns.", move)

    @staticmethod
    def _named_top(card: Card, move: Move, where: str) -> None:
        if move.card is not None and move.card is not card:
            raise IllegalActionError(
                "card.mismatch", f"The action names {move.card}, but the top card of {where} is {card}.", move)

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
            raise IllegalActionError(
                "foundation.suit", f"Foundation {slot + 1} takes only {SUIT_NAMES[suit]}; {card} cannot go there.", move)
        f = pos.foundations[slot]
        if len(f) != card.rank - 1:
            if len(f) == 13:
                need = "it is complete, up to the king"
            elif not f:
                need = f"it starts with the ace, not {card}"
            else:
                need = f"it takes {Card(len(f) + 1, suit)} next, not {card}"
            raise IllegalActionError(
                "foundation.build", f"Foundations are built up in suit from ace to king, one card at a time: "
                f"foundation {slot + 1} shows {f[-1] if f else 'no card'}, so {need}.", move)

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


def is_king(card: Card) -> bool:
    return card.rank == KING


def is_ace(card: Card) -> bool:
    return card.rank == ACE
