"""Boards: each player's best eligible record per board, kept in ``board_entries``
on every write, and read a page at a time with keyset cursors.

Boards of a record (``BoardEntry.board``):

- ``deal:<code>`` and ``deal-nt:<code>`` (only records without take-backs);
- ``variant:<variant>`` and ``variant-nt:<variant>`` (raw best across deals:
  ``GET /leaderboard`` without a code);
- ``challenge:<id>`` for each challenge whose deal it is and whose window it
  was received in.

The order of a board: won first, then the higher score, then fewer moves (the
*rank key*: equal keys share a rank, 1-2-2-4), then the earlier submission, then
the lower record id, so that the order is total. :data:`SORT_KEY` packs the rank
key into one integer, lower is better, so that one ascending index
``(board, sort_key, received_at, record_id)`` serves every page, cursor and
rank count. A record replaces a player's entry only if it is better
(:func:`record_stored`); hiding, showing or re-judging a record rebuilds that
player's entries from their records (:func:`rebuild_player`).

The like-for-like variant board is ``standings``: challenge points (3 for each
challenge won, 1 for each one played and not won), rebuilt for a player whenever
one of their challenge entries changes.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (BigInteger, ColumnElement, Connection, String, and_, case, cast, delete, event, func, inspect,
                        literal, or_, select, tuple_, union_all)
from sqlalchemy.dialects import postgresql, sqlite

from .models import BoardEntry, Challenge, PlayerStats, Record, Standing, UTCDateTime

#: rank key packing: won in bit 61, then 2^30 − 1 − score (scores are 0 … 2^30 − 1), then moves (< 2^31)
WON_UNIT, SCORE_UNIT, SCORE_CEILING = 2 ** 61, 2 ** 31, 2 ** 30 - 1
#: challenge points
POINTS_WON, POINTS_PLAYED = 3, 1


def eligible() -> ColumnElement[bool]:
    """The one test of whether a record takes part in boards, challenges and statistics."""
    return Record.status == "visible"


def sort_key(won: bool, score: int, moves: int) -> int:
    """:data:`SORT_KEY` in Python (lower is better)."""
    return (0 if won else 1) * WON_UNIT + (SCORE_CEILING - score) * SCORE_UNIT + moves


SORT_KEY = (case((Record.won, 0), else_=1) * literal(WON_UNIT, BigInteger)
            + (literal(SCORE_CEILING, BigInteger) - Record.score) * literal(SCORE_UNIT, BigInteger) + Record.moves)
_ENTRY_COLUMNS = ("board", "player", "record_id", "challenge_id", "sort_key", "received_at", "won", "score", "moves",
                  "takebacks")


def _rows(board: ColumnElement[str], where: Sequence[ColumnElement[bool]], challenge: Any = None,
          source: Any = None) -> Any:
    challenge_id = challenge if challenge is not None else literal(None, BigInteger)
    statement = select(board.label("board"), Record.player, Record.id.label("record_id"),
                       challenge_id.label("challenge_id"), SORT_KEY.label("sort_key"), Record.received_at, Record.won,
                       Record.score, Record.moves, Record.takebacks)
    if source is not None:
        statement = statement.select_from(source)
    return statement.where(eligible(), *where)


def board_rows(*where: ColumnElement[bool]) -> Any:
    """One row per board of each eligible record matching ``where`` (all boards of a record)."""
    no_takebacks = Record.takebacks == 0
    in_window = and_(Challenge.code == Record.code, Challenge.starts_at <= Record.received_at,
                     Record.received_at < Challenge.ends_at)
    return union_all(
        _rows(literal("deal:") + Record.code, where),
        _rows(literal("deal-nt:") + Record.code, (*where, no_takebacks)),
        _rows(literal("variant:") + Record.variant, where),
        _rows(literal("variant-nt:") + Record.variant, (*where, no_takebacks)),
        _rows(literal("challenge:") + cast(Challenge.id, String), where, Challenge.id,
              Record.__table__.join(Challenge.__table__, in_window)),
    )


def _insert(connection: Connection) -> Any:
    return (postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert)


def record_stored(connection: Connection, record_id: int) -> None:
    """Upkeep after a new record is stored: it replaces the player's entry on each of its
    boards where it is better (an upsert whose update only happens then), and it is
    added to the player's totals. Runs in the caller's transaction."""
    rows = board_rows(Record.id == record_id).subquery()
    insert = _insert(connection)(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(rows.c[name] for name in _ENTRY_COLUMNS)).where(literal(True)))
    new, old = insert.excluded, BoardEntry
    better = tuple_(new.sort_key, new.received_at, new.record_id) < tuple_(old.sort_key, old.received_at,
                                                                           old.record_id)
    upsert = insert.on_conflict_do_update(
        index_elements=["board", "player"], where=better,
        set_={name: new[name] for name in _ENTRY_COLUMNS if name not in ("board", "player")},
    ).returning(BoardEntry.challenge_id, BoardEntry.player)
    changed = connection.execute(upsert).all()
    challenged = {player for challenge_id, player in changed if challenge_id is not None}
    record = connection.execute(select(Record.player, Record.variant, Record.won, Record.score, Record.moves,
                                       Record.takebacks).where(Record.id == record_id, eligible())).first()
    if record is None:
        return
    for player in challenged:
        rebuild_standing(connection, record.variant, player)
    stats = _insert(connection)(PlayerStats).values(
        player=record.player, variant=record.variant, games=1, wins=int(record.won), best_score=record.score,
        won_moves=record.moves if record.won else 0, takebacks=record.takebacks)
    connection.execute(stats.on_conflict_do_update(index_elements=["player", "variant"], set_={
        "games": PlayerStats.games + 1, "wins": PlayerStats.wins + stats.excluded.wins,
        "best_score": case((stats.excluded.best_score > PlayerStats.best_score, stats.excluded.best_score),
                           else_=PlayerStats.best_score),
        "won_moves": PlayerStats.won_moves + stats.excluded.won_moves,
        "takebacks": PlayerStats.takebacks + stats.excluded.takebacks}))


def rebuild_player(connection: Connection, player: str, variant: str) -> None:
    """Build a player's entries on every board of ``variant`` (and their totals and
    standing) again from their eligible records: after a record of theirs was hidden,
    shown or judged again. Reads only that player's records."""
    challenges = select(Challenge.id).where(Challenge.variant == variant)
    boards_of_variant = or_(BoardEntry.board.in_((f"variant:{variant}", f"variant-nt:{variant}")),
                            BoardEntry.challenge_id.in_(challenges),
                            BoardEntry.record_id.in_(select(Record.id).where(Record.player == player,
                                                                              Record.variant == variant)))
    connection.execute(delete(BoardEntry).where(BoardEntry.player == player, boards_of_variant))
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


def rebuild_standing(connection: Connection, variant: str, player: str) -> None:
    """A player's challenge points in ``variant``, from their challenge entries."""
    entries = connection.execute(
        select(BoardEntry.won, BoardEntry.received_at).join(Challenge, Challenge.id == BoardEntry.challenge_id)
        .where(BoardEntry.player == player, Challenge.variant == variant)).all()
    connection.execute(delete(Standing).where(Standing.variant == variant, Standing.player == player))
    if not entries:
        return
    won = sum(1 for entry in entries if entry.won)
    points = POINTS_WON * won + POINTS_PLAYED * (len(entries) - won)
    connection.execute(_insert(connection)(Standing).values(
        variant=variant, player=player, points=points, challenges_won=won, challenges_played=len(entries),
        sort_key=-points, updated_at=max(entry.received_at for entry in entries)))


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
    players = connection.execute(_insert(connection)(BoardEntry).from_select(
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


def entry_board(name: str) -> Board:
    return Board(BoardEntry, BoardEntry.board == name,
                 (BoardEntry.sort_key, BoardEntry.received_at, BoardEntry.record_id), BoardEntry.player)


def standings_board(variant: str) -> Board:
    return Board(Standing, Standing.variant == variant, (Standing.sort_key, Standing.updated_at, Standing.player),
                 Standing.player)


class BadCursor(ValueError):
    """A cursor this server did not hand out (or for another board)."""


def encode_cursor(values: Iterable[Any]) -> str:
    plain = [v.isoformat() if isinstance(v, datetime) else v for v in values]
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(text: str, kinds: Sequence[type]) -> list[Any]:
    """The values of a cursor, each checked against ``kinds`` (int, str or datetime)."""
    try:
        values = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except ValueError:
        raise BadCursor("not a cursor this server handed out") from None
    if not isinstance(values, list) or len(values) != len(kinds):
        raise BadCursor("not a cursor this server handed out")
    decoded = []
    for value, kind in zip(values, kinds):
        if kind is datetime:
            try:
                value = datetime.fromisoformat(value)
            except (TypeError, ValueError):
                raise BadCursor("not a cursor this server handed out") from None
            if value.tzinfo is None:
                raise BadCursor("not a cursor this server handed out")
            value = value.astimezone(timezone.utc)
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2 ** 63:
                raise BadCursor("not a cursor this server handed out")
        elif not isinstance(value, kind):
            raise BadCursor("not a cursor this server handed out")
        decoded.append(value)
    return decoded


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


def _position(connection: Connection, board: Board, row: Any) -> tuple[int, int]:
    """The rank and 1-based position of ``row`` on ``board`` (counts the rows before it)."""
    key = getattr(row, board.key.key)
    better = connection.execute(select(func.count()).select_from(board.table)
                                .where(board.where, board.key < key)).scalar_one()
    ahead = connection.execute(select(func.count()).select_from(board.table).where(
        board.where, board._ordered() < tuple_(*(literal(getattr(row, c.key), c.type) for c in board.order)))
    ).scalar_one()
    return better + 1, ahead + 1


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
    size = connection.execute(select(func.count()).select_from(board.table).where(board.where)).scalar_one()
    better = connection.execute(select(func.count()).select_from(board.table)
                                .where(board.where, board.key < key)).scalar_one()
    worse = connection.execute(select(func.count()).select_from(board.table)
                               .where(board.where, board.key > key)).scalar_one()
    rank = better + 1
    return {"player": player, "rank": rank, "entries": size, "top_percent": math.ceil(100 * rank / size),
            "percentile": round(100 * worse / size, 1)}


def around(connection: Connection, board: Board, player: str, limit: int) -> dict[str, Any] | None:
    """A window of ``limit`` rows with ``player``'s row in the middle (fewer above it at the
    top of the board, more below; the other way at the bottom). None: not on the board."""
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
    first = window[0]
    rank, position = _position(connection, board, first)
    ranked = [(rank, first)] + _ranked(window[1:], board, rank, position, getattr(first, board.key.key))
    more = len(below) > limit - 1 - want_above
    return _page_of(board, ranked, more, position - 1)


# -- records written through the ORM (imports, admin changes, re-verification, test factories) --

_JUDGED = ("status", "won", "score", "moves", "takebacks")


def _after_insert(_mapper: Any, connection: Connection, target: Record) -> None:
    record_stored(connection, target.id)


def _after_update(_mapper: Any, connection: Connection, target: Record) -> None:
    state = inspect(target)
    if any(state.attrs[name].history.has_changes() for name in _JUDGED):
        rebuild_player(connection, target.player, target.variant)


event.listen(Record, "after_insert", _after_insert)
event.listen(Record, "after_update", _after_update)
