"""The operator's commands:

- ``flask --app api db upgrade|current|revision``: the schema's migrations;
- ``flask --app api keys create|revoke|list``: API keys;
- ``flask --app api records export|import|reverify``: backup, restore and
  re-verification of the stored records.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

import click
from alembic import command
from flask import Flask, current_app
from flask.cli import AppGroup
from sqlalchemy import func, select

import engine

from .auth import ApiKeyError, create_key, revoke_key
from .backup import BackupError, begin_snapshot, count_records, export_records, import_records
from .db import alembic_config, get_db
from . import tasks
from .models import ApiKey, Record
from .reverify import Change, reverify_records

#: runs over at least this many records show a progress bar (on stderr, when it is a terminal)
PROGRESS_FROM = 200
#: ids per re-verification task on the worker tier
CHUNK_IDS = 5000

db_cli = AppGroup("db", help="The records database schema (Alembic migrations in migrations/).")
keys_cli = AppGroup("keys", help="API keys: create (the key is shown once), revoke, list.")
records_cli = AppGroup("records", help="Stored records: export, import, re-verify.")


def _state(revisions: frozenset[str], heads: frozenset[str]) -> str:
    if not revisions:
        return "empty (no migration applied)"
    return ", ".join(sorted(revisions)) + (" (head)" if revisions == heads else f" (head is {', '.join(sorted(heads))})")


@db_cli.command("upgrade")
@click.argument("revision", default="head")
def upgrade(revision: str) -> None:
    """Upgrade the schema to REVISION (default: head)."""
    database = get_db()
    database.upgrade(revision)
    click.echo(f"database at {_state(database.current(), database.heads)}")


@db_cli.command("current")
def current() -> None:
    """Show the revision the database is at."""
    database = get_db()
    click.echo(_state(database.current(), database.heads))


@db_cli.command("revision")
@click.option("-m", "--message", required=True, help="what the migration does")
@click.option("--autogenerate", is_flag=True, help="compare api/models.py with the database (at head)")
def revision(message: str, autogenerate: bool) -> None:
    """Write a new migration script under migrations/versions."""
    with get_db().engine.begin() as connection:
        scripts = command.revision(alembic_config(connection), message=message, autogenerate=autogenerate)
    for script in scripts if isinstance(scripts, list) else [scripts]:
        if script is not None:
            click.echo(f"wrote {script.path}")


# -- keys --------------------------------------------------------------------

@keys_cli.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="may also hide records and show them again")
def keys_create(name: str, admin: bool) -> None:
    """Create a key NAME and print it (only the key, on stdout: KEY=$(flask --app api keys create NAME)).

    It is shown this once; the database keeps only its SHA-256."""
    with get_db().sessions() as session:
        try:
            key, token = create_key(session, name, admin)
        except ApiKeyError as error:
            raise click.ClickException(str(error)) from None
    click.echo(token)
    click.echo(f"created {'admin ' if key.admin else ''}key {key.name!r}; store it now, it is not shown again",
               err=True)


@keys_cli.command("revoke")
@click.argument("name")
def keys_revoke(name: str) -> None:
    """Revoke the key NAME: from the next request on, it is refused (401)."""
    with get_db().sessions() as session:
        try:
            key = revoke_key(session, name)
        except ApiKeyError as error:
            raise click.ClickException(str(error)) from None
        assert key.revoked_at is not None
        click.echo(f"key {key.name!r} revoked at {key.revoked_at.isoformat(timespec='seconds')}")


@keys_cli.command("list")
def keys_list() -> None:
    """The keys: name, admin or not, created, revoked (never the keys themselves)."""
    with get_db().sessions() as session:
        keys = session.scalars(select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)).all()
    if not keys:
        click.echo("no keys: create one with `flask --app api keys create NAME`")
        return
    width = max(len(k.name) for k in keys)
    for key in keys:
        revoked = f"revoked {key.revoked_at.isoformat(timespec='seconds')}" if key.revoked_at else "active"
        click.echo(f"{key.name:<{width}}  {'admin' if key.admin else 'write':<5}  "
                   f"created {key.created_at.isoformat(timespec='seconds')}  {revoked}")


# -- records -------------------------------------------------------------------

@contextmanager
def _progress(total: int, label: str, show: bool | None) -> Iterator[Callable[[int], None]]:
    """``advance(n)``: a progress bar on stderr for long runs (``show=None``: from PROGRESS_FROM records)."""
    if not (show if show is not None else total >= PROGRESS_FROM):
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True) as bar:
        yield bar.update


_PROGRESS = click.option("--progress/--no-progress", default=None,
                         help=f"show a progress bar (default: from {PROGRESS_FROM} records on)")


@records_cli.command("export")
@click.argument("output", type=click.File("w", encoding="utf-8", lazy=True), default="-")
@_PROGRESS
def records_export(output: IO[str], progress: bool | None) -> None:
    """Write every record, with its status history, as JSON Lines to OUTPUT (default: stdout)."""
    with get_db().sessions() as session:
        begin_snapshot(session)
        total = count_records(session)
        with _progress(total, "exporting", progress) as advance:
            written = export_records(session, output, advance)
    output.flush()
    click.echo(f"exported {written} records", err=True)


@records_cli.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@_PROGRESS
def records_import(source: IO[str], progress: bool | None) -> None:
    """Import a file made by `records export` (SOURCE, or - for stdin).

    Into an empty database the records keep their ids; into a database that
    has records they get new ids, and those already stored (same player, code
    and log) are skipped and listed. A bad line stops the import and nothing
    is stored."""
    lines = source.readlines()
    with get_db().sessions() as session:
        with _progress(sum(1 for line in lines if line.strip()), "importing", progress) as advance:
            try:
                report = import_records(session, lines, advance)
            except BackupError as error:
                raise click.ClickException(f"{error}; nothing was imported") from None
    ids = "ids kept" if report.kept_ids else "new ids: the database was not empty"
    click.echo(f"imported {report.imported} records ({ids}); skipped {len(report.duplicates)} duplicates")
    for duplicate in report.duplicates:
        click.echo(f"  skipped {duplicate}")


@records_cli.command("reverify")
@click.option("--dry-run", is_flag=True, help="only report; do not stamp unchanged records with this engine")
@click.option("--in-process", is_flag=True,
              help="replay here, in this process, even when a broker (CELERY_BROKER_URL) is set")
@click.option("--chunk", type=click.IntRange(min=1), default=CHUNK_IDS, show_default=True,
              help="ids per task on the worker tier")
@_PROGRESS
def records_reverify(dry_run: bool, in_process: bool, chunk: int, progress: bool | None) -> None:
    """Replay every record with the engine installed now and list those whose result changed.

    Unchanged records are stamped with this engine and rules version (unless
    --dry-run); changed ones are left as they are. Exit status 1 when any changed.
    With a broker (CELERY_BROKER_URL) the table is split into id ranges, each a task
    for the worker tier (`celery --app api.tasks worker`); without one, or with
    --in-process, this process replays them."""
    app = current_app
    with get_db().sessions() as session:
        total = count_records(session)
        first, last = session.execute(select(func.min(Record.id), func.max(Record.id))).one()
    changes: list[tuple[int, str]] = []
    with _progress(total, "re-verifying", progress) as advance:
        if app.config["CELERY_BROKER_URL"] is None or in_process or first is None:
            with get_db().sessions() as session:
                for change in reverify_records(session, update=not dry_run, progress=advance):
                    changes.append((change.record_id, str(change)))
        else:
            changes = _reverify_on_workers(app.extensions["api.celery"], first, last, chunk, not dry_run, advance)
    for _, line in sorted(changes):
        click.echo(line)
    changed = len(changes)
    click.echo(f"re-verified {total} records with engine {engine.__version__} (rules {engine.RULES_VERSION}): "
               f"{total - changed} unchanged, {changed} changed" + (" (dry run: nothing stamped)" if dry_run else ""))
    if changed:
        sys.exit(1)


def _reverify_on_workers(celery_app: Any, first: int, last: int, chunk: int, update: bool,
                         advance: Callable[[int], None]) -> list[tuple[int, str]]:
    """Send one task per id range, then gather their results as they end (a range
    that failed is reported and makes the command fail: nothing is skipped silently)."""
    task = celery_app.tasks[tasks.REVERIFY]
    pending = [task.apply_async(args=(start, min(start + chunk - 1, last), update))
               for start in range(first, last + 1, chunk)]
    click.echo(f"sent {len(pending)} ranges of {chunk} ids to the worker tier", err=True)
    changes: list[tuple[int, str]] = []
    ranges, done, checked = len(pending), 0, 0
    lines = not sys.stderr.isatty()  # a log gets a line a range (a terminal has the progress bar)
    while pending:
        waiting = []
        for result in pending:
            if not result.ready():
                waiting.append(result)
                continue
            try:
                outcome = result.get(disable_sync_subtasks=False)
            except Exception as error:
                raise click.ClickException(f"a range failed on a worker: {type(error).__name__}: {error}; records "
                                           f"already done keep their stamp, run the command again") from None
            finally:
                result.forget()
            advance(outcome["checked"])
            done, checked = done + 1, checked + outcome["checked"]
            if lines:
                click.echo(f"{done} of {ranges} ranges done: {checked} records re-verified", err=True)
            changes += [(record_id, str(Change(record_id, player, code, tuple(differences))))
                        for record_id, player, code, differences in outcome["changes"]]
        pending = waiting
        if pending:
            time.sleep(0.2)
    return changes


def init_app(app: Flask) -> None:
    app.cli.add_command(db_cli)
    app.cli.add_command(keys_cli)
    app.cli.add_command(records_cli)
