"""The boards' upkeep: every board entry, standing and player total follows from the
records, kept on every write (:func:`record_stored`, and the records' ORM hooks below),
rebuilt for one player (:func:`rebuild_player`), for a new challenge
(:func:`fill_challenge`) or for everything (:func:`rebuild_all`). The statements that
store a record on PostgreSQL (:mod:`api.records.store`) reuse :func:`board_rows`,
:func:`entries_upsert` and :func:`totals_upsert`."""


from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
    or_,
    select,
    tuple_,
    union_all,
)

from api.boards.kinds import KINDS, POINTS_PLAYED, POINTS_WON, RECORD_KINDS, eligible, sort_key_of
from api.platform.columns import dialect_insert
from api.platform.models import BoardEntry, Challenge, ChallengeAttempt, PlayerStats, Record, Standing

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
    entries = entries_upsert(insert_of, board_rows(Record.id == bindparam("record_id")).subquery()).returning(
        BoardEntry.challenge_id, BoardEntry.player)
    totals = totals_upsert(insert_of, Record.__table__, Record.id == bindparam("record_id"))
    if dialect == "postgresql":  # one round trip: the totals' upsert rides along as a data-modifying CTE
        entries, totals = entries.add_cte(totals.returning(PlayerStats.player).cte("totals")), None
    _UPKEEP[dialect] = entries, totals
    return entries, totals


_UPKEEP: dict[Any, Any] = {}


def entries_upsert(insert_of: Any, rows: Any) -> Any:
    """Upsert ``rows`` (shaped like board entries) so that an entry is only replaced by a better one."""
    insert = insert_of(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(rows.c[name] for name in _ENTRY_COLUMNS)).where(literal(True)))
    new, old = insert.excluded, BoardEntry
    better = tuple_(new.sort_key, new.received_at, new.record_id) < tuple_(old.sort_key, old.received_at,
                                                                           old.record_id)
    return insert.on_conflict_do_update(
        index_elements=["board", "player"], where=better,
        set_={name: new[name] for name in _ENTRY_COLUMNS if name not in ("board", "player")})


def totals_upsert(insert_of: Any, records: Any, *where: ColumnElement[bool]) -> Any:
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
    _insert_best(connection, board_rows(Record.player == player, Record.variant == variant))
    rebuild_standing(connection, variant, player)
    connection.execute(delete(PlayerStats).where(PlayerStats.player == player, PlayerStats.variant == variant))
    _insert_totals(connection, Record.player == player, Record.variant == variant)


def rebuild_all(connection: Connection) -> None:
    """Every board, standing and total again from all the records (a bulk load, a repair):
    one pass of set-based statements, not a row at a time."""
    for table in (Standing, BoardEntry, PlayerStats):
        connection.execute(delete(table))
    _insert_best(connection, board_rows())
    _insert_totals(connection)
    connection.execute(_insert(connection)(Standing).from_select(_STANDING_COLUMNS, _standings_rows()))


def _insert_best(connection: Connection, rows: Any, *where: Callable[[Any], ColumnElement[bool]]) -> Sequence[str]:
    """Insert the best of ``rows`` (shaped like board entries) matching ``where`` per board and
    player as their entries; the players of the entries inserted."""
    found = rows.subquery()
    place = func.row_number().over(partition_by=(found.c.board, found.c.player),
                                   order_by=(found.c.sort_key, found.c.received_at, found.c.record_id)).label("place")
    ranked = select(*(found.c[name] for name in _ENTRY_COLUMNS), place).where(
        *(condition(found.c) for condition in where)).subquery()
    return connection.execute(_insert(connection)(BoardEntry).from_select(
        _ENTRY_COLUMNS, select(*(ranked.c[name] for name in _ENTRY_COLUMNS)).where(ranked.c.place == 1))
        .returning(BoardEntry.player)).scalars().all()


def _insert_totals(connection: Connection, *where: ColumnElement[bool]) -> None:
    """The players' totals per variant from their eligible records matching ``where``."""
    totals = (select(Record.player, Record.variant, func.count(), func.sum(case((Record.won, 1), else_=0)),
                     func.max(Record.score), func.sum(case((Record.won, Record.moves), else_=0)),
                     func.sum(Record.takebacks))
              .where(eligible(), *where).group_by(Record.player, Record.variant))
    connection.execute(_insert(connection)(PlayerStats).from_select(
        ("player", "variant", "games", "wins", "best_score", "won_moves", "takebacks"), totals))


_STANDING_COLUMNS = ("variant", "player", "points", "challenges_won", "challenges_played", "sort_key", "updated_at")


def _standings_rows(*where: ColumnElement[bool]) -> Any:
    """Each player's challenge points per variant, from their challenge entries matching ``where``."""
    won = func.sum(case((BoardEntry.won, 1), else_=0))
    played = func.count()
    points = POINTS_WON * won + POINTS_PLAYED * (played - won)
    return (select(Challenge.variant, BoardEntry.player, points, won, played, _standing_key(points),
                   func.max(BoardEntry.received_at))
            .join(Challenge, Challenge.id == BoardEntry.challenge_id)
            .where(*where).group_by(Challenge.variant, BoardEntry.player))


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
    rows = _standings_rows(BoardEntry.player == bindparam("player"), BoardEntry.challenge_id.is_not(None),
                           Challenge.variant == variant)
    insert = insert_of(Standing).from_select(_STANDING_COLUMNS, rows)
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
                      Record.received_at < challenge.ends_at)
    players = _insert_best(connection, rows, lambda found: found.challenge_id == challenge_id)
    for player in players:
        rebuild_standing(connection, challenge.variant, player)

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
