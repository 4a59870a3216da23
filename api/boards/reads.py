"""Boards: each player's best eligible record per board, kept in ``board_entries``
on every write, and read a page at a time with keyset cursors.

**Board kinds are data** (:data:`KINDS`, like Nakama's leaderboards): each kind
declares its id, what it ranks, the scope that names one board of it (a deal, a
variant, a challenge), which records it takes, and its order: the *rank chain*
(fields, each ascending or descending; equal values share a rank, 1-2-2-4) then the
*tie-breaks* that make the order total. Board names (``<kind>:<scope>``), the packed
sort key, the reads, the pages and ``docs/api.md`` all follow from the declaration:

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
(:func:`record_stored`); hiding, showing or re-judging a record rebuilds that
player's entries from their records (:func:`rebuild_player`).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from types import SimpleNamespace
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    String,
    and_,
    bindparam,
    case,
    cast,
    delete,
    event,
    func,
    inspect,
    literal,
    null,
    or_,
    select,
    tuple_,
    union_all,
)
from sqlalchemy.dialects import postgresql

from api.platform.db import DollarStatement, packed_values
from api.platform.models import (
    BoardEntry,
    Challenge,
    ChallengeAttempt,
    DealVersion,
    LineBand,
    Player,
    PlayerStats,
    Record,
    Standing,
    UTCDateTime,
    dialect_insert,
)
from api.players.accounts import named

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


_ENTRY_COLUMNS = ("board", "player", "record_id", "challenge_id", "sort_key", "received_at", "won", "earned", "score",
                  "moves", "takebacks")


def board_rows(*where: ColumnElement[bool], source: Any = None) -> Any:
    """One row per board of each eligible record matching ``where`` (all boards of a record),
    read from the records table or from ``source``, rows shaped like it."""
    table = Record.__table__ if source is None else source
    c = table.c

    def rows(board: ColumnElement[str], extra: Sequence[ColumnElement[bool]] = (), challenge: Any = None,
             joined: Any = None) -> Any:
        statement = select(board.label("board"), c.player, c.id.label("record_id"),
                           (challenge if challenge is not None else literal(None, BigInteger)).label("challenge_id"),
                           sort_key_of(c).label("sort_key"), c.received_at, c.won, c.earned, c.score, c.moves,
                           c.takebacks)
        return statement.select_from(joined if joined is not None else table).where(eligible(c), *where, *extra)

    in_window = and_(Challenge.code == c.code, Challenge.starts_at <= c.received_at, c.received_at < Challenge.ends_at,
                     or_(Challenge.attempts_required.is_(False), c.attempt_id.in_(
                         select(ChallengeAttempt.id).where(ChallengeAttempt.challenge_id == Challenge.id))))
    scopes = {"code": c.code, "variant": c.variant, "challenge": cast(Challenge.id, String)}
    return union_all(*(
        rows(literal(kind.name("")) + scopes[kind.scope], (c.takebacks == 0,) if kind.no_takebacks else (),
             *((Challenge.id, table.join(Challenge.__table__, in_window)) if kind.scope == "challenge" else ()))
        for kind in RECORD_KINDS))


def _insert(connection: Connection) -> Any:
    return dialect_insert(connection.dialect.name)


def _upkeep_statements(dialect: str) -> tuple[Any, Any]:
    """The two statements of :func:`record_stored` for a dialect, built once (building them is
    most of their cost): the boards' upsert and the totals' upsert, for ``:record_id``."""
    if dialect in _UPKEEP:
        return _UPKEEP[dialect]
    insert_of = dialect_insert(dialect)
    entries = _entries_upsert(insert_of, board_rows(Record.id == bindparam("record_id")).subquery()).returning(
        BoardEntry.challenge_id, BoardEntry.player)
    totals = _totals_upsert(insert_of, Record.__table__, Record.id == bindparam("record_id"))
    if dialect == "postgresql":  # one round trip: the totals' upsert rides along as a data-modifying CTE
        entries, totals = entries.add_cte(totals.returning(PlayerStats.player).cte("totals")), None
    _UPKEEP[dialect] = entries, totals
    return entries, totals


_UPKEEP: dict[Any, Any] = {}


def _entries_upsert(insert_of: Any, rows: Any) -> Any:
    """Upsert ``rows`` (shaped like board entries) so that an entry is only replaced by a better one."""
    insert = insert_of(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(rows.c[name] for name in _ENTRY_COLUMNS)).where(literal(True)))
    new, old = insert.excluded, BoardEntry
    better = tuple_(new.sort_key, new.received_at, new.record_id) < tuple_(old.sort_key, old.received_at,
                                                                           old.record_id)
    return insert.on_conflict_do_update(
        index_elements=["board", "player"], where=better,
        set_={name: new[name] for name in _ENTRY_COLUMNS if name not in ("board", "player")})


def _totals_upsert(insert_of: Any, records: Any, *where: ColumnElement[bool]) -> Any:
    """Add the eligible records of ``records`` matching ``where`` (one per player and variant) to the totals."""
    c = records.c
    stats = insert_of(PlayerStats).from_select(
        ("player", "variant", "games", "wins", "best_score", "won_moves", "takebacks"),
        select(c.player, c.variant, literal(1), case((c.won, 1), else_=0), c.score,
               case((c.won, c.moves), else_=0), c.takebacks).where(eligible(c), *where))
    return stats.on_conflict_do_update(index_elements=["player", "variant"], set_={
        "games": PlayerStats.games + 1, "wins": PlayerStats.wins + stats.excluded.wins,
        "best_score": case((stats.excluded.best_score > PlayerStats.best_score, stats.excluded.best_score),
                           else_=PlayerStats.best_score),
        "won_moves": PlayerStats.won_moves + stats.excluded.won_moves,
        "takebacks": PlayerStats.takebacks + stats.excluded.takebacks})


@cache
def version_upsert(insert: Any, unless: Any = None) -> Any:
    """Bump a deal's version (``:code``) if it is still ``:seen`` (``None``: whatever it is),
    returning the new one; nothing when another record of the deal came first. On PostgreSQL
    also nothing while another submission holds the deal (``:lock_key``,
    :func:`api.fairplay.judging.hold_deal`): it gives way to the one that lost a race before; and
    nothing where the condition ``unless`` holds (a record refused in the same statement)."""
    versions = DealVersion.__table__
    seen = bindparam("seen", type_=BigInteger)
    row = select(bindparam("code", type_=versions.c.code.type), literal(1, BigInteger))
    if insert is postgresql.insert:
        row = row.where(func.pg_try_advisory_xact_lock(bindparam("lock_key", type_=BigInteger)))
    if unless is not None:
        row = row.where(~unless)
    return (insert(versions).from_select(["code", "version"], row)
            .on_conflict_do_update(index_elements=["code"], set_={"version": versions.c.version + 1},
                                   where=or_(seen.is_(None), versions.c.version == seen))
            .returning(versions.c.version))


def store_with_upkeep(upkeep: bool = True) -> Any:
    """PostgreSQL: one statement that stores a record and keeps everything that follows from
    it, in one round trip (in autocommit, also its commit):

    - the deal's version is bumped if it is still ``:seen`` (:func:`version_upsert`), else
      nothing is stored (a record of the deal came first: the caller judges again);
    - the player is ``:player_id``; or, for a claimed name (``:nfc`` and ``:skeleton``,
      :func:`api.players.accounts.name_params`), the player it reads as, unless that is a registered
      one and no key vouches (``:vouch``: then nothing is stored or changed); or a new
      tokenless player ``:new_name`` made here, with the version bumped (if the name was
      taken meanwhile, nothing is stored);
    - the record (the columns as bind parameters; nothing if the same game is stored), its
      line's index keys (``:bands``), its boards and the player's totals.

    One row: the new id (``None``: not stored), the ids of the challenges whose entry changed
    (then :func:`challenge_entries_changed` follows), whether the version was bumped, the
    player's id, and the id, name and registration of the player a claimed name reads as
    (for :func:`api.players.accounts.settle`). Built once, run as a
    :class:`api.platform.db.DollarStatement`. ``upkeep=False``:
    without the boards and totals, for a record that takes no part in them yet (flagged
    ``pending``, ``FAIRPLAY_JUDGE=worker``) and for ``bench.scale``'s comparison."""
    key = "store" if upkeep else "store, no upkeep"
    if key in _UPKEEP:
        return _UPKEEP[key]
    table, players = Record.__table__, Player.__table__
    columns = [column.name for column in table.columns if not column.primary_key]
    params = {name: bindparam(name, type_=table.c[name].type) for name in columns}
    claimed = named(players.c.id, players.c.name, players.c.token_hash.is_not(None).label("registered")).where(
        bindparam("nfc", type_=players.c.name.type).is_not(None)).cte("named")
    vouch = bindparam("vouch", type_=String)
    refused = select(claimed.c.id).where(claimed.c.registered, vouch.is_(None)).exists()
    version = version_upsert(postgresql.insert, refused).cte("version")
    new_player = (postgresql.insert(players).from_select(  # type: ignore[arg-type]
        ("name", "skeleton_hash", "token_hash", "created_at"),
        select(bindparam("new_name", type_=players.c.name.type), bindparam("new_skeleton", type_=String),
               cast(null(), players.c.token_hash.type), params["received_at"])
        .where(bindparam("new_name", type_=players.c.name.type).is_not(None), select(version.c.version).exists(),
               ~select(claimed.c.id).exists()))
        .on_conflict_do_nothing().returning(players.c.id).cte("new_player"))
    me = union_all(select(new_player.c.id.label("id")), select(claimed.c.id),
                   select(params["player_id"].label("id")).where(params["player_id"].is_not(None))).cte("me")
    settled = {  # the player a claimed name reads as, and the key that vouched for them if registered
        "player": func.coalesce(select(claimed.c.name).scalar_subquery(), params["player"]),
        "vouched_by": func.coalesce(select(vouch).where(claimed.c.registered).scalar_subquery(), params["vouched_by"]),
        "player_id": me.c.id}
    values = select(*(settled.get(name, params[name]) for name in columns)).where(
        select(version.c.version).exists())
    stored = (postgresql.insert(table).from_select(columns, values)  # type: ignore[arg-type]
              .on_conflict_do_nothing(index_elements=["player", "code", "log_hash"])
              .returning(*table.c).cte("stored"))
    entries = _entries_upsert(postgresql.insert, board_rows(source=stored).subquery()).returning(
        BoardEntry.challenge_id).cte("entries")
    totals = _totals_upsert(postgresql.insert, stored).returning(PlayerStats.player).cte("totals")
    bands = postgresql.insert(LineBand).from_select(
        ("band", "record_id"), select(packed_values("bands"), stored.c.id)).cte("bands")
    changed = select(func.array_agg(entries.c.challenge_id)).where(
        entries.c.challenge_id.is_not(None)).scalar_subquery() if upkeep else null()
    kept = [entries, totals, bands] if upkeep else [bands]
    statement = select(select(stored.c.id).scalar_subquery(), changed, select(version.c.version).exists(),
                       select(me.c.id).limit(1).scalar_subquery(), *(select(column).scalar_subquery()
                                                                    for column in claimed.c)).add_cte(*kept)
    _UPKEEP[key] = DollarStatement(statement)  # (8 KB: psycopg would parse it on every execution)
    return _UPKEEP[key]


def challenge_entries_changed(connection: Connection, player: str, challenge_ids: Iterable[int]) -> None:
    """The player's standing in the variant of each challenge whose entry of theirs changed."""
    for challenge_id in challenge_ids:
        connection.execute(_standing_statement(connection.dialect.name),
                           {"challenge_id": challenge_id, "player": player})


def record_stored(connection: Connection, record_id: int) -> None:
    """Upkeep after a new record is stored: it replaces the player's entry on each of its
    boards where it is better (an upsert whose update only happens then), and it is
    added to the player's totals; a changed challenge entry changes the player's
    standing. Runs in the caller's transaction; an ineligible record changes nothing."""
    entries, totals = _upkeep_statements(connection.dialect.name)
    changed: Sequence[Any] = connection.execute(entries, {"record_id": record_id}).all()
    if totals is not None:
        connection.execute(totals, {"record_id": record_id})
    for challenge_id, player in changed:
        if challenge_id is not None:
            challenge_entries_changed(connection, player, [challenge_id])


def rebuild_player(connection: Connection, player: str, variant: str) -> None:
    """Build a player's entries on every board of ``variant`` (and their totals and
    standing) again from their eligible records: after a record of theirs was hidden,
    shown or judged again. Reads only that player's records."""
    codes = select(Record.code).where(Record.player == player, Record.variant == variant).distinct().subquery()
    deal_boards = union_all(*(select(literal(kind.name("")) + codes.c.code)
                              for kind in RECORD_KINDS if kind.scope == "code"))
    variant_boards = [kind.name(variant) for kind in RECORD_KINDS if kind.scope == "variant"]
    connection.execute(delete(BoardEntry).where(  # by primary key: (board, player)
        BoardEntry.player == player, or_(BoardEntry.board.in_(variant_boards), BoardEntry.board.in_(deal_boards))))
    connection.execute(delete(BoardEntry).where(  # by the index of challenge entries
        BoardEntry.player == player, BoardEntry.challenge_id.is_not(None),
        BoardEntry.challenge_id.in_(select(Challenge.id).where(Challenge.variant == variant))))
    rows = board_rows(Record.player == player, Record.variant == variant).subquery()
    place = func.row_number().over(partition_by=(rows.c.board, rows.c.player),
                                   order_by=(rows.c.sort_key, rows.c.received_at, rows.c.record_id)).label("place")
    ranked = select(*(rows.c[name] for name in _ENTRY_COLUMNS), place).subquery()
    connection.execute(_insert(connection)(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(ranked.c[name] for name in _ENTRY_COLUMNS)).where(ranked.c.place == 1)))
    rebuild_standing(connection, variant, player)
    connection.execute(delete(PlayerStats).where(PlayerStats.player == player, PlayerStats.variant == variant))
    totals = (select(Record.player, Record.variant, func.count(), func.sum(case((Record.won, 1), else_=0)),
                     func.max(Record.score), func.sum(case((Record.won, Record.moves), else_=0)),
                     func.sum(Record.takebacks))
              .where(Record.player == player, Record.variant == variant, eligible())
              .group_by(Record.player, Record.variant))
    connection.execute(_insert(connection)(PlayerStats).from_select(
        ("player", "variant", "games", "wins", "best_score", "won_moves", "takebacks"), totals))


def rebuild_all(connection: Connection) -> None:
    """Every board, standing and total again from all the records (a bulk load, a repair):
    one pass of set-based statements, not a row at a time."""
    for table in (Standing, BoardEntry, PlayerStats):
        connection.execute(delete(table))
    rows = board_rows().subquery()
    place = func.row_number().over(partition_by=(rows.c.board, rows.c.player),
                                   order_by=(rows.c.sort_key, rows.c.received_at, rows.c.record_id)).label("place")
    ranked = select(*(rows.c[name] for name in _ENTRY_COLUMNS), place).subquery()
    connection.execute(_insert(connection)(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(ranked.c[name] for name in _ENTRY_COLUMNS)).where(ranked.c.place == 1)))
    totals = (select(Record.player, Record.variant, func.count(), func.sum(case((Record.won, 1), else_=0)),
                     func.max(Record.score), func.sum(case((Record.won, Record.moves), else_=0)),
                     func.sum(Record.takebacks))
              .where(eligible()).group_by(Record.player, Record.variant))
    connection.execute(_insert(connection)(PlayerStats).from_select(
        ("player", "variant", "games", "wins", "best_score", "won_moves", "takebacks"), totals))
    won = func.sum(case((BoardEntry.won, 1), else_=0))
    played = func.count()
    points = POINTS_WON * won + POINTS_PLAYED * (played - won)
    standings = (select(Challenge.variant, BoardEntry.player, points, won, played, _standing_key(points),
                        func.max(BoardEntry.received_at))
                 .join(Challenge, Challenge.id == BoardEntry.challenge_id)
                 .group_by(Challenge.variant, BoardEntry.player))
    connection.execute(_insert(connection)(Standing).from_select(
        ("variant", "player", "points", "challenges_won", "challenges_played", "sort_key", "updated_at"), standings))


def _standing_key(points: Any) -> Any:
    """The standings' packed rank key of a points expression (−points: lower is better)."""
    return KINDS["standings"].sort_key_of(SimpleNamespace(points=points))


def _standing_statement(dialect: str) -> Any:
    """One statement: the standing of ``:player`` in the variant of challenge ``:challenge_id``,
    from their challenge entries of that variant (after one of them got better)."""
    if ("standing", dialect) in _UPKEEP:
        return _UPKEEP[("standing", dialect)]
    insert_of = dialect_insert(dialect)
    variant = select(Challenge.variant).where(Challenge.id == bindparam("challenge_id")).scalar_subquery()
    won = func.sum(case((BoardEntry.won, 1), else_=0))
    played = func.count()
    points = POINTS_WON * won + POINTS_PLAYED * (played - won)
    rows = (select(Challenge.variant, BoardEntry.player, points, won, played, _standing_key(points),
                   func.max(BoardEntry.received_at))
            .join(Challenge, Challenge.id == BoardEntry.challenge_id)
            .where(BoardEntry.player == bindparam("player"), BoardEntry.challenge_id.is_not(None),
                   Challenge.variant == variant)
            .group_by(Challenge.variant, BoardEntry.player))
    insert = insert_of(Standing).from_select(
        ("variant", "player", "points", "challenges_won", "challenges_played", "sort_key", "updated_at"), rows)
    statement = insert.on_conflict_do_update(index_elements=["variant", "player"], set_={
        name: insert.excluded[name] for name in ("points", "challenges_won", "challenges_played", "sort_key",
                                                 "updated_at")})
    _UPKEEP[("standing", dialect)] = statement
    return statement


def rebuild_standing(connection: Connection, variant: str, player: str) -> None:
    """A player's challenge points in ``variant``, from their challenge entries."""
    entries = connection.execute(
        select(BoardEntry.won, BoardEntry.received_at).join(Challenge, Challenge.id == BoardEntry.challenge_id)
        .where(BoardEntry.player == player, BoardEntry.challenge_id.is_not(None), Challenge.variant == variant)).all()
    connection.execute(delete(Standing).where(Standing.variant == variant, Standing.player == player))
    if not entries:
        return
    won = sum(1 for entry in entries if entry.won)
    points = POINTS_WON * won + POINTS_PLAYED * (len(entries) - won)
    connection.execute(_insert(connection)(Standing).values(
        variant=variant, player=player, points=points, challenges_won=won, challenges_played=len(entries),
        sort_key=KINDS["standings"].sort_key(points=points), updated_at=max(entry.received_at for entry in entries)))


def fill_challenge(connection: Connection, challenge_id: int) -> None:
    """A new challenge's board from the records already received in its window on its deal
    (normally none: a challenge is prepared before its window opens)."""
    challenge = connection.execute(select(Challenge).where(Challenge.id == challenge_id)).one()
    rows = board_rows(Record.code == challenge.code, Record.received_at >= challenge.starts_at,
                      Record.received_at < challenge.ends_at).subquery()
    place = func.row_number().over(partition_by=(rows.c.board, rows.c.player),
                                   order_by=(rows.c.sort_key, rows.c.received_at, rows.c.record_id)).label("place")
    ranked = select(*(rows.c[name] for name in _ENTRY_COLUMNS), place).where(
        rows.c.challenge_id == challenge_id).subquery()
    players: Sequence[str] = connection.execute(_insert(connection)(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(ranked.c[name] for name in _ENTRY_COLUMNS)).where(ranked.c.place == 1))
        .returning(BoardEntry.player)).scalars().all()
    for player in players:
        rebuild_standing(connection, challenge.variant, player)


# -- reading a board ------------------------------------------------------

@dataclass(frozen=True)
class Board:
    """Where a board's rows live: the table, the rows of this board, and its order
    (the rank key first; the other columns break ties)."""

    table: Any
    where: ColumnElement[bool]
    order: tuple[Any, ...]
    player: Any

    @property
    def key(self) -> Any:
        return self.order[0]

    def _ordered(self) -> Any:
        return tuple_(*self.order)


def board(kind: BoardKind | str, scope: object) -> Board:
    """The board of ``kind`` for ``scope`` (a code, a variant or a challenge id): its rows
    and its order, the packed rank chain first, then the kind's tie-breaks."""
    kind = KINDS[kind] if isinstance(kind, str) else kind
    if kind.table == "standings":
        return Board(Standing, Standing.variant == scope,
                     (Standing.sort_key, *(getattr(Standing, name) for name in kind.tie_breaks)), Standing.player)
    return Board(BoardEntry, BoardEntry.board == kind.name(scope),
                 (BoardEntry.sort_key, *(getattr(BoardEntry, name) for name in kind.tie_breaks)), BoardEntry.player)


def board_named(name: str) -> Board:
    """The board of an entry's ``board`` column (``challenge:12``)."""
    kind, _, scope = name.partition(":")
    return board(kind, scope)


#: the most rows :func:`leaders` reads (a tie for first among more players names this many)
LEADERS = 20


def leaders(connection: Connection, found: Board, limit: int = LEADERS) -> list[Any]:
    """The rows ranked first on a board: every row tied with the best one (none on an empty
    board), in board order; two index probes, however large the board."""
    best = select(found.key).where(found.where).order_by(found.key).limit(1).scalar_subquery()
    return list(connection.execute(select(found.table).where(found.where, found.key == best)
                                   .order_by(*found.order).limit(limit)).all())


class BadCursor(ValueError):
    """A cursor this server did not hand out (or for another board)."""


def encode_cursor(values: Iterable[Any]) -> str:
    plain = [v.isoformat() if isinstance(v, datetime) else v for v in values]
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(text: str, kinds: Sequence[type]) -> list[Any]:
    """The values of a cursor, each checked against ``kinds`` (int, str or datetime): :class:`BadCursor`,
    saying what is wrong, for anything that is not a list of such values (a datetime with its zone and in
    range once in UTC, a whole number of 64 bits, text a database takes)."""
    try:
        values = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, RecursionError):  # (binascii.Error and UnicodeDecodeError are ValueErrors)
        raise BadCursor("not a cursor this server handed out: not base64 of JSON") from None
    if not isinstance(values, list) or len(values) != len(kinds):
        raise BadCursor(f"not a cursor this server handed out: expected a list of {len(kinds)} values")
    return [_cursor_value(index, value, kind) for index, (value, kind) in enumerate(zip(values, kinds))]


def _cursor_value(index: int, value: Any, kind: type) -> Any:
    """One value of a cursor, checked (``index``: its place, for the message)."""
    wrong = f"not a cursor this server handed out: value {index}"
    if kind is datetime:
        try:
            moment = datetime.fromisoformat(value)
        except (TypeError, ValueError):
            raise BadCursor(f"{wrong} is not an ISO 8601 time") from None
        if moment.tzinfo is None:
            raise BadCursor(f"{wrong} is a time without its zone")
        try:
            return moment.astimezone(UTC)
        except OverflowError:  # (0001-01-01T00:00:00+01:00 is before the first UTC time Python has)
            raise BadCursor(f"{wrong} is a time out of range") from None
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2 ** 63:
            raise BadCursor(f"{wrong} is not a whole number of 64 bits")
        return value
    if not isinstance(value, kind):
        raise BadCursor(f"{wrong} is not {kind.__name__}")
    if isinstance(value, str) and ("\x00" in value or not _encodes(value)):
        raise BadCursor(f"{wrong} is text no database takes")
    return value


def _encodes(value: str) -> bool:
    try:
        value.encode()
    except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800")
        return False
    return True


def _kinds(board: Board) -> tuple[type, ...]:
    return tuple(datetime if isinstance(column.type, UTCDateTime) else column.type.python_type
                 for column in board.order) + (int, int)


def _ranked(rows: Sequence[Any], board: Board, rank: int, position: int, previous_key: int | None
            ) -> list[tuple[int, Any]]:
    """``rows`` in board order with their ranks; ``rank``/``position`` belong to the row before them."""
    out = []
    for row in rows:
        position += 1
        key = getattr(row, board.key.key)
        if key != previous_key:
            rank = position
        previous_key = key
        out.append((rank, row))
    return out


def page(connection: Connection, board: Board, limit: int, cursor: str | None) -> dict[str, Any]:
    """A page of ``board`` after ``cursor`` (None: from the top). The cursor carries the
    last row's order values, rank and position, so no page counts what lies before it."""
    statement = select(board.table).where(board.where).order_by(*board.order).limit(limit + 1)
    rank, position, previous = 0, 0, None
    if cursor is not None:
        *after, rank, position = decode_cursor(cursor, _kinds(board))
        if not 1 <= rank <= position:
            raise BadCursor("not a cursor this server handed out: its rank and position do not fit")
        statement = statement.where(board._ordered() > tuple_(*(literal(v, c.type) for v, c in zip(after,
                                                                                                   board.order))))
        previous = after[0]
    rows = connection.execute(statement).all()
    return _page_of(board, _ranked(rows[:limit], board, rank, position, previous), len(rows) > limit, position)


def _page_of(board: Board, ranked: list[tuple[int, Any]], more: bool, start: int) -> dict[str, Any]:
    """The page's answer; ``start`` is the position of the row before its first row."""
    next_cursor = None
    if more and ranked:
        rank, last = ranked[-1]
        position = start + len(ranked)
        next_cursor = encode_cursor([*(getattr(last, c.key) for c in board.order), rank, position])
    return {"ranked": ranked, "has_more": more, "next_cursor": next_cursor}


def _count_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def find(connection: Connection, board: Board, player: str) -> Any:
    return connection.execute(select(board.table).where(board.where, board.player == player)).first()


def standing(connection: Connection, board: Board, player: str) -> dict[str, Any] | None:
    """A player's rank on a board and where that puts them: ``top_percent`` is the smallest
    whole percentage of the board's entries that includes their rank (rank 7 of 100:
    top 7 %), ``percentile`` the share of entries ranked strictly below them."""
    row = find(connection, board, player)
    if row is None:
        return None
    key = getattr(row, board.key.key)
    size, better, worse = connection.execute(   # one index-only scan of the board
        select(func.count(), _count_where(board.key < key), _count_where(board.key > key))
        .select_from(board.table).where(board.where)).one()
    return _standing(player, better, worse, size)


def _standing(player: str, better: int, worse: int, size: int) -> dict[str, Any]:
    rank = better + 1
    return {"player": player, "rank": rank, "entries": size, "top_percent": math.ceil(100 * rank / size),
            "percentile": round(100 * worse / size, 1)}


def around(connection: Connection, board: Board, player: str, limit: int) -> dict[str, Any] | None:
    """A window of ``limit`` rows with ``player``'s row in the middle (fewer above it at the
    top of the board, more below; the other way at the bottom), with the player's
    :func:`standing`. None: not on the board. The ranks and the standing come from one
    index-only scan of the board."""
    row = find(connection, board, player)
    if row is None:
        return None
    here = tuple_(*(literal(getattr(row, c.key), c.type) for c in board.order))
    above = connection.execute(select(board.table).where(board.where, board._ordered() < here)
                               .order_by(*(c.desc() for c in board.order)).limit(limit - 1)).all()
    below = connection.execute(select(board.table).where(board.where, board._ordered() > here)
                               .order_by(*board.order).limit(limit)).all()
    want_above = min(len(above), max((limit - 1) // 2, limit - 1 - len(below)))
    window = [*reversed(above[:want_above]), row, *below[:limit - 1 - want_above]]
    first, key = window[0], getattr(row, board.key.key)
    first_key = getattr(first, board.key.key)
    first_here = tuple_(*(literal(getattr(first, c.key), c.type) for c in board.order))
    size, better, worse, first_better, first_ahead = connection.execute(
        select(func.count(), _count_where(board.key < key), _count_where(board.key > key),
               _count_where(board.key < first_key), _count_where(board._ordered() < first_here))
        .select_from(board.table).where(board.where)).one()
    rank, position = first_better + 1, first_ahead + 1
    ranked = [(rank, first)] + _ranked(window[1:], board, rank, position, first_key)
    more = len(below) > limit - 1 - want_above
    found = _page_of(board, ranked, more, position - 1)
    found["player"] = _standing(player, better, worse, size)
    return found


# -- records written through the ORM (imports, admin changes, re-verification, test factories) --

_JUDGED = ("status", "ranked", "won", "earned", "score", "moves", "takebacks")


def _after_insert(_mapper: Any, connection: Connection, target: Record) -> None:
    record_stored(connection, target.id)


def _after_update(_mapper: Any, connection: Connection, target: Record) -> None:
    state = inspect(target)
    if any(state.attrs[name].history.has_changes() for name in _JUDGED):
        rebuild_player(connection, target.player, target.variant)


event.listen(Record, "after_insert", _after_insert)
event.listen(Record, "after_update", _after_update)
