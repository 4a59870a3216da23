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
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import psycopg
from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask, current_app, g
from psycopg.errors import _WaitTimeout as _WAIT_TIMEOUT  # what Connection.wait raises past its timeout (3.3)
from sqlalchemy import (
    BigInteger,
    Connection,
    Integer,
    LargeBinary,
    String,
    bindparam,
    create_engine,
    event,
    func,
    literal_column,
    make_url,
    text,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from api.platform.config import normalize_database_url

if sys.platform != "win32":
    import fcntl
else:  # no flock: one process migrates on Windows (AUTO_MIGRATE=0 and `flask db upgrade` for more)
    fcntl = None  # type: ignore[assignment]

#: the Alembic scripts, at the top of the repository (the README installs it editable)
MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
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


@dataclass(frozen=True)
class Timeouts:
    """How long a PostgreSQL client waits (seconds), so that a database that stops answering
    (a network partition drops the packets: nothing is refused) gives errors, not hangs.

    ``statement``: PostgreSQL's ``statement_timeout`` (the server cancels a slow statement),
    and one second after it, the client's own deadline on any answer (a query, a commit),
    which the server cannot enforce when it never gets the question; ``connect``: opening a
    connection; ``pool``: waiting for a pooled connection when all are in use."""

    connect: int = 3
    statement: float = 5.0
    pool: float = 3.0

    @property
    def answer(self) -> float:
        return self.statement + 1.0


@dataclass(frozen=True)
class PoolSize:
    """A process's PostgreSQL connections: ``size`` kept open, up to ``overflow`` more at busy
    moments (docs/operations.md sizes them against the server's ``max_connections``)."""

    size: int = 5
    overflow: int = 10


#: TCP keepalives on idle pooled connections: a peer gone silent is found within about 25 s
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}


class AnswerTimeout(psycopg.OperationalError):
    """The database sent no answer in time; the connection is closed (it is out of step)."""


class DeadlineConnection(psycopg.Connection):  # type: ignore[type-arg]
    """psycopg's connection, which waits at most ``answer_timeout`` seconds for each answer
    (every query, fetch, commit and rollback goes through :meth:`wait`); past it, the
    connection is closed and :class:`AnswerTimeout` raised, which SQLAlchemy takes for
    a lost connection (the pool drops it)."""

    answer_timeout: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        limit = self.answer_timeout if timeout is None else timeout
        try:
            return super().wait(gen, interval, limit)
        except _WAIT_TIMEOUT:
            if timeout is not None:  # psycopg's own deadline (cancelling on Ctrl-C): its business
                raise
            self.pgconn.finish()
            raise AnswerTimeout(f"the database did not answer within {limit:g} s") from None


def _engine_options(url: str, timeouts: Timeouts, pool: PoolSize) -> dict[str, Any]:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        # wait for a writer instead of failing at once with "database is locked"
        return {"connect_args": {"timeout": 30}}
    if backend == "postgresql":
        options = str(parsed.query.get("options", ""))
        statement = f"-c statement_timeout={round(timeouts.statement * 1000)}"
        return {"pool_timeout": timeouts.pool,  # no pre-ping: see retrying_lost_connection
                "pool_size": pool.size, "max_overflow": pool.overflow,
                "connect_args": {"connect_timeout": timeouts.connect, **KEEPALIVES,
                                 # unacknowledged data for this long: the kernel closes the connection
                                 "tcp_user_timeout": round(timeouts.answer * 1000),
                                 "options": f"{options} {statement}".strip()}}
    return {}


def _deadline_connect(timeouts: Timeouts) -> Callable[..., Any]:
    """A ``do_connect`` hook: PostgreSQL connections of the class that keeps a deadline on answers."""

    def connect(_dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        connection = DeadlineConnection.connect(*cargs, **cparams)
        connection.answer_timeout = timeouts.answer
        return connection

    return connect


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    cursor.close()


class Database:
    """An engine, its session factory and the schema's migration state."""

    def __init__(self, url: str, timeouts: Timeouts | None = None, pool: PoolSize | None = None) -> None:
        self.timeouts = timeouts or Timeouts()
        self.engine = create_engine(url, **_engine_options(url, self.timeouts, pool or PoolSize()))
        if self.engine.dialect.name == "sqlite" and make_url(url).database not in (None, "", ":memory:"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        if self.engine.dialect.name == "postgresql" and self.engine.dialect.driver == "psycopg":
            event.listen(self.engine, "do_connect", _deadline_connect(self.timeouts))
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._ping_lock = threading.Lock()
        self.heads = frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())

    def upgrade(self, revision: str = "head") -> None:
        """Run the migrations up to ``revision`` (on PostgreSQL under an advisory lock, on a
        SQLite file under a lock on a file beside it, so that several workers starting at
        once upgrade one after the other: the first migrates, the others find it done)."""
        with self._file_lock(), self.engine.begin() as connection, unbounded(connection):
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

    def identity(self) -> str:
        """Which database this is, in words without secrets, the same in every process that uses
        it whatever URL reached it (a host's alias, a socket): on PostgreSQL the database's name
        and OID on its server and the time that server started (no two servers share it), on
        SQLite the file's real path. Bulk commands compare it with their workers' (``records reverify``)."""
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            path = url.database or ""
            return "SQLite in memory" if path in ("", ":memory:") else f"SQLite file {os.path.realpath(path)}"
        with self.engine.connect() as connection:
            name, oid, started = connection.execute(text(  # (started: an aware datetime)
                "SELECT datname, oid, pg_postmaster_start_time() FROM pg_database "
                "WHERE datname = current_database()")).one()
        moment = cast(datetime, started)
        return f"PostgreSQL database {name!r} (OID {oid}, server started {moment.astimezone(UTC).isoformat()})"

    def ping(self) -> None:
        """Run a query; raises the driver's error if the database cannot answer. A pooled
        connection found broken (a restart in the meantime) is replaced and asked again."""
        retrying_lost_connection(self._select_one, new_session=False)

    def current_within(self, seconds: float) -> frozenset[str]:
        """:meth:`ping`, then :meth:`current`, given up after ``seconds`` (:class:`PingTimeout`):
        the readiness probe's check. It runs on a thread of its own, one at a time: while one
        is still waiting for the database, the next probe is answered at once."""
        if not self._ping_lock.acquire(blocking=False):
            raise PingTimeout("the previous check of the database has not finished")
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                self.ping()
                outcome["current"] = self.current()
            except BaseException as error:  # handed to the probe below
                outcome["error"] = error
            finally:
                self._ping_lock.release()

        worker = threading.Thread(target=run, name="readiness-check", daemon=True)
        worker.start()
        worker.join(seconds)
        if "error" in outcome:
            raise outcome["error"]
        if "current" not in outcome:
            raise PingTimeout(f"the database did not answer within {seconds:g} s")
        return outcome["current"]

    def _select_one(self) -> None:
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1")).scalar_one()

    def dispose(self) -> None:
        self.engine.dispose()


class PingTimeout(Exception):
    """The readiness ping did not finish in time."""


@contextmanager
def unbounded(connection: Connection) -> Iterator[Connection]:
    """Lift the statement timeout and the answer deadline for the work of ``connection``'s
    transaction (a migration, an import: long by nature, and run by an operator)."""
    if connection.dialect.name != "postgresql":
        yield connection
        return
    connection.execute(text("SET LOCAL statement_timeout = 0"))
    raw = connection.connection.dbapi_connection
    before = getattr(raw, "answer_timeout", None)
    if raw is not None and hasattr(raw, "answer_timeout"):
        raw.answer_timeout = None
    try:
        yield connection
    finally:
        if raw is not None and hasattr(raw, "answer_timeout"):
            raw.answer_timeout = before


#: a bind parameter that has no value of its own and was not given
_REQUIRED: Any = object()


class DollarStatement:
    """A large fixed PostgreSQL statement, run with PostgreSQL's own ``$n`` placeholders
    (``psycopg.RawCursor``) through SQLAlchemy's :meth:`Connection.exec_driver_sql`, which
    keeps its error handling (wrapped errors, broken connections invalidated).

    psycopg rewrites a ``%(name)s`` statement into ``$n`` form on every execution once it is
    longer than 4 KB or has more than 50 parameters (it caches only smaller ones): for the
    record's store statement (8 KB, 94 parameters) that was about a millisecond of CPU a
    record. Here the statement is compiled once, and each execution only orders the values
    and applies SQLAlchemy's bind processors (JSON, booleans, arrays, times), and its result
    processors to the rows (times read back in UTC): no cache key, no compiled parameters."""

    def __init__(self, statement: Any) -> None:
        self.statement = statement
        self._form: tuple[str, list[tuple[str, Any, Callable[[Any], Any] | None]],
                          list[Callable[[Any], Any] | None]] | None = None

    def _compiled(self, connection: Connection) -> tuple[str, list[tuple[str, Any, Callable[[Any], Any] | None]],
                                                         list[Callable[[Any], Any] | None]]:
        if self._form is None:
            dialect = cast(Any, type(connection.dialect))(paramstyle="numeric_dollar")
            compiled = self.statement.compile(dialect=dialect)
            binds = []
            for name in compiled.positiontup:
                bind = compiled.binds[name]
                own = _REQUIRED if bind.required else bind.effective_value  # (a literal's value, or None)
                binds.append((name, own, bind.type.dialect_impl(dialect).bind_processor(dialect)))
            results = [entry.type.dialect_impl(dialect).result_processor(dialect, None)
                       for entry in compiled._result_columns]
            self._form = compiled.string, binds, results
        return self._form

    def execute(self, connection: Connection, params: Mapping[str, Any]) -> list[Any]:
        """The statement's rows, with ``params`` by bind name (as :meth:`Connection.execute` takes them)."""
        sql, binds, results = self._compiled(connection)
        positional = []
        for name, own, process in binds:
            value = params.get(name, own)
            if value is _REQUIRED:
                raise KeyError(f"a value is required for the bind parameter {name!r}")
            positional.append(value if process is None else process(value))
        raw = connection.connection.driver_connection
        assert isinstance(raw, psycopg.Connection)
        cursors = raw.cursor_factory
        raw.cursor_factory = psycopg.RawCursor
        try:
            rows = list(connection.exec_driver_sql(sql, tuple(positional)).all())
        finally:
            raw.cursor_factory = cursors
        if not any(results):
            return rows
        return [tuple(value if process is None else process(value) for value, process in zip(row, results))
                for row in rows]


def packed_values(name: str) -> Any:
    """PostgreSQL: the signed 64-bit values in the bytes of the bind parameter ``name``
    (:func:`api.fairplay.evidence.pack`: big-endian, 8 bytes each), as a column of rows. psycopg dumps
    a list of integers one element at a time (about 2 µs each, 0.3 ms for a line of 150
    positions); bytes go as one value."""
    packed = bindparam(name, type_=LargeBinary)
    one, eight = literal_column("1", Integer), literal_column("8", Integer)  # (in the text: psycopg caches a
    at = func.generate_series(one, func.length(packed), eight).column_valued("at")  # text under 4 KB only)
    word = literal_column("'x'", String) + func.encode(func.substr(packed, at, eight), literal_column("'hex'", String))
    return sql_cast(sql_cast(word, postgresql.BIT(64)), BigInteger)


def timeouts(config: Mapping[str, Any]) -> Timeouts:
    return Timeouts(connect=config["DATABASE_CONNECT_TIMEOUT"], statement=config["DATABASE_STATEMENT_TIMEOUT"],
                    pool=config["DATABASE_POOL_TIMEOUT"])


def init_app(app: Flask) -> Database:
    database = Database(app.config["DATABASE_URL"], timeouts(app.config),
                        PoolSize(app.config["DATABASE_POOL_SIZE"], app.config["DATABASE_MAX_OVERFLOW"]))
    app.extensions["api.platform.db"] = database
    if app.config["AUTO_MIGRATE"]:
        database.upgrade()
        database.dispose()  # no pooled connection survives into forked workers
    app.teardown_appcontext(_close_session)
    return database


def get_db() -> Database:
    return current_app.extensions["api.platform.db"]


def session() -> Session:
    """The current request's session, opened on first use."""
    if "db_session" not in g:
        g.db_session = get_db().sessions()
    return g.db_session


def _close_session(_exc: BaseException | None) -> None:
    """Close the request's session. Its rollback may meet a database that stopped answering
    (the answer deadline: :class:`AnswerTimeout`) after the response was made: the connection is
    then dropped from the pool and the error logged, never raised out of the request (which the
    server would answer with a bare 500)."""
    db_session = g.pop("db_session", None)
    if db_session is None:
        return
    try:
        db_session.close()
    except Exception as error:
        log.warning("the request's database session could not be rolled back (%s: %s): its connection is dropped",
                    type(error).__name__, getattr(error, "orig", None) or error)
        try:
            db_session.invalidate()
        except Exception:  # the connection is gone already: nothing more to drop
            log.debug("invalidating the session failed too", exc_info=True)


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
        # (a database that did not answer in time is not asked again: the client would wait twice)
        if not error.connection_invalidated or isinstance(error.orig, AnswerTimeout):
            raise
        log.warning("a pooled database connection was broken (%s): running the request again on a new one",
                    type(error.orig).__name__)
    if new_session:
        _close_session(None)
    return dispatch()


def postgres_database_url(admin_url: str, name: str | None = None) -> str:
    """The libpq URL of the server of ``admin_url``, of its database ``name`` if given."""
    url = make_url(normalize_database_url(admin_url)).set(drivername="postgresql")
    return (url if name is None else url.set(database=name)).render_as_string(hide_password=False)


def _as_admin(admin_url: str, *statements: str) -> None:
    with psycopg.connect(postgres_database_url(admin_url), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def fresh_postgres_database(admin_url: str, name: str) -> str:
    """Database ``name`` on the server of ``admin_url``, dropped if it was there and made
    anew, empty (for tests and benchmarks). Its libpq URL."""
    _as_admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    return postgres_database_url(admin_url, name)


@contextmanager
def scratch_postgres_database(admin_url: str, name: str) -> Iterator[str]:
    """:func:`fresh_postgres_database`, dropped afterwards. Yields its libpq URL."""
    url = fresh_postgres_database(admin_url, name)
    try:
        yield url
    finally:
        _as_admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
