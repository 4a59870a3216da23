"""The record store: a record's identity (:func:`log_hash`), its column values from a
verified replay (:func:`new_record`), and storing it once with everything that follows
from it (the deal's version, a new tokenless player, the line's index keys, its boards
and the player's totals), with one function per database: :func:`store_postgres`, one
statement; :func:`store_sqlite`, statements of the caller's transaction.
:func:`store_record` is the entry point of submissions, the backup and the judgement of
pending records."""


from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    String,
    bindparam,
    cast,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

import engine
from api.boards.upkeep import board_rows, challenge_entries_changed, entries_upsert, record_stored, totals_upsert
from api.fairplay import evidence
from api.platform.db import DollarStatement, packed_values
from api.platform.models import BoardEntry, DealVersion, LineBand, Player, PlayerStats, Record, claims
from api.players.accounts import Claim, Submitter, name_params, named, named_player, settle, skeleton_hash
from api.records.deal_lock import deal_lock_key
from verifier import Verdict
from verifier.earned import earned

#: the ones of a record's columns that make it the same game (its unique constraint)
SAME_GAME = ("player", "code", "log_hash")


def log_hash(canonical: str) -> str:
    """The SHA-256 of a canonical log, hex: with the player and the code, a record's identity.

    >>> log_hash("S")[:12]
    '8de0b3c47f11'
    """
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_record(verdict: Verdict, body: dict[str, Any], submitted_by: str | None = None,
               replayed_earned: int | None = None) -> dict[str, Any]:
    """A new record's column values (all but its id), from a verified replay and the submission's
    own fields; ``replayed_earned``: the earned points that replay kept (:class:`engine.layouts.Line`),
    else worked out here (:func:`verifier.earned.earned`)."""
    claimed = body.get("claimed") or {}
    now = datetime.now(UTC)
    canonical = verdict.canonical_text
    points = (earned(str(verdict.code), canonical.split(), verdict.score, verdict.takebacks)
              if replayed_earned is None else replayed_earned)
    return dict(  # noqa: C408 (the columns read best as keywords)
        player=body.get("player"), code=str(verdict.code), variant=verdict.code.variant, number=verdict.code.number,
        canonical=canonical, log_hash=log_hash(canonical),
        won=verdict.won, score=verdict.score, moves=verdict.moves, actions=verdict.actions, undos=verdict.undos,
        takebacks=verdict.takebacks, foundation_cards=verdict.foundation_cards,
        earned=points,
        claimed_score=claimed.get("score"), claimed_moves=claimed.get("moves"), claimed_won=claimed.get("won"),
        elapsed_ms=body.get("elapsed_ms"), client=body.get("client"),
        engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
        received_at=now, verified_at=now, submitted_by=submitted_by, status="visible",
        player_id=None, ranked=True, flags=[], times=None, copy_of=None, vouched_by=None, line=None,
        attempt_id=None, server_elapsed_ms=None)


#: SQLite: the insert, skipping a stored game and returning the new id (the upkeep follows it)
_INSERT_SQLITE = (sqlite.insert(Record.__table__).on_conflict_do_nothing(  # type: ignore[arg-type]
    index_elements=list(SAME_GAME)).returning(Record.__table__.c.id))
#: SQLite: a new tokenless player (the name's ``INSERT … ON CONFLICT DO NOTHING RETURNING id``)
_NEW_PLAYER_SQLITE = sqlite.insert(Player.__table__).on_conflict_do_nothing().returning(  # type: ignore[arg-type]
    Player.__table__.c.id)


class Stale(Exception):
    """A record was not stored because its deal changed since it was judged (another record
    of it came first), or its new player's name was taken meanwhile: judge it again."""


def insert_record(connection: Connection, values: dict[str, Any], bands: list[int] | None = None,
                  seen: int | None = None, upkeep: bool = True, claim: Claim | None = None) -> int | None:
    """Insert a record with the column ``values`` and keep its boards and the player's totals
    (:func:`store_postgres` or :func:`store_sqlite`); the new id, or ``None`` if the same game
    is stored. :class:`Stale` if the deal's version is no longer ``seen``.

    ``seen``: the deal's version the record was judged at (``None``: store whatever it is). A
    ``player_id`` of ``None`` makes a new tokenless player of the record's name (its id is set
    in ``values``). ``bands``: the index keys of the record's effective line, stored with it.
    ``upkeep=False``: without the boards and totals, for a record that takes no part in them
    yet (flagged ``pending``). ``claim``: a claimed name whose player is settled here
    (:func:`settle_player`); a registered player no key vouches for stores and changes nothing
    (403 ``wrong-player``)."""
    store = store_postgres if connection.dialect.name == "postgresql" else store_sqlite
    return store(connection, values, sorted(set(bands or ())), seen, upkeep, claim)


def _new_player(values: dict[str, Any], skeleton: str | None) -> dict[str, Any]:
    """The name and skeleton of the new tokenless player a record makes (``None`` where it has one)."""
    new = values["player_id"] is None
    return {"new_name": values["player"] if new else None,
            "new_skeleton": (skeleton or skeleton_hash(values["player"])) if new else None}


def store_postgres(connection: Connection, values: dict[str, Any], bands: list[int], seen: int | None,
                   upkeep: bool, claim: Claim | None) -> int | None:
    """PostgreSQL: all of it in one statement (:func:`store_statement`: one round trip, atomic,
    and its own commit in autocommit), where a claimed name's player is also settled (nothing
    was read before: ``FAIRPLAY_JUDGE=worker``). A record that improves a challenge entry then
    updates the player's standing in a second one (standings are rebuilt from the entries, so
    a standing missed in a crash between the two is put right by the player's next challenge
    record, or ``flask --app api boards rebuild``)."""
    by_name = name_params(claim.name) if claim is not None else {"nfc": None, "skeleton": None}
    [row] = store_statement(upkeep).execute(connection, {
        **values, **_new_player(values, by_name["skeleton"]), **by_name,
        "vouch": claim.vouch if claim is not None else None,
        "bands": evidence.pack(bands), "seen": seen, "lock_key": deal_lock_key(values["code"])})
    new_id, changed, fresh, player_id, named_id, named_name, registered = row
    if claim is not None:
        settle_player(values, claim, None if named_id is None else Submitter(int(named_id), named_name,
                                                                               bool(registered)))
    if not fresh or player_id is None:
        raise Stale(values["code"])
    values["player_id"] = player_id
    if new_id is not None and changed:
        challenge_entries_changed(connection, values["player"], changed)
    return None if new_id is None else int(new_id)


#: SQLite: the insert, skipping a stored game and returning the new id (the upkeep follows it)
_INSERT_SQLITE = (sqlite.insert(Record.__table__).on_conflict_do_nothing(  # type: ignore[arg-type]
    index_elements=list(SAME_GAME)).returning(Record.__table__.c.id))
#: SQLite: a new tokenless player (the name's ``INSERT … ON CONFLICT DO NOTHING RETURNING id``)
_NEW_PLAYER_SQLITE = sqlite.insert(Player.__table__).on_conflict_do_nothing().returning(  # type: ignore[arg-type]
    Player.__table__.c.id)


def store_sqlite(connection: Connection, values: dict[str, Any], bands: list[int], seen: int | None,
                 upkeep: bool, claim: Claim | None) -> int | None:
    """SQLite: statements of the caller's transaction, which holds the write lock
    (:func:`api.records.deal_lock.lock_deal`): the deal's version, a new player, the record, its
    boards (:func:`api.boards.upkeep.record_stored`) and its line's index keys."""
    if claim is not None:
        settle_player(values, claim, named_player(connection, claim.name))
    if connection.execute(version_upsert(sqlite.insert), {"code": values["code"], "seen": seen}).first() is None:
        raise Stale(values["code"])
    new_player = _new_player(values, None)
    if new_player["new_name"] is not None:
        values["player_id"] = connection.execute(_NEW_PLAYER_SQLITE, {
            "name": values["player"], "skeleton_hash": new_player["new_skeleton"], "token_hash": None,
            "created_at": values["received_at"]}).scalar()
        if values["player_id"] is None:
            raise Stale(values["code"])
    new_id = connection.execute(_INSERT_SQLITE, values).scalar()
    if new_id is not None and upkeep:
        record_stored(connection, new_id)
    if new_id is not None and bands:
        connection.execute(insert(LineBand), [{"band": band, "record_id": new_id} for band in bands])
    return new_id


def store_record(session: Session, values: dict[str, Any], bands: list[int] | None = None,
                 seen: int | None = None, upkeep: bool = True, claim: Claim | None = None,
                 times: list[int] | None = None) -> tuple[dict[str, Any] | Record, bool]:
    """Store a record with the column ``values`` (:func:`insert_record`) unless the same
    player's same canonical log of the deal is stored already. Return the record to answer
    with, and whether it is new: a new one as a dict (``values`` with its id, an empty
    history, and its ``times`` as a list, not packed), a stored one as its :class:`Record`.
    A new record skips the ORM: building a mapped object and flushing it costs several times
    the CPU of the statement."""
    new_id = insert_record(session.connection(), values, bands, seen, upkeep, claim)
    if new_id is not None:
        claimed = claims(values["claimed_score"], values["claimed_moves"], values["claimed_won"])
        return {**values, "id": new_id, "history": [], "claimed": claimed,
                "times": values["times"] if times is None else times}, True
    # the same game is stored (perhaps a moment ago, by a concurrent request): answer with that one
    same_game = [getattr(Record, column) == values[column] for column in SAME_GAME]
    return session.scalars(select(Record).where(*same_game)).one(), False


def settle_player(values: dict[str, Any], claim: Claim, named: Submitter | None) -> Submitter:
    """A record's player columns, from the ``claim`` and the player its name reads as
    (:func:`api.players.accounts.settle`); that player."""
    player, vouched_by = settle(claim, named)
    values.update(player=player.name, player_id=player.id, vouched_by=vouched_by)
    return player



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


@cache
def store_statement(upkeep: bool = True) -> DollarStatement:
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
    entries = entries_upsert(postgresql.insert, board_rows(source=stored).subquery()).returning(
        BoardEntry.challenge_id).cte("entries")
    totals = totals_upsert(postgresql.insert, stored).returning(PlayerStats.player).cte("totals")
    bands = postgresql.insert(LineBand).from_select(
        ("band", "record_id"), select(packed_values("bands"), stored.c.id)).cte("bands")
    changed = select(func.array_agg(entries.c.challenge_id)).where(
        entries.c.challenge_id.is_not(None)).scalar_subquery() if upkeep else null()
    kept = [entries, totals, bands] if upkeep else [bands]
    statement = select(select(stored.c.id).scalar_subquery(), changed, select(version.c.version).exists(),
                       select(me.c.id).limit(1).scalar_subquery(), *(select(column).scalar_subquery()
                                                                    for column in claimed.c)).add_cte(*kept)
    return DollarStatement(statement)  # (8 KB: psycopg would parse it on every execution)

