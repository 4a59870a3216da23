"""``/records``: submit a game (verified, then stored once, with its fair-play evidence),
read one, list them, and (admin keys) decide its status: hide it from the leaderboards,
show it again, or settle a review."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

from flask import Blueprint, url_for
from sqlalchemy import literal, select, tuple_
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

import engine
from verifier import Verdict, replay

from .. import boards, db
from ..auth import authenticate
from ..fairplay import check_times, decide, evidence
from ..models import ApiKey, Record, claims
from ..players import credentials, submitter
from ..problems import Problem, invalid_field, rejected_log
from ..schemas import RecordPageSchema, RecordQuerySchema, RecordRequestSchema, RecordSchema, StatusRequestSchema
from . import json_body, load, parse_code, query

bp = Blueprint("records", __name__)
# schemas hold no per-request state: build them once
RECORD_REQUEST, RECORD, RECORD_PAGE, RECORD_QUERY, STATUS_REQUEST = (
    RecordRequestSchema(), RecordSchema(), RecordPageSchema(), RecordQuerySchema(), StatusRequestSchema())
MAX_ID = 2 ** 63 - 1


def log_hash(canonical: str) -> str:
    """The SHA-256 of a canonical log, hex: with the player and the code, a record's identity."""
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_record(verdict: Verdict, body: dict[str, Any], submitted_by: str | None = None) -> dict[str, Any]:
    """A new record's column values (all but its id), from a verified replay and the submission's own fields."""
    claimed = body.get("claimed") or {}
    now = datetime.now(timezone.utc)
    canonical = verdict.canonical_text
    return dict(
        player=body.get("player"), code=str(verdict.code), variant=verdict.code.variant, number=verdict.code.number,
        canonical=canonical, log_hash=log_hash(canonical),
        won=verdict.won, score=verdict.score, moves=verdict.moves, actions=verdict.actions, undos=verdict.undos,
        takebacks=verdict.takebacks, foundation_cards=verdict.foundation_cards,
        claimed_score=claimed.get("score"), claimed_moves=claimed.get("moves"), claimed_won=claimed.get("won"),
        elapsed_ms=body.get("elapsed_ms"), client=body.get("client"),
        engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
        received_at=now, verified_at=now, submitted_by=submitted_by, status="visible",
        player_id=None, ranked=True, flags=[], times=None, copy_of=None, vouched_by=None)


#: the ones of a record's columns that make it the same game (its unique constraint)
_SAME_GAME = ("player", "code", "log_hash")
#: elsewhere than PostgreSQL: the insert through SQLAlchemy Core, skipping a stored game and returning the new id
_INSERT_CORE = (sqlite.insert(Record.__table__).on_conflict_do_nothing(index_elements=list(_SAME_GAME))
                .returning(Record.__table__.c.id))


def store_record(session: Session, values: dict[str, Any]) -> tuple[dict[str, Any] | Record, bool]:
    """Insert a record with the column ``values`` on the session's connection, with the
    upkeep of its boards and the player's totals, unless the same player's same
    canonical log of the deal is stored already. Return the record to answer with, and
    whether it is new: a new one as a dict (``values`` with its id and an empty
    history), a stored one as its :class:`Record`.

    On PostgreSQL the record and its upkeep are one statement (one round trip, atomic
    in autocommit); a record that improves a challenge entry then updates the player's
    standing in a second one (standings are rebuilt from the entries, so a standing
    missed in a crash between the two is put right by the player's next challenge
    record, or ``flask --app api boards rebuild``). Elsewhere the insert and the upkeep
    are statements of the caller's transaction. A new record skips the ORM: building a
    mapped object and flushing it costs several times the CPU of the statement.
    """
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        row = connection.execute(boards.store_with_upkeep(), values).first()
        new_id = None if row is None else row[0]
        if row is not None and row[1]:
            boards.challenge_entries_changed(connection, values["player"], row[1])
    else:
        new_id = connection.execute(_INSERT_CORE, values).scalar()
        if new_id is not None:
            boards.record_stored(connection, new_id)
    if new_id is not None:
        claimed = claims(values["claimed_score"], values["claimed_moves"], values["claimed_won"])
        return {**values, "id": new_id, "history": [], "claimed": claimed}, True
    # the same game is stored (perhaps a moment ago, by a concurrent request): answer with that one
    same_game = [getattr(Record, column) == values[column] for column in _SAME_GAME]
    return session.scalars(select(Record).where(*same_game)).one(), False


@bp.post("/records")
def submit_record() -> tuple[dict, int, dict[str, str]]:
    session = db.session()
    if session.get_bind().dialect.name == "postgresql":
        # every statement of this request stands alone (the record and its boards are one statement, a
        # tokenless player on a name's first use another), so none needs a transaction around it: in
        # autocommit each is one round trip, and nothing is left to commit afterwards. The fair-play reads
        # (the player, a hint on the deal, a copy of the log, a stored solver line) are one indexed lookup each
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    sender = credentials(session)  # a player token or an API key, before anything is read or replayed
    body = load(RECORD_REQUEST, json_body())
    if not body["moves"]:
        raise Problem(422, "the log has no action: there is no game to store", "empty-log")
    check_times(body.get("times"), len(body["moves"]))
    player, vouched_by = submitter(session, sender, body.get("player"))
    verdict = replay(parse_code(body["code"]), body["moves"], body.get("claimed"))
    if not verdict.verified:
        raise rejected_log(verdict)
    values = new_record(verdict, body, sender.name if isinstance(sender, ApiKey) else None)
    values.update(player=player.name, player_id=player.id, vouched_by=vouched_by,
                  **evidence(session, player, values["code"], values["log_hash"], values["canonical"],
                             body.get("times"), body.get("elapsed_ms"), values["received_at"]))
    stored, new = store_record(session, values)
    session.commit()  # elsewhere than PostgreSQL: the record and its boards together
    answer = RECORD.dump(stored)
    return answer, 201 if new else 200, {"Location": url_for("records.get_record", record_id=answer["id"])}


def find_record(record_id: int, for_update: bool = False) -> Record:
    statement = select(Record).where(Record.id == record_id)
    if for_update:
        statement = statement.with_for_update()  # PostgreSQL: concurrent changes of one record queue up
    record = db.session().scalar(statement) if 0 < record_id <= MAX_ID else None
    if record is None:
        raise Problem(404, f"there is no record {record_id}")
    return record


@bp.get("/records/<int:record_id>")
def get_record(record_id: int) -> dict:
    return RECORD.dump(find_record(record_id))


@bp.post("/records/<int:record_id>/status")
def set_status(record_id: int) -> dict:
    """Hide a record from the leaderboards or show it again (admin keys); each change is
    added to the record's history with the key's name, the time and the reason."""
    session = db.session()
    if session.get_bind().dialect.name == "postgresql":
        # one statement stores the record and keeps its boards: in autocommit that is one round trip
        # (see store_record), and nothing is left to commit afterwards
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    key = authenticate(session, required=True, admin=True)
    assert key is not None
    body = load(STATUS_REQUEST, json_body())
    record = find_record(record_id, for_update=True)
    decide(session, record, body["status"], key.name, body["reason"])
    session.commit()
    return RECORD.dump(record)


@bp.get("/records")
def list_records() -> dict:
    """Newest first, a page at a time with a keyset cursor: no page counts or skips the rows
    before it (the partial indexes on visible records by player, deal and time serve it)."""
    args = query(RECORD_QUERY)
    filters = []
    if "code" in args:
        filters.append(Record.code == str(parse_code(args["code"])))
    if "player" in args:
        filters.append(Record.player == args["player"])
    if "won" in args:
        filters.append(Record.won == args["won"])
    if args["status"] != "all":
        filters.append(Record.status == args["status"])
    if "cursor" in args:
        try:
            at, last_id = boards.decode_cursor(args["cursor"], (datetime, int))
        except boards.BadCursor as error:
            raise invalid_field("cursor", str(error)) from None
        filters.append(tuple_(Record.received_at, Record.id) < tuple_(literal(at, Record.received_at.type),
                                                                      literal(last_id, Record.id.type)))
    size = args["page_size"]
    items = db.session().scalars(select(Record).where(*filters).order_by(Record.received_at.desc(), Record.id.desc())
                                 .limit(size + 1)).all()
    more = len(items) > size
    items = items[:size]
    next_cursor = boards.encode_cursor((items[-1].received_at, items[-1].id)) if more else None
    return RECORD_PAGE.dump({"items": items, "page_size": size, "has_more": more, "next_cursor": next_cursor})
