"""The database: one engine per app, one session per request, Alembic
migrations and the readiness check.

Views call :func:`session`; the session is opened on first use in a request
and closed when the request's app context ends (SQLAlchemy's documented
session-per-request pattern).

Pooled PostgreSQL connections are not pinged before each use (a round trip per
request); a connection that broke while it sat in the pool (a database restart,
a dropped idle connection) fails its first statement instead, SQLAlchemy then
discards it and every other connection of the pool, and
:func:`retrying_lost_connection` runs the request again, once, on a new one
(SQLAlchemy's "optimistic" disconnect handling, with the retry it leaves to the
application). No request fails for a connection lost in between.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask, current_app, g
from sqlalchemy import Connection, create_engine, event, make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from .config import normalize_database_url

if sys.platform != "win32":
    import fcntl
else:  # no flock: one process migrates on Windows (AUTO_MIGRATE=0 and `flask db upgrade` for more)
    fcntl = None  # type: ignore[assignment]

#: the Alembic scripts, at the top of the repository (the README installs it editable)
MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
log = logging.getLogger(__name__)
T = TypeVar("T")


def alembic_config(connection: Connection | None = None) -> AlembicConfig:
    """Alembic's configuration, built in code (no ``alembic.ini``); ``migrations/env.py``
    runs on ``connection`` when one is given."""
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    cfg.attributes["connection"] = connection
    return cfg


def _engine_options(url: str) -> dict[str, Any]:
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        # wait for a writer instead of failing at once with "database is locked"
        return {"connect_args": {"timeout": 30}}
    if backend == "postgresql":
        return {"connect_args": {"connect_timeout": 5}}  # no pre-ping: see retrying_lost_connection
    return {}


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    cursor.close()


class Database:
    """An engine, its session factory and the schema's migration state."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url, **_engine_options(url))
        if self.engine.dialect.name == "sqlite" and make_url(url).database not in (None, "", ":memory:"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.heads = frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())

    def upgrade(self, revision: str = "head") -> None:
        """Run the migrations up to ``revision`` (on PostgreSQL under an advisory lock, on a
        SQLite file under a lock on a file beside it, so that several workers starting at
        once upgrade one after the other: the first migrates, the others find it done)."""
        with self._file_lock(), self.engine.begin() as connection:
            command.upgrade(alembic_config(connection), revision)  # migrations/env.py logs each step

    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        """On a SQLite file ``x.sqlite3``, an exclusive ``flock`` on ``x.sqlite3.lock`` (SQLite's own
        locks do not cover Alembic's check-then-create of its version table); else nothing."""
        url = self.engine.url
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:") or fcntl is None:
            yield
            return
        with open(f"{url.database}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
            yield

    def current(self) -> frozenset[str]:
        """The revisions the database is at (empty before the first migration)."""
        with self.engine.connect() as connection:
            return frozenset(MigrationContext.configure(connection).get_current_heads())

    def ping(self) -> None:
        """Run a query; raises the driver's error if the database cannot answer. A pooled
        connection found broken (a restart in the meantime) is replaced and asked again."""
        retrying_lost_connection(self._select_one, new_session=False)

    def _select_one(self) -> None:
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1")).scalar_one()

    def dispose(self) -> None:
        self.engine.dispose()


def init_app(app: Flask) -> Database:
    database = Database(app.config["DATABASE_URL"])
    app.extensions["api.db"] = database
    if app.config["AUTO_MIGRATE"]:
        database.upgrade()
        database.dispose()  # no pooled connection survives into forked workers
    app.teardown_appcontext(_close_session)
    return database


def get_db() -> Database:
    return current_app.extensions["api.db"]


def session() -> Session:
    """The current request's session, opened on first use."""
    if "db_session" not in g:
        g.db_session = get_db().sessions()
    return g.db_session


def _close_session(_exc: BaseException | None) -> None:
    db_session = g.pop("db_session", None)
    if db_session is not None:
        db_session.close()


def retrying_lost_connection(dispatch: Callable[[], T], *, new_session: bool = True) -> T:
    """``dispatch()`` (a request's view), run once more, on a new connection (and, with
    ``new_session``, the request's new session), if it failed because a pooled
    connection turned out to be broken.

    Running the view again is safe: on a broken connection the database has rolled
    back the view's open transaction (an autocommitted statement is stored or not),
    and the API's writes are idempotent: storing a record skips a record already
    stored (``POST /records`` then answers with it), setting the status a record
    has records nothing, and a deal's solvability search is claimed once. A
    database that is down fails the new connection as well: that error goes on to
    the error handlers (503).
    """
    try:
        return dispatch()
    except DBAPIError as error:
        if not error.connection_invalidated:
            raise
        log.warning("a pooled database connection was broken (%s): running the request again on a new one",
                    type(error.orig).__name__)
    if new_session:
        _close_session(None)
    return dispatch()


@contextmanager
def scratch_postgres_database(admin_url: str, name: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database ``name`` on the server of ``admin_url``,
    dropped afterwards (for tests and benchmarks). Yields its libpq URL."""
    import psycopg

    admin = make_url(normalize_database_url(admin_url)).set(drivername="postgresql")
    admin_text = admin.render_as_string(hide_password=False)
    with psycopg.connect(admin_text, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin_text, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
