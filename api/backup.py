"""Records to JSON Lines and back: ``flask --app api records export|import``.

One JSON object per line and per record: every stored field (``claimed`` as the
API shows it), who submitted it, its status and its whole status history.
API keys are not exported: only their hashes exist, and a restored service
gets keys of its own.

Importing reads the file line by line (a batch of records in memory at a time),
checks every line (types, the code, the log's hash, the status and its history)
and runs in one transaction: a bad line names itself and nothing is imported. Into an empty
database the records keep their ids; into one that
already has records they get new ids, and a record that is already there (the
same player, code and log hash) is skipped and reported, never stored twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from engine import GameCode, InvalidCodeError

from .fairplay import backfill_lines
from .models import STATUSES, Record, RecordStatus
from .players import adopt
from .problems import field_errors
from .records import log_hash
from .schemas import StatusChangeSchema, StrictBoolean, StrictInteger
from .times import pack_times, unpack_times

#: records written or read per database round trip
BATCH = 500


def record_to_json(record: Record) -> dict[str, Any]:
    """One line of an export."""
    return {
        "id": record.id, "player": record.player, "code": record.code, "variant": record.variant,
        "number": record.number, "canonical": record.canonical, "log_hash": record.log_hash,
        "won": record.won, "score": record.score, "moves": record.moves, "actions": record.actions,
        "undos": record.undos, "takebacks": record.takebacks, "foundation_cards": record.foundation_cards,
        "claimed": record.claimed, "elapsed_ms": record.elapsed_ms, "client": record.client,
        "engine_version": record.engine_version, "rules_version": record.rules_version,
        "received_at": record.received_at.isoformat(), "verified_at": record.verified_at.isoformat(),
        "submitted_by": record.submitted_by, "status": record.status,
        "history": StatusChangeSchema(many=True).dump(record.history),
        "ranked": record.ranked, "flags": record.flags, "copy_of": record.copy_of, "vouched_by": record.vouched_by,
        "times": unpack_times(record.times),
    }


def count_records(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Record)) or 0


def begin_snapshot(session: Session) -> None:
    """On PostgreSQL, read everything that follows from one snapshot (REPEATABLE READ), so that
    records and their histories (loaded by later statements) agree while writes go on. Must be
    the session's first use."""
    if session.get_bind().dialect.name == "postgresql":
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})


def export_records(session: Session, out: IO[str], progress: Callable[[int], None] = lambda n: None) -> int:
    """Write every record, in id order, one JSON object a line; returns how many.
    (Call :func:`begin_snapshot` first for a consistent export on PostgreSQL.)"""
    written = 0
    for record in session.scalars(select(Record).order_by(Record.id).execution_options(yield_per=BATCH)):
        out.write(json.dumps(record_to_json(record), ensure_ascii=False, separators=(",", ":")) + "\n")
        written += 1
        progress(1)
    return written


# -- import ----------------------------------------------------------------

class _Claimed(Schema):
    class Meta:
        unknown = RAISE

    score = StrictInteger()
    moves = StrictInteger()
    won = StrictBoolean()


class _Change(Schema):
    class Meta:
        unknown = RAISE

    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    actor = fields.String(required=True, validate=validate.Length(min=1, max=64))
    at = fields.AwareDateTime(required=True)
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))


class ExportedRecordSchema(Schema):
    """One line of an export, checked field by field (unknown fields are errors)."""

    class Meta:
        unknown = RAISE

    id = StrictInteger(required=True, validate=validate.Range(min=1, max=2 ** 63 - 1))
    player = fields.String(required=True, validate=validate.Length(min=1, max=64))
    code = fields.String(required=True)
    variant = fields.String(required=True)
    number = StrictInteger(required=True)
    canonical = fields.String(required=True)
    log_hash = fields.String(required=True, validate=validate.Regexp(r"[0-9a-f]{64}\Z"))
    won = StrictBoolean(required=True)
    score = StrictInteger(required=True, validate=validate.Range(min=0, max=2 ** 31 - 1))
    moves = StrictInteger(required=True, validate=validate.Range(min=0, max=2 ** 31 - 1))
    actions = StrictInteger(required=True, validate=validate.Range(min=0, max=2 ** 31 - 1))
    undos = StrictInteger(required=True, validate=validate.Range(min=0, max=2 ** 31 - 1))
    takebacks = StrictInteger(required=True, validate=validate.Range(min=0, max=2 ** 31 - 1))
    foundation_cards = StrictInteger(required=True, validate=validate.Range(min=0, max=104))
    claimed = fields.Nested(_Claimed, required=True, allow_none=True)
    elapsed_ms = StrictInteger(required=True, allow_none=True, validate=validate.Range(min=0, max=2 ** 63 - 1))
    client = fields.String(required=True, allow_none=True, validate=validate.Length(min=1, max=100))
    engine_version = fields.String(required=True, validate=validate.Length(min=1, max=32))
    rules_version = StrictInteger(required=True, validate=validate.Range(min=0, max=2 ** 31 - 1))
    received_at = fields.AwareDateTime(required=True)
    verified_at = fields.AwareDateTime(required=True)
    submitted_by = fields.String(required=True, allow_none=True, validate=validate.Length(min=1, max=64))
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    history = fields.List(fields.Nested(_Change), required=True)
    # fair play (absent from exports made before players existed: ranked, no flags)
    ranked = StrictBoolean(load_default=True)
    flags = fields.List(fields.Dict(keys=fields.String()), load_default=list)
    copy_of = StrictInteger(load_default=None, allow_none=True, validate=validate.Range(min=1, max=2 ** 63 - 1))
    vouched_by = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=64))
    times = fields.List(StrictInteger(validate=validate.Range(min=0, max=2 ** 53 - 1)), load_default=None,
                        allow_none=True)


class BackupError(ValueError):
    """A line that cannot be imported; the message names the line and the field."""


def _check(line_number: int, data: dict[str, Any]) -> None:
    """What the types cannot say: the code, the variant and number, the log's hash, the history."""

    def fail(field_name: str, message: str) -> None:
        raise BackupError(f"line {line_number}: {field_name}: {message}")

    try:
        code = GameCode.from_text(data["code"])
    except InvalidCodeError as error:
        fail("code", error.message)
    if str(code) != data["code"]:
        fail("code", f"{data['code']!r} is not in canonical form ({code})")
    if code.variant != data["variant"]:
        fail("variant", f"{data['variant']!r} does not match the code ({code.variant})")
    if code.number != data["number"]:
        fail("number", f"{data['number']} does not match the code ({code.number})")
    if log_hash(data["canonical"]) != data["log_hash"]:
        fail("log_hash", "is not the SHA-256 of canonical")
    # a record starts visible; only a change in the history makes it anything else
    last = data["history"][-1]["status"] if data["history"] else "visible"
    # a record a flag sent to review at submission has no history yet
    flagged = not data["history"] and data["status"] == "review" and any(f.get("review") for f in data["flags"])
    if data["status"] != last and not flagged:
        fail("status", f"{data['status']!r} is not the last status of the history ({last!r})")


def parse_lines(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, checked record)`` for each non-blank line; :class:`BackupError` at the first bad one."""
    schema = ExportedRecordSchema()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise BackupError(f"line {number}: not JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(raw, dict):
            raise BackupError(f"line {number}: expected a JSON object (one record)")
        try:
            data = schema.load(raw)
        except ValidationError as error:
            first = field_errors(error.messages, "record")[0]
            raise BackupError(f"line {number}: {first['field']}: {first['message']}") from None
        _check(number, data)
        yield number, data


def _record_from(data: dict[str, Any], keep_id: bool, player_id: int) -> Record:
    claimed = data["claimed"] or {}
    record = Record(
        player=data["player"], code=data["code"], variant=data["variant"], number=data["number"],
        canonical=data["canonical"], log_hash=data["log_hash"], won=data["won"], score=data["score"],
        moves=data["moves"], actions=data["actions"], undos=data["undos"], takebacks=data["takebacks"],
        foundation_cards=data["foundation_cards"], claimed_score=claimed.get("score"),
        claimed_moves=claimed.get("moves"), claimed_won=claimed.get("won"), elapsed_ms=data["elapsed_ms"],
        client=data["client"], engine_version=data["engine_version"], rules_version=data["rules_version"],
        received_at=data["received_at"], verified_at=data["verified_at"], submitted_by=data["submitted_by"],
        status=data["status"],
        history=[RecordStatus(status=c["status"], actor=c["actor"], at=c["at"], reason=c["reason"])
                 for c in data["history"]],
        player_id=player_id, ranked=data["ranked"], flags=data["flags"],
        copy_of=data["copy_of"] if keep_id else None,  # new ids: the original's id is not known here
        vouched_by=data["vouched_by"], times=None if data["times"] is None else pack_times(data["times"]))
    if keep_id:
        record.id = data["id"]
    return record


@dataclass
class Duplicate:
    line: int
    player: str
    code: str
    existing_id: int | None  # ``None``: an earlier line of the same file

    def __str__(self) -> str:
        where = f"record {self.existing_id}" if self.existing_id is not None else "an earlier line of the file"
        return f"line {self.line}: {self.player} {self.code}: already stored as {where}"


@dataclass
class ImportReport:
    imported: int = 0
    kept_ids: bool = False
    duplicates: list[Duplicate] = field(default_factory=list)


def import_records(session: Session, lines: Iterable[str],
                   progress: Callable[[int], None] = lambda n: None) -> ImportReport:
    """Import an export; all or nothing (:class:`BackupError` rolls everything back).

    ``lines`` is read as it goes (a file object streams): only one batch of records is
    held at a time. Duplicates and reused ids are found with the database, where the
    earlier batches of this import are flushed (its transaction sees them)."""
    report = ImportReport(kept_ids=count_records(session) == 0)
    # records above this id were stored by this import (ids are kept only into an empty database)
    before = 0 if report.kept_ids else session.scalar(select(func.max(Record.id))) or 0
    player_ids: dict[str, int] = {}  # each name's player, looked up (or made) once per import
    batch: list[tuple[int, dict[str, Any]]] = []

    def flush() -> None:
        hashes = {data["log_hash"] for _, data in batch}
        stored = {(p, c, h): i for i, p, c, h in session.execute(
            select(Record.id, Record.player, Record.code, Record.log_hash).where(Record.log_hash.in_(hashes)))}
        taken: set[int] = set()
        if report.kept_ids:
            taken = set(session.scalars(select(Record.id).where(Record.id.in_({d["id"] for _, d in batch}))))
        games: set[tuple[str, str, str]] = set()
        ids: dict[int, int] = {}
        for number, data in batch:
            game = (data["player"], data["code"], data["log_hash"])
            if game in stored or game in games:
                existing = stored.get(game)
                earlier_line = existing is None or report.kept_ids or existing > before
                report.duplicates.append(Duplicate(number, data["player"], data["code"],
                                                   None if earlier_line else existing))
                continue
            if report.kept_ids:
                if data["id"] in ids:
                    raise BackupError(f"line {number}: id: {data['id']} is already the id of line {ids[data['id']]}")
                if data["id"] in taken:
                    raise BackupError(f"line {number}: id: {data['id']} is already the id of an earlier line")
                ids[data["id"]] = number
            games.add(game)
            if data["player"] not in player_ids:
                player_ids[data["player"]] = adopt(session, data["player"]).id
            session.add(_record_from(data, report.kept_ids, player_ids[data["player"]]))
            report.imported += 1
        session.flush()
        session.expunge_all()  # the flushed records are not needed again: memory stays one batch
        progress(len(batch))
        batch.clear()

    try:
        for item in parse_lines(lines):
            batch.append(item)
            if len(batch) >= BATCH:
                flush()
        if batch:
            flush()
        backfill_lines(session.connection(), after=before)  # the imported games' effective lines (api.evidence)
        if report.kept_ids and session.get_bind().dialect.name == "postgresql":
            # ids were given: move the sequence past them, or the next submission would collide
            session.execute(text("SELECT setval(pg_get_serial_sequence('records', 'id'), "
                                 "COALESCE((SELECT MAX(id) FROM records), 0) + 1, false)"))
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return report
