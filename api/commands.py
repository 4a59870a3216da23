"""The operator's commands:

- ``flask --app api db upgrade|current|revision``: the schema's migrations;
- ``flask --app api keys create|revoke|list``: API keys;
- ``flask --app api records export|import|reverify``: backup, restore and
  re-verification of the stored records;
- ``flask --app api review list|decide``: the records flagged for review;
- ``flask --app api players token``: a token for a player without one (or a new one);
- ``flask --app api webhooks add|list|remove|rotate|deliveries|sweep|prune``: webhook endpoints.
- ``flask --app api fairplay reevaluate``: every deal's ranked records judged again.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO, Any

import click
from alembic import command
from flask import Flask, current_app
from flask.cli import AppGroup
from sqlalchemy import func, select

import engine
from api import tasks
from api.boards.upkeep import rebuild_all
from api.challenges.windows import derivation_key, pool_size, prepare_challenges, refill_winnable_pool, screening_budget
from api.fairplay.judging import backfill_lines, decide, judge_pending, reevaluate_all, review_queue, waiting_deals
from api.platform.auth import ApiKeyError, create_key, revoke_key
from api.platform.db import alembic_config, get_db, unbounded
from api.platform.models import STATUSES, ApiKey, Record
from api.players.accounts import clear_name_review, issue_token, names_for_review
from api.records.backup import (
    BackupError,
    RestoreReport,
    begin_snapshot,
    count_records,
    count_rows,
    export_backup,
    import_backup,
)
from api.records.reverify import Change, reverify_records
from api.webhooks import delivery as webhooks

#: runs over at least this many records show a progress bar (on stderr, when it is a terminal)
PROGRESS_FROM = 200
#: ids per re-verification task on the worker tier
CHUNK_IDS = 5000

db_cli = AppGroup("db", help="The records database schema (Alembic migrations in migrations/).")
keys_cli = AppGroup("keys", help="API keys: create (the key is shown once), revoke, list.")
records_cli = AppGroup("records", help="Stored records: export, import, re-verify.")
review_cli = AppGroup("review", help="Records flagged for review: list them, decide; flagged player names.")
players_cli = AppGroup("players", help="Players: hand out a token (names kept from before registration, lost tokens).")
challenges_cli = AppGroup("challenges", help="Daily and weekly challenges, and the pool of winnable deals.")
boards_cli = AppGroup("boards", help="The boards, standings and player totals kept on write.")
webhooks_cli = AppGroup("webhooks", help="Webhook endpoints (Standard Webhooks): add (the secret is shown once), "
                                         "list, remove, rotate the secret, deliveries, sweep, prune.")
fairplay_cli = AppGroup("fairplay", help="Fair play: the evidence on records, judged again.")


@fairplay_cli.command("reevaluate")
def fairplay_reevaluate() -> None:
    """Judge the records waiting for their judgement (``FAIRPLAY_JUDGE=worker``), compute the
    effective lines of records that have none, then judge every deal's ranked records again
    with what the service knows of each deal (as the worker tier does when it learns a new
    line); records that lose their rank get a history entry saying why."""
    with get_db().sessions() as session:
        judged = 0
        while codes := waiting_deals(session, datetime.now(UTC)):  # (before their lines are filled in below)
            judged += sum(len(judge_pending(session, code)) for code in codes)
        if judged:
            click.echo(f"{judged} records waiting for their judgement judged")
        filled = backfill_lines(session.connection())
        session.commit()
        changed = reevaluate_all(session)
    click.echo(f"{filled} effective lines computed; {sum(map(len, changed.values()))} records unranked")
    for code, ids in changed.items():
        click.echo(f"{code}: {', '.join(map(str, ids))}")


@boards_cli.command("rebuild")
def rebuild_boards() -> None:
    """Build every board, standing and player total again from the records (one transaction)."""
    with get_db().engine.begin() as connection, unbounded(connection):  # long by nature: no statement timeout
        rebuild_all(connection)
    click.echo("boards, standings and player totals rebuilt from the records")


def _state(revisions: frozenset[str], heads: frozenset[str]) -> str:
    if not revisions:
        return "empty (no migration applied)"
    head = " (head)" if revisions == heads else f" (head is {', '.join(sorted(heads))})"
    return ", ".join(sorted(revisions)) + head


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
@click.option("--autogenerate", is_flag=True, help="compare api/platform/models.py with the database (at head)")
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
@click.option("--vouch", is_flag=True, help="may submit records for registered players by name")
def keys_create(name: str, admin: bool, vouch: bool) -> None:
    """Create a key NAME and print it (only the key, on stdout: KEY=$(flask --app api keys create NAME)).

    It is shown this once; the database keeps only its SHA-256."""
    with get_db().sessions() as session:
        try:
            key, token = create_key(session, name, admin, vouch)
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
    """The keys: name, rights (admin or write, and vouch), created, revoked (never the keys themselves)."""
    with get_db().sessions() as session:
        keys = session.scalars(select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)).all()
    if not keys:
        click.echo("no keys: create one with `flask --app api keys create NAME`")
        return
    width = max(len(k.name) for k in keys)
    for key in keys:
        revoked = f"revoked {key.revoked_at.isoformat(timespec='seconds')}" if key.revoked_at else "active"
        rights = f"{'admin' if key.admin else 'write':<5}  {'vouch' if key.vouch else '':<5}"
        click.echo(f"{key.name:<{width}}  {rights}  created {key.created_at.isoformat(timespec='seconds')}  {revoked}")


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
    """Write a backup to OUTPUT (default: stdout): JSON Lines, a header and then every row of every
    table a restore needs (records and their history, players, keys, challenges, hints …)."""
    with get_db().sessions() as session:
        begin_snapshot(session)
        total = count_rows(session)
        with _progress(total, "exporting", progress) as advance:
            written = export_backup(session, output, advance)
    output.flush()
    others = ", ".join(f"{name} {count}" for name, count in written.items() if name != "records")
    click.echo(f"exported {written.get('records', 0)} records ({others})", err=True)


@records_cli.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@_PROGRESS
def records_import(source: IO[str], progress: bool | None) -> None:
    """Import a file made by `records export` (SOURCE, or - for stdin).

    A backup restores into an empty database: every row keeps its id, and the
    boards are rebuilt. A file of one record a line (made before the backup held
    every table) also imports: into an empty database the records keep their ids;
    into one that has records they get new ids, and those already stored (same
    player, code and log) are skipped and listed. A bad line stops the import and
    nothing is stored."""
    with get_db().sessions() as session, _progress(_count_lines(source), "importing", progress) as advance:
        try:
            report = import_backup(session, source, advance)  # read line by line, never whole
        except BackupError as error:
            raise click.ClickException(f"{error}; nothing was imported") from None
    if isinstance(report, RestoreReport):
        click.echo(f"imported {report.rows.get('records', 0)} records (ids kept) from a backup: {report}; "
                   f"boards rebuilt")
        return
    ids = "ids kept" if report.kept_ids else "new ids: the database was not empty"
    click.echo(f"imported {report.imported} records ({ids}); skipped {len(report.duplicates)} duplicates")
    for duplicate in report.duplicates:
        click.echo(f"  skipped {duplicate}")


def _count_lines(source: IO[str]) -> int:
    """The records in a file (a first pass, line by line, then back to the start), for the
    progress bar; 0 for a stream that cannot go back (stdin: no bar)."""
    try:
        if not source.seekable():
            return 0
        start = source.tell()
        count = sum(1 for line in source if line.strip())
        source.seek(start)
    except OSError:
        return 0
    return count


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


# -- review --------------------------------------------------------------------

@review_cli.command("list")
@click.option("--after", type=click.IntRange(min=0), default=0, help="list records after this id")
@click.option("--limit", type=click.IntRange(min=1, max=1000), default=100, help="at most this many")
def review_list(after: int, limit: int) -> None:
    """The records waiting for review, oldest first: id, player, deal, received, then each flag and its reason."""
    with get_db().sessions() as session:
        items, following = review_queue(session, after, limit)
        for record in items:
            received = record.received_at.isoformat(timespec="seconds")
            click.echo(f"{record.id}  {record.player}  {record.code}  {received}  score {record.score}, "
                       f"{record.actions} actions")
            for flag in record.flags or []:
                click.echo(f"    {flag['flag']}: {flag['reason']}")
    if not items:
        click.echo("nothing waits for review")
    elif following is not None:
        click.echo(f"more: --after {following}")


@review_cli.command("players")
@click.option("--after", type=click.IntRange(min=0), default=0, help="list players after this id")
@click.option("--limit", type=click.IntRange(min=1, max=1000), default=100, help="at most this many")
def review_players(after: int, limit: int) -> None:
    """Players whose names are flagged for review (kept look-alikes of older names): id, name, why."""
    with get_db().sessions() as session:
        items, following = names_for_review(session, after, limit)
        for player in items:
            click.echo(f"{player.id}  {player.name}  {'registered' if player.registered else 'no token'}  "
                       f"{player.name_review}")
    if not items:
        click.echo("no name waits for review")
    elif following is not None:
        click.echo(f"more: --after {following}")


@review_cli.command("keep-name")
@click.argument("name")
def review_keep_name(name: str) -> None:
    """Clear the review flag of the player named exactly NAME: an admin looked and keeps the name."""
    with get_db().sessions() as session:
        try:
            player = clear_name_review(session, name)
        except LookupError as error:
            raise click.ClickException(str(error)) from None
        session.commit()
        click.echo(f"player {player.id} {player.name!r}: no longer flagged")


@review_cli.command("decide")
@click.argument("record_id", type=click.IntRange(min=1, max=2 ** 63 - 1))
@click.argument("status", type=click.Choice(STATUSES))
@click.option("--reason", required=True, help="why, for the record's history")
@click.option("--actor", default="cli", show_default=True, help="who decides, for the history")
def review_decide(record_id: int, status: str, reason: str, actor: str) -> None:
    """Set RECORD_ID's STATUS (visible clears a review, hidden confirms it), with a reason the history keeps."""
    reason, actor = reason.strip(), actor.strip()
    if not reason or len(reason) > 500:
        raise click.BadParameter("give 1 to 500 characters", param_hint="--reason")
    if not actor or len(actor) > 64:
        raise click.BadParameter("give 1 to 64 characters", param_hint="--actor")
    with get_db().sessions() as session:
        record = session.get(Record, record_id)
        if record is None:
            raise click.ClickException(f"there is no record {record_id}")
        decide(session, record, status, actor, reason)
        session.commit()
        click.echo(f"record {record.id}: {record.status}, {'ranked' if record.ranked else 'unranked'}")


@players_cli.command("token")
@click.argument("name")
@click.option("--replace", is_flag=True, help="give a player who has a token a new one (the old one stops working)")
def players_token(name: str, replace: bool) -> None:
    """Print a token for the player NAME (only the token, on stdout), shown this once.

    For names kept from records stored before players registered, whose owners
    ask for them, and for players who lost their token (--replace)."""
    with get_db().sessions() as session:
        try:
            player, token = issue_token(session, name, replace)
        except (LookupError, ValueError) as error:
            raise click.ClickException(str(error)) from None
        session.commit()
        click.echo(token)
        click.echo(f"token for player {player.name!r}; hand it over now, it is not shown again", err=True)
def _reverify_on_workers(celery_app: Any, first: int, last: int, chunk: int, update: bool,
                         advance: Callable[[int], None]) -> list[tuple[int, str]]:
    """Send one task per id range, then gather their results as they end (a range
    that failed is reported and makes the command fail: nothing is skipped silently)."""
    task = celery_app.tasks[tasks.REVERIFY]
    database = get_db().identity()  # each range names it: a worker on another database refuses the range
    pending = [task.apply_async(args=(start, min(start + chunk - 1, last), update), kwargs={"database": database})
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
                done_so_far = f"{done} of {ranges} ranges ({checked} records) were re-verified before"
                if type(error).__name__ == tasks.WrongDatabase.__name__:
                    raise click.ClickException(
                        f"refused: the workers use another database than this command ({error}). Run the command "
                        f"with the workers' DATABASE_URL, start workers on this database, or use --in-process; "
                        f"{done_so_far}") from None
                raise click.ClickException(f"a range failed on a worker: {type(error).__name__}: {error}; "
                                           f"{done_so_far} and keep their stamp, run the command again") from None
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
@challenges_cli.command("prepare")
@click.option("--day", type=click.DateTime(["%Y-%m-%d"]), default=None, help="the UTC date (default: today)")
@click.option("--ahead", type=click.IntRange(0, 31), default=1, show_default=True,
              help="also prepare this many days after it")
def prepare_command(day: datetime | None, ahead: int) -> None:
    """Prove and store every variant's daily and weekly challenge for DAY and the days ahead
    (with them, the next week's). Exit status 1 if a window has no candidate proved winnable."""
    first = (day.date() if day else datetime.now(UTC).date())
    with get_db().sessions() as session:
        key = derivation_key(session, current_app.config["CHALLENGE_KEY"])
        prepared = prepare_challenges(session, first, screening_budget(current_app.config, "CHALLENGE_NODES"),
                                      current_app.config["CHALLENGE_CANDIDATES"], key, ahead)
        for challenge in prepared:
            if challenge is not None:
                click.echo(f"{challenge.variant} {challenge.kind} {challenge.starts_at:%Y-%m-%d}: {challenge.code} "
                           f"(candidate {challenge.candidate}, par {challenge.par})")
    missing = sum(1 for challenge in prepared if challenge is None)
    if missing:
        click.echo(f"{missing} window(s) without a challenge: no candidate was proved winnable", err=True)
        sys.exit(1)


@challenges_cli.command("refill-pool")
@click.option("--variant", type=click.Choice(list(engine.BY_VARIANT)), multiple=True,
              help="the variants (default: all)")
@click.option("--searches", type=click.IntRange(1), default=50, show_default=True,
              help="most searches per variant in this run")
def refill_pool_command(variant: tuple[str, ...], searches: int) -> None:
    """Search random deals until each variant's pool holds WINNABLE_POOL_SIZE deals proved winnable."""
    target = current_app.config["WINNABLE_POOL_SIZE"]
    budget = screening_budget(current_app.config, "WINNABLE_POOL_NODES")
    with get_db().sessions() as session:
        for name in variant or tuple(engine.BY_VARIANT):
            ran = refill_winnable_pool(session, name, target, budget, searches)
            click.echo(f"{name}: {ran} search(es), {pool_size(session, name, target)} of {target} in the pool")


@webhooks_cli.command("add")
@click.argument("url")
@click.option("--event", "events", multiple=True, required=True, type=click.Choice(webhooks.EVENTS),
              help="an event type to send (repeat for several)")
def webhooks_add(url: str, events: tuple[str, ...]) -> None:
    """Add an endpoint at URL for the given event types; prints its id and secret (shown once)."""
    with get_db().sessions() as session:
        try:
            endpoint, secret = webhooks.create_endpoint(session, url, events, "cli",
                                                        current_app.config["WEBHOOK_ALLOW_PRIVATE"])
        except webhooks.WebhookError as error:
            raise click.ClickException(str(error)) from None
        session.commit()
        click.echo(f"endpoint {endpoint.id}: {url} ({', '.join(endpoint.events)})")
        click.echo(f"secret (shown this once): {secret}")


@webhooks_cli.command("list")
def webhooks_list() -> None:
    """Every endpoint: id, state, events and URL."""
    with get_db().sessions() as session:
        for endpoint in webhooks.list_endpoints(session):
            state = "enabled" if endpoint.disabled_at is None else f"disabled ({endpoint.disabled_reason})"
            click.echo(f"{endpoint.id}\t{state}\t{','.join(endpoint.events)}\t{endpoint.url}")


def _webhook_command(action: Callable[[Any, int], Any], endpoint_id: int) -> Any:
    with get_db().sessions() as session:
        try:
            done = action(session, endpoint_id)
        except webhooks.UnknownEndpoint as error:
            raise click.ClickException(str(error)) from None
        session.commit()
        return done


@webhooks_cli.command("remove")
@click.argument("endpoint_id", type=int)
def webhooks_remove(endpoint_id: int) -> None:
    """Delete an endpoint and its deliveries."""
    _webhook_command(webhooks.delete_endpoint, endpoint_id)
    click.echo(f"endpoint {endpoint_id} removed")


@webhooks_cli.command("rotate")
@click.argument("endpoint_id", type=int)
def webhooks_rotate(endpoint_id: int) -> None:
    """A new secret (shown once); the old one still signs beside it for a day."""
    _, secret = _webhook_command(webhooks.rotate_secret, endpoint_id)
    click.echo(f"new secret (shown this once): {secret}")


@webhooks_cli.command("deliveries")
@click.argument("endpoint_id", type=int)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
def webhooks_deliveries(endpoint_id: int, limit: int) -> None:
    """An endpoint's latest deliveries: id, event, state, attempts and the last answer."""
    def latest(session: Any, which: int) -> list[str]:
        rows, _ = webhooks.deliveries(session, which, None, limit)
        return [f"{row.id}\t{row.message.type}\t{row.status}\t{len(row.attempts)} attempt(s)\t"
                f"{(row.attempts[-1] if row.attempts else {}).get('status_code', '-')}" for row in rows]

    for line in _webhook_command(latest, endpoint_id):
        click.echo(line)


@webhooks_cli.command("sweep")
def webhooks_sweep() -> None:
    """Announce closed challenges and send due deliveries now (what the beat does every minute)."""
    done = webhooks.sweep(current_app._get_current_object())  # type: ignore[attr-defined]
    click.echo(f"{done['announced']} challenge(s) announced, {done['sent']} delivery(ies) sent")


@webhooks_cli.command("prune")
def webhooks_prune() -> None:
    """Delete the deliveries that ended, and their messages, past WEBHOOK_KEEP_SECONDS (what the beat does hourly)."""
    done = webhooks.prune(current_app._get_current_object())  # type: ignore[attr-defined]
    click.echo(f"{done['deliveries']} delivery(ies) and {done['messages']} message(s) deleted")


def init_app(app: Flask) -> None:
    app.cli.add_command(webhooks_cli)
    app.cli.add_command(boards_cli)
    app.cli.add_command(fairplay_cli)
    app.cli.add_command(challenges_cli)
    app.cli.add_command(db_cli)
    app.cli.add_command(keys_cli)
    app.cli.add_command(records_cli)
    app.cli.add_command(review_cli)
    app.cli.add_command(players_cli)
