"""Board kinds, declared as data (:data:`KINDS`, like Nakama's leaderboards): each kind
declares its id, what it ranks, the scope that names one board of it (a deal, a
variant, a challenge), which records it takes, and its order: the *rank chain*
(fields, each ascending or descending; equal values share a rank, 1-2-2-4) then the
*tie-breaks* that make the order total. Board names (``<kind>:<scope>``), the packed
sort key, the reads (:mod:`api.boards.reads`), the upkeep (:mod:`api.boards.upkeep`),
the pages and ``docs/api.md`` all follow from the declaration:

- ``deal`` / ``deal-nt``: the best record of each player on one deal (``-nt``: only
  records without take-backs);
- ``variant`` / ``variant-nt``: the raw best across a variant's deals (``GET
  /leaderboard`` without a code);
- ``challenge``: the best record received in a challenge's window on its deal, when it is the game of an
  attempt at that challenge (one per player: ``api.challenges.windows``); on challenges prepared before attempts
  existed (``attempts_required`` false), any record received in the window;
- ``standings``: challenge points in a variant (3 for each challenge won, 1 for
  each one played and not won), rebuilt for a player whenever one of their challenge
  entries changes; its rows live in ``standings``.

The record kinds rank: won first, then more *earned* points (the app's score with
every take-back cancelling its card's points: :mod:`api.boards.earned`), then fewer
take-backs, then fewer moves; then the earlier submission, then the lower record id.
So no take-back loop and no undo ever raises a record's place: a loop adds take-backs
and moves and earns nothing, an undo adds a move. (Ranked by the app's score, a Yukon
win with 30 take-back loops scores 925 and would beat every honest win's 625.)
:func:`sort_key_of` packs a kind's rank chain into one integer, lower is better (each
field in its declared bits, a descending one counted down from its ceiling, a value
outside a later field's bits counted as the nearest end), so that one ascending index
``(board, sort_key, received_at, record_id)`` serves every page, cursor and rank
count. A record replaces a player's entry only if it is better
(:func:`api.boards.upkeep.record_stored`); hiding, showing or re-judging a record rebuilds that
player's entries from their records (:func:`api.boards.upkeep.rebuild_player`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    and_,
    case,
    literal,
)

from api.platform.models import Record

#: challenge points
POINTS_WON, POINTS_PLAYED = 3, 1


# -- board kinds, declared as data -------------------------------------------------

@dataclass(frozen=True)
class Field:
    """A field a board can rank by: the bits it takes in the packed key and, ranked
    descending, the ceiling it is counted down from (a leading field may go negative)."""

    name: str
    bits: int
    ceiling: int = 0
    boolean: bool = False

    @property
    def largest(self) -> int:
        """The largest value its bits hold."""
        return (1 << self.bits) - 1


#: won: 1 bit; earned: 0 … 4095 (a game earns at most 1360, Forty Thieves' 104 cards and 64 waste cards);
#: take-backs and moves: 25 bits each (33 million: a log holds at most ``MAX_LOG_ACTIONS`` actions, 5000 by
#: default); points: unbounded, only ever the leading field. The record kinds' key takes 63 bits.
FIELDS = {field.name: field for field in (
    Field("won", 1, 1, boolean=True), Field("earned", 12, 2 ** 12 - 1), Field("takebacks", 25), Field("moves", 25),
    Field("points", 32))}


@dataclass(frozen=True)
class BoardKind:
    """One kind of board, as data: see the module's docstring."""

    id: str
    #: what one row is, in a sentence (docs/api.md lists it)
    ranks: str
    #: what names one board of the kind: ``code``, ``variant`` or ``challenge``
    scope: str
    #: the rank chain: (field, descending?), most significant first; equal chains share a rank
    chain: tuple[tuple[str, bool], ...]
    #: the columns that make the order total after the chain
    tie_breaks: tuple[str, ...]
    #: only records without take-backs
    no_takebacks: bool = False
    #: the table its rows live in
    table: str = "board_entries"

    def name(self, scope: object) -> str:
        """The name of the kind's board for ``scope`` (a code, a variant or a challenge id)."""
        return f"{self.id}:{scope}"

    def sort_key(self, **values: int | bool) -> int:
        """The packed rank key of ``values`` (lower is better): see :func:`sort_key_of`."""
        key, unit = 0, 1
        for index in range(len(self.chain) - 1, -1, -1):
            name, descending = self.chain[index]
            field = FIELDS[name]
            value = int(values[name])
            if index:  # a later field's value outside its bits counts as the nearest end (it cannot spill over)
                value = max(0, min(value, field.largest))
            key += (field.ceiling - value if descending else value) * unit
            unit <<= field.bits
        return key

    def sort_key_of(self, columns: Any) -> ColumnElement[int]:
        """:meth:`sort_key` as a SQL expression over ``columns`` (a row's columns by name)."""
        key: Any = None
        unit = 1
        for index in range(len(self.chain) - 1, -1, -1):
            name, descending = self.chain[index]
            field = FIELDS[name]
            column = getattr(columns, name)
            value = case((column, 1), else_=0) if field.boolean else column
            if index and not field.boolean:
                value = case((value > field.largest, literal(field.largest, BigInteger)),
                             (value < 0, literal(0, BigInteger)), else_=value)
            part = (literal(field.ceiling, BigInteger) - value) if descending else value
            term = part if unit == 1 else part * literal(unit, BigInteger)
            key = term if key is None else key + term
            unit <<= field.bits
        return key  # type: ignore[no-any-return]


#: won first, then more earned points, then fewer take-backs, then fewer moves (see the module's docstring)
RECORD_CHAIN = (("won", True), ("earned", True), ("takebacks", False), ("moves", False))
RECORD_TIE_BREAKS = ("received_at", "record_id")
KINDS: dict[str, BoardKind] = {kind.id: kind for kind in (
    BoardKind("deal", "each player's best record of one deal", "code", RECORD_CHAIN, RECORD_TIE_BREAKS),
    BoardKind("deal-nt", "each player's best record of one deal without take-backs", "code", RECORD_CHAIN,
              RECORD_TIE_BREAKS, no_takebacks=True),
    BoardKind("variant", "each player's best record across a variant's deals (deals unlike each other)", "variant",
              RECORD_CHAIN, RECORD_TIE_BREAKS),
    BoardKind("variant-nt", "each player's best record across a variant's deals, without take-backs", "variant",
              RECORD_CHAIN, RECORD_TIE_BREAKS, no_takebacks=True),
    BoardKind("challenge", "each player's best record of a challenge's deal received in its window", "challenge",
              RECORD_CHAIN, RECORD_TIE_BREAKS),
    BoardKind("standings", "each player's challenge points in a variant", "variant", (("points", True),),
              ("updated_at", "player"), table="standings"),
)}
#: the kinds whose rows are board entries of records, and the one of challenges
RECORD_KINDS = tuple(kind for kind in KINDS.values() if kind.table == "board_entries")
CHALLENGE = KINDS["challenge"]


def eligible(records: Any = None) -> ColumnElement[bool]:
    """The one test of whether a record takes part in boards, challenges and statistics
    (``records``: the columns of the records table, or of rows shaped like it)."""
    columns = Record.__table__.c if records is None else records
    return and_(columns.status == "visible", columns.ranked.is_(True))  # hidden, in review or unranked: none


def sort_key(won: bool, earned: int, takebacks: int, moves: int) -> int:
    """:func:`sort_key_of` in Python (lower is better)."""
    return RECORD_KINDS[0].sort_key(won=won, earned=earned, takebacks=takebacks, moves=moves)


def sort_key_of(records: Any) -> ColumnElement[int]:
    """The record kinds' rank key packed into one integer, lower is better (they share one chain)."""
    return RECORD_KINDS[0].sort_key_of(records)

