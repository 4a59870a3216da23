"""Alembic environment: runs the migrations on the connection ``api.platform.db`` hands over
(``flask --app api db upgrade``, or automatically when the app starts)."""

from __future__ import annotations

import logging
from typing import Any

from alembic import context
from sqlalchemy import Connection, text

from api.platform.models import Base

#: any fixed number; PostgreSQL advisory lock held while migrating
MIGRATION_LOCK = 7_385_021_144

config = context.config
target_metadata = Base.metadata
log = logging.getLogger("api.migrations")


def log_step(ctx: Any, step: Any, heads: Any, run_args: Any) -> None:
    """One line in the app's log per migration actually run."""
    direction = "upgraded" if step.is_upgrade else "downgraded"
    log.info("database schema %s: %s -> %s (%s)", direction, ", ".join(step.source_revision_ids) or "empty",
             ", ".join(step.destination_revision_ids) or "empty", step.up_revision.doc)


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # ALTER TABLE by copy on SQLite
        compare_type=True,
        on_version_apply=log_step,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # several workers may start at once: one migrates, the others wait and find the schema at head
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()


def run_offline() -> None:
    """``--sql`` mode: print the SQL for the URL in ``sqlalchemy.url``."""
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    connection = config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("migrations run on the app's database connection: use "
                           "`flask --app api db upgrade` (or start the app with AUTO_MIGRATE=1)")
    run_migrations(connection)
