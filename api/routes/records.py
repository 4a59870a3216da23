"""``/records``: submit a game (verified, then stored once, with its fair-play evidence),
read one, list them, and (admin keys) decide its status: hide it from the leaderboards,
show it again, or settle a review."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Blueprint, url_for
from sqlalchemy import literal, select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from verifier import replay

from .. import boards, db, metrics, webhooks
from ..auth import authenticate
from ..challenges import AttemptError, AttemptUsed, attempt_values
from ..fairplay import check_times, decide, evidence
from ..models import ApiKey, Player, Record
from ..players import credentials, submitter
from ..problems import Problem, invalid_field, rejected_log
from ..records import new_record, store_record
from ..schemas import RecordPageSchema, RecordQuerySchema, RecordRequestSchema, RecordSchema, StatusRequestSchema
from . import json_body, load, parse_code, query
from .leaderboard import withheld_codes

bp = Blueprint("records", __name__)
# schemas hold no per-request state: build them once
RECORD_REQUEST, RECORD, RECORD_PAGE, RECORD_QUERY, STATUS_REQUEST = (
    RecordRequestSchema(), RecordSchema(), RecordPageSchema(), RecordQuerySchema(), StatusRequestSchema())
MAX_ID = 2 ** 63 - 1


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
    metrics.verified(verdict)
    if not verdict.verified:
        raise rejected_log(verdict)
    values = new_record(verdict, body, sender.name if isinstance(sender, ApiKey) else None)
    if body.get("attempt") is not None:
        values.update(attempt_record_values(session, body["attempt"], player, values))
    values.update(player=player.name, player_id=player.id, vouched_by=vouched_by,
                  **evidence(session, player, values["code"], values["log_hash"], values["canonical"],
                             body.get("times"), body.get("elapsed_ms"), values["received_at"],
                             values["server_elapsed_ms"]))
    try:
        stored, new = store_record(session, values)
    except IntegrityError:  # a concurrent record of the same attempt came first (the unique index)
        if values["attempt_id"] is None:
            raise
        session.rollback()
        raise attempt_used(AttemptUsed(values["attempt_id"], None)) from None
    answer = RECORD.dump(stored)
    if new:
        webhooks.emit(session, "record.created", answer)
    session.commit()  # elsewhere than PostgreSQL: the record and its boards together
    if new:
        metrics.record_stored(values["variant"], values["ranked"], values["flags"])
    return answer, 201 if new else 200, {"Location": url_for("records.get_record", record_id=answer["id"])}


def attempt_used(error: AttemptUsed) -> Problem:
    return Problem(409, str(error), "attempt-used")


def attempt_record_values(session: Session, attempt_id: int, player: Player, values: dict[str, Any]
                          ) -> dict[str, Any]:
    """A challenge attempt's columns for a new record, or the problem that says why not."""
    try:
        return attempt_values(session, attempt_id, player, values["code"], values["log_hash"], values["received_at"])
    except AttemptUsed as error:
        raise attempt_used(error) from None
    except AttemptError as error:
        raise invalid_field("attempt", str(error)) from None


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
    record = find_record(record_id)
    if record.code in withheld_codes():  # its log would give the running challenge's deal away
        raise Problem(404, f"record {record_id} is withheld until the challenge on its deal closes")
    return RECORD.dump(record)


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
    withheld = withheld_codes()
    if withheld:  # the deals of running challenges: shown once their windows close
        filters.append(Record.code.not_in(withheld))
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
