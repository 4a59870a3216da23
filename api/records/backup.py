"""Backup and restore: ``flask --app api records export|import``.

A backup is JSON Lines: a header naming the format, then one line per row of every
table of the models (:data:`api.platform.models.Base` ``.metadata``), table by table in the order
their foreign keys need, each in primary-key order, with every column. Nothing here
lists tables or columns: a table or a column added to the models is in the next backup,
unless it is named in :data:`EXCLUDED` with the reason (tables the service derives again
or that only hold work in flight). ``docs/operations.md`` lists what a backup holds,
made from the same metadata (:func:`contents_markdown`); a test checks they agree.

Importing reads the file line by line (a batch of rows in memory at a time), checks
every line (the table, each column's type and nullability, a record's code and log
hash) and runs in one transaction: a bad line names itself and nothing is imported.
A backup restores into an empty database, with every id kept; the boards, standings
and player totals are then rebuilt from the records.

Files made before this format (one record a line, :func:`import_records`) still
import: their records (with claims, status history, flags and times) keep their ids in
an empty database, and are merged into one that has records (duplicates skipped and
reported); their players are made again from the names, without tokens.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain
from typing import IO, Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate
from sqlalchemy import JSON, Boolean, Column, DateTime, Float, Integer, LargeBinary, String, Table, func, insert, select
from sqlalchemy import text as sql_text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

import engine
from api.boards.upkeep import rebuild_all
from api.fairplay.judging import backfill_lines
from api.platform.db import get_db, unbounded
from api.platform.models import STATUSES, Base, ChallengeAttempt, Record, RecordStatus
from api.platform.problems import field_errors
from api.players.accounts import adopt
from api.records.store import log_hash
from api.records.times import pack_times
from api.schemas import StrictBoolean, StrictInteger
from engine import GameCode, InvalidCodeError

#: rows written or read per database round trip
BATCH = 500
#: the first line of a backup says ``{"format": FORMAT, "version": VERSION, …}``
FORMAT, VERSION = "solitaire-verifier-backup", 2
#: the tables of the models a backup leaves out, and why; every other table is in it, with every column
EXCLUDED: dict[str, str] = {
    "board_entries": "derived from the records: rebuilt when a backup is imported",
    "standings": "derived from the board entries: rebuilt when a backup is imported",
    "player_stats": "derived from the records: rebuilt when a backup is imported",
    "solver_jobs": "the places of searches in flight: they belong to the deployment's broker and workers",
    "hint_answers": "a cache of hint searches, kept `SOLVER_HINT_KEEP_SECONDS`: asked again, searched again",
    "hint_requests": "the players' handles on the cached hint searches (`hint_answers`), kept as long as they are",
    "deal_versions": "a counter that detects concurrent submissions of a deal: only its changes matter, so it starts "
                     "anew",
}


def backed_up() -> list[Table]:
    """The tables a backup holds, parents before the tables that refer to them."""
    return [table for table in Base.metadata.sorted_tables if table.name not in EXCLUDED]


def count_records(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Record)) or 0


def begin_snapshot(session: Session) -> None:
    """On PostgreSQL, read everything that follows from one snapshot (REPEATABLE READ), so that
    the tables agree while writes go on. Must be the session's first use."""
    if session.get_bind().dialect.name == "postgresql":
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})


# -- columns as JSON ---------------------------------------------------------------

def _kind(column: Column[Any]) -> str:
    """How a column's values are written: ``time`` (ISO 8601 with the zone), ``bytes``
    (base64), ``json``, ``bool``, ``int``, ``float`` or ``text``."""
    kind = column.type
    for cls, name in ((DateTime, "time"), (LargeBinary, "bytes"), (JSON, "json"), (Boolean, "bool"),
                      (Integer, "int"), (Float, "float"), (String, "text")):
        if isinstance(kind, cls) or isinstance(getattr(kind, "impl", None), cls):
            return name
    raise TypeError(f"{column.table.name}.{column.name}: no backup form for {kind!r}")  # a test makes sure


def _encode(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "time":
        return value.isoformat()
    if kind == "bytes":
        return base64.b64encode(value).decode("ascii")
    return value


def _decode(column: Column[Any], kind: str, value: Any) -> Any:
    """A column's value read back, checked; :class:`ValueError` says what is wrong."""
    if value is None:
        if not column.nullable:
            raise ValueError("may not be null")
        return None
    if kind == "time":
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
        if moment is None or moment.tzinfo is None:
            raise ValueError("expected an ISO 8601 time with its zone")
        return moment.astimezone(UTC)
    if kind == "bytes":
        if not isinstance(value, str):
            raise ValueError("expected base64 text")
        return base64.b64decode(value, validate=True)
    if kind == "bool" and not isinstance(value, bool):
        raise ValueError("expected true or false")
    if kind == "int" and (not isinstance(value, int) or isinstance(value, bool) or abs(value) >= 2 ** 63):
        raise ValueError("expected a whole number")
    if kind == "float" and (not isinstance(value, int | float) or isinstance(value, bool)):
        raise ValueError("expected a number")
    if kind == "text":
        length = getattr(column.type, "length", None)
        if not isinstance(value, str) or (length is not None and len(value) > length):
            raise ValueError(f"expected text{'' if length is None else f' of at most {length} characters'}")
    return value


# -- export ------------------------------------------------------------------------

def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def header(session: Session) -> dict[str, Any]:
    """The first line: the format, where it comes from, and each table's columns in the order rows give them."""
    try:
        schema = sorted(get_db().current())
    except RuntimeError:  # outside an app: not known
        schema = []
    return {"format": FORMAT, "version": VERSION, "created_at": datetime.now(UTC).isoformat(),
            "engine_version": engine.__version__, "schema": schema,
            "tables": {table.name: [column.name for column in table.columns] for table in backed_up()}}


def export_backup(session: Session, out: IO[str], progress: Callable[[int], None] = lambda n: None,
                  head: dict[str, Any] | None = None) -> dict[str, int]:
    """Write the header, then every row of every backed-up table; returns the rows written per table.
    One query a table, its rows fetched a batch at a time. (Call :func:`begin_snapshot` first for
    a consistent backup on PostgreSQL.)"""
    out.write(_line(head if head is not None else header(session)))
    written: dict[str, int] = {}
    for table in backed_up():
        columns = [(column.name, _kind(column)) for column in table.columns]
        query = select(table).order_by(*table.primary_key.columns).execution_options(yield_per=BATCH)
        written[table.name] = 0
        for row in session.execute(query).mappings():
            out.write(_line({"table": table.name, "row": {name: _encode(kind, row[name]) for name, kind in columns}}))
            written[table.name] += 1
            progress(1)
    return written


def count_rows(session: Session) -> int:
    """The rows a backup will hold (for the progress bar)."""
    return sum(session.scalar(select(func.count()).select_from(table)) or 0 for table in backed_up())


def contents_markdown() -> str:
    """What a backup holds, for ``docs/operations.md``: each table and its columns, then what it leaves out."""
    lines = ["| table | columns |", "|---|---|"]
    lines += [f"| `{table.name}` | {', '.join(f'`{c.name}`' for c in table.columns)} |"
              for table in sorted(backed_up(), key=lambda t: t.name)]
    lines += ["", "Left out:", ""]
    lines += [f"- `{name}`: {reason}" for name, reason in sorted(EXCLUDED.items())]
    return "\n".join(lines)


# -- import ------------------------------------------------------------------------

class BackupError(ValueError):
    """A line that cannot be imported; the message names the line and the field."""


def _check_game(fail: Callable[[str, str], None], data: dict[str, Any]) -> None:
    """A record's code in canonical form, its variant and number, and its log's hash."""
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


#: the checks of a table's rows beyond their columns' types (``fail(column, message)``)
ROW_CHECKS: dict[str, Callable[[Callable[[str, str], None], dict[str, Any]], None]] = {"records": _check_game}


@dataclass
class RestoreReport:
    """What a backup's import stored, per table (the ids are the backup's)."""

    rows: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return "; ".join(f"{name} {count}" for name, count in self.rows.items())


def _json_object(number: int, line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise BackupError(f"line {number}: not JSON: {error.msg} at column {error.colno}") from None
    if not isinstance(data, dict):
        raise BackupError(f"line {number}: expected a JSON object")
    return data


def _tables_of(number: int, head: dict[str, Any]) -> dict[str, tuple[Table, list[tuple[Column[Any], str]]]]:
    """The header's tables, each with the columns its rows give (checked against the models)."""
    if head.get("format") != FORMAT or head.get("version") != VERSION:
        raise BackupError(f"line {number}: format {head.get('format')!r} version {head.get('version')!r}: this "
                          f"version reads {FORMAT!r} version {VERSION} and files of one record a line")
    known = {table.name: table for table in backed_up()}
    tables = head.get("tables")
    if not isinstance(tables, dict):
        raise BackupError(f"line {number}: tables: expected an object of table names and their columns")
    out = {}
    for name, names in tables.items():
        if name not in known:
            raise BackupError(f"line {number}: tables: this version keeps no table {name!r} in backups: restore "
                              f"the backup with the version that made it (or a newer one)")
        table = known[name]
        if not isinstance(names, list) or not all(isinstance(n, str) and n in table.columns for n in names):
            unknown = [n for n in names if n not in table.columns] if isinstance(names, list) else names
            raise BackupError(f"line {number}: tables.{name}: columns this version does not know: {unknown}")
        for column in table.columns:  # a column added since the backup was made: its default, or NULL
            if column.name not in names and not (column.nullable or column.default is not None
                                                 or column.server_default is not None or column.autoincrement is True):
                raise BackupError(f"line {number}: tables.{name}: column {column.name} is missing and has no default")
        out[name] = (table, [(table.columns[n], _kind(table.columns[n])) for n in names])
    return out


def _require_empty(session: Session) -> None:
    for table in backed_up():
        if session.execute(select(1).select_from(table).limit(1)).first() is not None:
            raise BackupError(f"the database is not empty (table {table.name} has rows): a backup restores into an "
                              f"empty database (create one, `flask --app api db upgrade`, then import)")


def _row(number: int, data: dict[str, Any], tables: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One row line, checked: its table and its columns' values."""

    def fail(column: str, message: str) -> None:
        raise BackupError(f"line {number}: {data.get('table')}.{column}: {message}")

    if set(data) != {"table", "row"} or data["table"] not in tables or not isinstance(data["row"], dict):
        raise BackupError(f"line {number}: expected {{\"table\", \"row\"}} with one of the header's tables")
    table, columns = tables[data["table"]]
    row = data["row"]
    if set(row) != {column.name for column, _ in columns}:
        wrong = sorted(set(row) ^ {column.name for column, _ in columns})
        raise BackupError(f"line {number}: {table.name}: the row's columns differ from the header's: {wrong}")
    values = {}
    for column, kind in columns:
        try:
            values[column.name] = _decode(column, kind, row[column.name])
        except (ValueError, TypeError) as error:
            fail(column.name, str(error))
    if table.name in ROW_CHECKS:
        ROW_CHECKS[table.name](fail, values)
    return table.name, values


def restore(session: Session, number: int, head: dict[str, Any], rows: Iterator[tuple[int, str]],
            progress: Callable[[int], None] = lambda n: None) -> RestoreReport:
    """Import a backup (its header on line ``number``, then ``rows``) into an empty database,
    a batch at a time; all or nothing (:class:`BackupError` rolls everything back)."""
    tables = _tables_of(number, head)
    report = RestoreReport(dict.fromkeys(tables, 0))
    batch: list[dict[str, Any]] = []
    current: str | None = None
    first_line = number

    def flush() -> None:
        if not batch or current is None:
            return
        try:
            session.execute(insert(tables[current][0]), batch)
        except (IntegrityError, DBAPIError) as error:
            raise BackupError(f"lines {first_line}-{last_line}: {current}: the database refused the rows: "
                              f"{str(error.orig).splitlines()[0]}") from None
        report.rows[current] += len(batch)
        progress(len(batch))
        batch.clear()

    try:
        _require_empty(session)
        last_line = number
        for last_line, line in rows:
            name, values = _row(last_line, _json_object(last_line, line), tables)
            if name != current or len(batch) >= BATCH:
                flush()
                current, first_line = name, last_line
            batch.append(values)
        flush()
        connection = session.connection()
        if connection.dialect.name == "postgresql":  # ids were given: move each sequence past them
            for table in backed_up():
                for column in table.primary_key.columns:
                    if column.autoincrement in (True, "auto") and _kind(column) == "int":
                        connection.execute(sql_text(
                            f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column.name}'), "
                            f"COALESCE((SELECT MAX({column.name}) FROM {table.name}), 0) + 1, false)"))
        with unbounded(connection):  # long on a large database, and run by an operator
            rebuild_all(connection)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return report


def import_backup(session: Session, lines: Iterable[str],
                  progress: Callable[[int], None] = lambda n: None) -> RestoreReport | ImportReport:
    """Import a file of either format, read as it goes: a backup (:func:`restore`) or a file
    of one record a line made before it (:func:`import_records`)."""
    source = iter(lines)
    skipped: list[str] = []
    for line in source:
        if line.strip():
            break
        skipped.append(line)
    else:
        return import_records(session, skipped, progress)
    number = len(skipped) + 1
    try:
        first = json.loads(line)
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict) and "format" in first:
        numbered = ((n, text) for n, text in enumerate(source, number + 1) if text.strip())
        return restore(session, number, first, numbered, progress)
    return import_records(session, chain(skipped, [line], source), progress)


# -- files of one record a line (the format before the backup's) ------------------

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
    # challenge attempts (absent from exports made before them)
    attempt = StrictInteger(load_default=None, allow_none=True, validate=validate.Range(min=1, max=2 ** 63 - 1))
    server_elapsed_ms = StrictInteger(load_default=None, allow_none=True,
                                      validate=validate.Range(min=0, max=2 ** 63 - 1))


def _check(line_number: int, data: dict[str, Any]) -> None:
    """What the types cannot say: the code, the variant and number, the log's hash, the history."""

    def fail(field_name: str, message: str) -> None:
        raise BackupError(f"line {line_number}: {field_name}: {message}")

    _check_game(fail, data)
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
        raw = _json_object(number, line)
        try:
            data = schema.load(raw)
        except ValidationError as error:
            first = field_errors(error.messages, "record")[0]
            raise BackupError(f"line {number}: {first['field']}: {first['message']}") from None
        _check(number, data)
        yield number, data


def _free_attempts(session: Session, wanted: set[int]) -> set[int]:
    """Those of the ``wanted`` challenge attempts that exist here and have no record yet."""
    if not wanted:
        return set()
    used = select(Record.attempt_id).where(Record.attempt_id.in_(wanted))
    return set(session.scalars(select(ChallengeAttempt.id).where(ChallengeAttempt.id.in_(wanted),
                                                                 ChallengeAttempt.id.not_in(used))))


def _record_from(data: dict[str, Any], keep_id: bool, player_id: int, free_attempts: set[int]) -> Record:
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
        vouched_by=data["vouched_by"], times=None if data["times"] is None else pack_times(data["times"]),
        # the attempts themselves are not in a records export: the link is kept where the attempt exists
        attempt_id=data["attempt"] if data["attempt"] in free_attempts else None,
        server_elapsed_ms=data["server_elapsed_ms"])
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
        free_attempts = _free_attempts(session, {d["attempt"] for _, d in batch if d["attempt"] is not None})
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
            session.add(_record_from(data, report.kept_ids, player_ids[data["player"]], free_attempts))
            free_attempts.discard(data["attempt"])  # (one record per attempt)
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
        backfill_lines(session.connection(), after=before)  # the imported games' effective lines (evidence)
        if report.kept_ids and session.get_bind().dialect.name == "postgresql":
            # ids were given: move the sequence past them, or the next submission would collide
            session.execute(sql_text("SELECT setval(pg_get_serial_sequence('records', 'id'), "
                                 "COALESCE((SELECT MAX(id) FROM records), 0) + 1, false)"))
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return report
