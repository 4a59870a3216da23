"""``/records``: submit a game (verified, then stored once, with its fair-play evidence),
read one, list them, and (admin keys) decide its status: hide it from the leaderboards,
show it again, or settle a review."""

from __future__ import annotations

from datetime import datetime

from flask import Blueprint, current_app, url_for
from sqlalchemy import literal, select, tuple_

from api.boards import reads as boards
from api.challenges.windows import AttemptError, AttemptUsed
from api.fairplay.judging import decide, judged_later
from api.platform import db
from api.platform.auth import authenticate
from api.platform.models import ApiKey, Record
from api.platform.problems import Problem, invalid_field, rejected_log
from api.players.accounts import claimant
from api.records.shape import RecordSchema, record_json
from api.records.submit import BadTimes, Busy, EmptyLog, RejectedLog, begin, submit
from api.routes import credentials, json_body, load, parse_code, query
from api.routes.leaderboard import withheld_codes
from api.routes.schemas import RecordPageSchema, RecordQuerySchema, RecordRequestSchema, StatusRequestSchema

bp = Blueprint("records", __name__)
# schemas hold no per-request state: build them once
RECORD_REQUEST, RECORD, RECORD_PAGE, RECORD_QUERY, STATUS_REQUEST = (
    RecordRequestSchema(), RecordSchema(), RecordPageSchema(), RecordQuerySchema(), StatusRequestSchema())
MAX_ID = 2 ** 63 - 1


@bp.post("/records")
def submit_record() -> tuple[dict, int, dict[str, str]]:
    """Store a game once, with its evidence (``api.records.submit.submit``); the same player's same
    game again is answered 200 with the stored record."""
    session = db.session()
    begin(session)
    sender = credentials(session)  # a player token or an API key, before anything is read or replayed
    body = load(RECORD_REQUEST, json_body())
    code = parse_code(body["code"])
    claim = claimant(session, sender, body.get("player"))
    later = judged_later(current_app.config)
    try:
        done = submit(session, claim, code, body, sender.name if isinstance(sender, ApiKey) else None,
                      current_app.config["FAIRPLAY_TIMES_REQUIRED"], later)
    except Busy as error:
        raise Problem(503, f"the deal {error} was busy with other submissions while this game was judged: "
                           "send it again", headers={"Retry-After": "1"}) from None
    except EmptyLog as error:
        raise Problem(422, str(error), "empty-log") from None
    except BadTimes as error:
        raise invalid_field(error.field, str(error)) from None
    except RejectedLog as error:
        raise rejected_log(error.verdict) from None
    except AttemptUsed as error:
        raise Problem(409, str(error), "attempt-used") from None
    except AttemptError as error:
        raise invalid_field("attempt", str(error)) from None
    answer = record_json(done.record)
    return answer, 201 if done.new else 200, {"Location": url_for("records.get_record", record_id=answer["id"])}


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
