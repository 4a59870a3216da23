"""Shared fixtures: the app on SQLite (default) or PostgreSQL (``TEST_DATABASE_URL``),
a test client that checks every response under ``/api/v1`` against ``openapi.yaml``,
the CLI runner, API keys, and a TCP proxy to cut the database off.

When ``TEST_DATABASE_URL`` is set, every database test runs twice: on SQLite
and on PostgreSQL. On PostgreSQL each pytest-xdist worker gets its own database, created at the
start of the session and dropped at the end; every test starts with empty
tables. Apps made here have rate limits off and API keys optional (as in
development) unless a test turns them on: ``make_app(RATELIMIT_ENABLED=True)``,
``make_app(API_KEYS_REQUIRED=True)``.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_PATH = ROOT / "openapi.yaml"
API_PREFIX = "/api/v1"
#: what tests start from unless they say otherwise: no rate limits, keys optional, the solver
#: running small searches eagerly inside the request (no broker, no worker), records without times ranked;
#: searches end at their node budget, whatever the machine's speed (the seconds are a safety net only)
TEST_DEFAULTS = {"RATELIMIT_ENABLED": False, "API_KEYS_REQUIRED": False, "CELERY_BROKER_URL": None,
                 "SOLVER_BUDGET_NODES": 10000, "SOLVER_HINT_NODES": 10000,
                 "SOLVER_BUDGET_SECONDS": 60, "SOLVER_HINT_SECONDS": 60,
                 # (untimed records rank, and no deal is solved because a record ranks: tests of fair play turn
                 # both on, as they are by default)
                 "FAIRPLAY_TIMES_REQUIRED": False, "FAIRPLAY_SOLVE_TOP": None}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """conftest files hold fixtures, not doctests: under ``--doctest-modules`` each would
    be imported again as a module named ``conftest`` and clash with the others."""
    return True if collection_path.name == "conftest.py" else None


# -- databases -----------------------------------------------------------

def worker_name() -> str:
    """``gw0``, ``gw1`` … under pytest-xdist, ``main`` otherwise; prefixed with
    ``TEST_RUN_ID`` when set, so that two suites on one server never share a database."""
    run = os.environ.get("TEST_RUN_ID", "")
    return f"{run}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}" if run else os.environ.get("PYTEST_XDIST_WORKER", "main")


#: the databases every database test runs on: SQLite always, PostgreSQL too when ``TEST_DATABASE_URL`` is set
DATABASE_KINDS = ["sqlite", "postgresql"] if os.environ.get("TEST_DATABASE_URL") else ["sqlite"]


@pytest.fixture(scope="session", params=DATABASE_KINDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This worker's database of one kind for the whole session (tests that use it run once per kind)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'records.sqlite3'}"
        return
    from api.platform.db import scratch_postgres_database  # (here: the engine's tests run without the api's packages)

    with scratch_postgres_database(os.environ["TEST_DATABASE_URL"], f"api_test_{worker_name()}") as url:
        yield url


@pytest.fixture
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with nothing in it, of the kind the test is parametrized with
    (``sqlite`` or ``postgresql``; PostgreSQL needs ``TEST_DATABASE_URL``), else of the suite's kind."""
    kind = getattr(request, "param", None) or ("postgresql" if os.environ.get("TEST_DATABASE_URL") else "sqlite")
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        pytest.skip("PostgreSQL: set TEST_DATABASE_URL")
    from api.platform.db import scratch_postgres_database

    with scratch_postgres_database(base, f"api_empty_{worker_name()}") as url:
        yield url


# -- the contract --------------------------------------------------------

@lru_cache(maxsize=1)
def openapi() -> Any:
    import yaml
    from openapi_core import Config, OpenAPI
    from openapi_core.deserializing.media_types.util import json_loads

    config = Config(extra_media_type_deserializers={"application/problem+json": json_loads,
                                                    "application/yaml": lambda data, **_: yaml.safe_load(data)})
    return OpenAPI.from_file_path(str(SPEC_PATH), config=config)


@lru_cache(maxsize=1)
def problem_validator() -> Any:
    """A JSON Schema validator for ``components/schemas/Problem`` (references resolved in the spec)."""
    import yaml
    from openapi_schema_validator import OAS31Validator

    spec = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    return OAS31Validator({"$ref": "#/components/schemas/Problem", "components": spec["components"]})


def check_response(response: Any) -> None:
    """Fail unless ``response`` is what ``openapi.yaml`` promises for its request:
    status, content type, headers and body. A request outside the spec (an
    unknown path or method) must be answered 404 or 405 with a Problem."""
    from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
    from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound

    request = response.request
    where = f"{request.method} {request.full_path.rstrip('?')} -> {response.status_code}"
    assert response.headers.get("X-Request-ID"), f"{where}: no X-Request-ID header"
    if not request.path.startswith(API_PREFIX + "/"):
        return  # the players' pages: not part of the contract

    class RequestOnly(WerkzeugOpenAPIRequest):
        body = b""  # the app has read the body; the response check only needs method, path and query

    try:
        openapi().validate_response(RequestOnly(request), WerkzeugOpenAPIResponse(response))
    except (PathNotFound, OperationNotFound):
        assert response.status_code in (404, 405), f"{where}: not in openapi.yaml, yet answered"
        assert response.mimetype == "application/problem+json", f"{where}: {response.mimetype}"
        errors = [e.message for e in problem_validator().iter_errors(response.get_json())]
        assert not errors, f"{where}: not a Problem: {errors}"
    except Exception as exc:
        cause = exc.__cause__
        details = getattr(cause, "schema_errors", None) or cause or ""
        raise AssertionError(f"{where}: response does not match openapi.yaml: {exc!r} {details}\n"
                             f"{response.get_data(as_text=True)[:2000]}") from exc


def _validating_client_class() -> type:
    from flask.testing import FlaskClient

    class OpenAPIClient(FlaskClient):
        """A test client that checks every response against the contract."""

        def open(self, *args: Any, **kwargs: Any) -> Any:
            response = super().open(*args, **kwargs)
            check_response(response)
            return response

    return OpenAPIClient


# -- the app -------------------------------------------------------------

@pytest.fixture
def make_app(database_url: str) -> Iterator[Callable[..., Any]]:
    """``make_app(**config)``: an app on this session's database (unless
    ``DATABASE_URL`` is given) whose test clients validate every response."""
    from api import create_app

    apps = []
    client_class = _validating_client_class()

    def make(**config: Any) -> Any:
        app = create_app({"TESTING": True, "DATABASE_URL": database_url, **TEST_DEFAULTS, **config})
        app.test_client_class = client_class
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["api.platform.db"].dispose()


def empty_tables(app: Any) -> None:
    """Empty every table of the models, those that refer to others first."""
    from sqlalchemy import text

    from api.platform.models import Base

    tables = [table.name for table in reversed(Base.metadata.sorted_tables)]
    engine = app.extensions["api.platform.db"].engine
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY"))
        else:
            for table in tables:
                connection.execute(text(f"DELETE FROM {table}"))


@pytest.fixture
def make_empty_app(make_app: Callable[..., Any]) -> Callable[..., Any]:
    """``make_empty_app(**config)``: :func:`make_app`, with every table emptied first."""

    def make(**config: Any) -> Any:
        app = make_app(**config)
        empty_tables(app)
        return app

    return make


@pytest.fixture
def app(make_empty_app: Callable[..., Any]) -> Any:
    """The app on this session's database, with nothing in it."""
    return make_empty_app()


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


@pytest.fixture
def runner(app: Any) -> Any:
    return app.test_cli_runner()


@pytest.fixture
def check_against_spec() -> Callable[[Any], None]:
    """:func:`check_response`, for tests of the checking itself."""
    return check_response


# -- API keys --------------------------------------------------------------

@pytest.fixture
def make_key(app: Any) -> Callable[..., str]:
    """``make_key(name, admin=False)``: a new API key in the app's database; returns the token."""
    from api.platform.auth import create_key

    def make(name: str, admin: bool = False) -> str:
        with app.extensions["api.platform.db"].sessions() as session:
            return create_key(session, name, admin)[1]

    return make


def bearer(token: str) -> dict[str, str]:
    """The header that sends ``token``."""
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def auth() -> Callable[[str], dict[str, str]]:
    """``auth(token)``: ``{"Authorization": "Bearer <token>"}``."""
    return bearer


# -- a TCP proxy, to take the database away and bring it back ---------------

class TcpProxy:
    """Forwards connections from ``127.0.0.1:port`` to ``target``, one thread per direction.

    :meth:`stop` closes the listening socket and every open connection (the
    database looks down: new connections are refused, open ones break);
    :meth:`start` listens again on the same port (the database is back).

    :meth:`black_hole` is a network partition instead: connections stay open and new
    ones are accepted, but every byte either way is dropped (nothing is refused, nothing
    answers); :meth:`heal` forwards again. The connections that lost bytes are out of
    step for good: healing closes them, as the database server would have by then."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._dropping = False
        self._dropped: set[socket.socket] = set()  # connections that lost bytes, or opened in the hole

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def black_hole(self) -> None:
        self._dropping = True

    def heal(self) -> None:
        with self._lock:
            self._dropping = False
            dropped, self._dropped = self._dropped, set()
            self._sockets -= dropped
        for sock in dropped:
            _close(sock)

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _close(sock)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by stop()
                return
            if self._dropping:  # accepted, and then nothing: what was sent is read and dropped
                with self._lock:
                    self._sockets.add(client)
                    self._dropped.add(client)
                threading.Thread(target=self._pipe, args=(client, None), daemon=True).start()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:  # stopped meanwhile
                    _close(client)
                    _close(upstream)
                    return
                self._sockets |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket | None) -> None:
        try:
            while data := source.recv(65536):
                if self._dropping or sink is None:
                    with self._lock:
                        self._dropped |= {source} if sink is None else {source, sink}
                    continue
                sink.sendall(data)
        except OSError:
            pass
        finally:
            ends = {source} if sink is None else {source, sink}
            for sock in ends:
                _close(sock)
            with self._lock:
                self._sockets -= ends
                self._dropped -= ends


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


@pytest.fixture
def tcp_proxy() -> Iterator[Callable[[str, int], TcpProxy]]:
    """``tcp_proxy(host, port)``: a started :class:`TcpProxy` to ``host:port``, stopped after the test."""
    proxies: list[TcpProxy] = []

    def make(host: str, port: int) -> TcpProxy:
        proxy = TcpProxy(host, port)
        proxy.start()
        proxies.append(proxy)
        return proxy

    yield make
    for proxy in proxies:
        proxy.stop()
