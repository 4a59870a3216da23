"""Reading a board: a page at a time with keyset cursors (one ascending index
``(board, sort_key, received_at, record_id)`` serves every page, cursor and rank count),
the leaders, a player's standing and the window around them (like Nakama's
around-owner reads)."""


from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    case,
    func,
    literal,
    select,
    tuple_,
)

from api.boards.kinds import KINDS, BoardKind
from api.platform.columns import UTCDateTime
from api.platform.models import BoardEntry, Standing

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

