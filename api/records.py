"""Records: a record's identity (:func:`log_hash`), its column values from a verified
replay (:func:`new_record`) and storing it once with the upkeep of its boards
(:func:`store_record`). Used by the ``/records`` views, the backup and re-verification."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

import engine
from verifier import Verdict

from . import boards
from .models import Record, claims

#: the ones of a record's columns that make it the same game (its unique constraint)
SAME_GAME = ("player", "code", "log_hash")


def log_hash(canonical: str) -> str:
    """The SHA-256 of a canonical log, hex: with the player and the code, a record's identity.

    >>> log_hash("S")[:12]
    '8de0b3c47f11'
    """
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_record(verdict: Verdict, body: dict[str, Any], submitted_by: str | None = None) -> dict[str, Any]:
    """A new record's column values (all but its id), from a verified replay and the submission's own fields."""
    claimed = body.get("claimed") or {}
    now = datetime.now(UTC)
    canonical = verdict.canonical_text
    return dict(  # noqa: C408 (the columns read best as keywords)
        player=body.get("player"), code=str(verdict.code), variant=verdict.code.variant, number=verdict.code.number,
        canonical=canonical, log_hash=log_hash(canonical),
        won=verdict.won, score=verdict.score, moves=verdict.moves, actions=verdict.actions, undos=verdict.undos,
        takebacks=verdict.takebacks, foundation_cards=verdict.foundation_cards,
        claimed_score=claimed.get("score"), claimed_moves=claimed.get("moves"), claimed_won=claimed.get("won"),
        elapsed_ms=body.get("elapsed_ms"), client=body.get("client"),
        engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
        received_at=now, verified_at=now, submitted_by=submitted_by, status="visible",
        player_id=None, ranked=True, flags=[], times=None, copy_of=None, vouched_by=None, attempt_id=None,
        server_elapsed_ms=None)


#: SQLite: the insert, skipping a stored game and returning the new id (the upkeep follows it)
_INSERT_SQLITE = (sqlite.insert(Record.__table__).on_conflict_do_nothing(  # type: ignore[arg-type]
    index_elements=list(SAME_GAME)).returning(Record.__table__.c.id))


def insert_record(connection: Connection, values: dict[str, Any]) -> int | None:
    """Insert a record with the column ``values`` and keep its boards and the player's totals,
    through SQLAlchemy Core for either dialect; the new id, or ``None`` if the same game is stored.

    On PostgreSQL the record and its upkeep are one statement (one round trip, atomic in
    autocommit); a record that improves a challenge entry then updates the player's standing
    in a second one (standings are rebuilt from the entries, so a standing missed in a crash
    between the two is put right by the player's next challenge record, or ``flask --app api
    boards rebuild``). Elsewhere the insert and the upkeep are statements of the caller's
    transaction."""
    if connection.dialect.name == "postgresql":
        row = connection.execute(boards.store_with_upkeep(), values).first()
        if row is None:
            return None
        if row[1]:
            boards.challenge_entries_changed(connection, values["player"], row[1])
        return int(row[0])
    new_id = connection.execute(_INSERT_SQLITE, values).scalar()
    if new_id is not None:
        boards.record_stored(connection, new_id)
    return new_id


def store_record(session: Session, values: dict[str, Any]) -> tuple[dict[str, Any] | Record, bool]:
    """Store a record with the column ``values`` (:func:`insert_record`) unless the same
    player's same canonical log of the deal is stored already. Return the record to answer
    with, and whether it is new: a new one as a dict (``values`` with its id and an empty
    history), a stored one as its :class:`Record`. A new record skips the ORM: building a
    mapped object and flushing it costs several times the CPU of the statement."""
    new_id = insert_record(session.connection(), values)
    if new_id is not None:
        claimed = claims(values["claimed_score"], values["claimed_moves"], values["claimed_won"])
        return {**values, "id": new_id, "history": [], "claimed": claimed}, True
    # the same game is stored (perhaps a moment ago, by a concurrent request): answer with that one
    same_game = [getattr(Record, column) == values[column] for column in SAME_GAME]
    return session.scalars(select(Record).where(*same_game)).one(), False
