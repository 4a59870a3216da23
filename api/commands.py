"""``flask --app api db …``: the schema's migrations from the command line."""

from __future__ import annotations

import click
from alembic import command
from flask import Flask
from flask.cli import AppGroup

from .db import alembic_config, get_db

db_cli = AppGroup("db", help="The records database schema (Alembic migrations in migrations/).")


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


def init_app(app: Flask) -> None:
    app.cli.add_command(db_cli)
