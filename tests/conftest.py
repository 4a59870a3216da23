"""Shared fixtures: the app on SQLite (default) or PostgreSQL (``TEST_DATABASE_URL``),
a test client that checks every response against ``openapi.yaml``, and the CLI runner.

On PostgreSQL each pytest-xdist worker gets its own database, created at the
start of the session and dropped at the end; every test starts with an empty
``records`` table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_PATH = ROOT / "openapi.yaml"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """conftest files hold fixtures, not doctests: under ``--doctest-modules`` each would
    be imported again as a module named ``conftest`` and clash with the others."""
    return True if collection_path.name == "conftest.py" else None


# -- databases -----------------------------------------------------------

def worker_name() -> str:
    """``gw0``, ``gw1`` … under pytest-xdist, ``main`` otherwise."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def libpq_url(url: str) -> str:
    """A SQLAlchemy PostgreSQL URL as psycopg itself takes it."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


@contextmanager
def postgres_database(admin_url: str, name: str) -> Iterator[str]:
    """A fresh PostgreSQL database ``name`` on the server of ``admin_url``; dropped afterwards."""
    import psycopg

    admin = libpq_url(admin_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This worker's database for the whole session."""
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'records.sqlite3'}"
        return
    with postgres_database(base, f"api_test_{worker_name()}") as url:
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
    with postgres_database(base, f"api_empty_{worker_name()}") as url:
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
        app = create_app({"TESTING": True, "DATABASE_URL": database_url, **config})
        app.test_client_class = client_class
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["api.db"].dispose()


@pytest.fixture
def app(make_app: Callable[..., Any]) -> Any:
    """The app on this session's database, with no records in it."""
    from sqlalchemy import text

    app = make_app()
    engine = app.extensions["api.db"].engine
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("TRUNCATE records RESTART IDENTITY"))
        else:
            connection.execute(text("DELETE FROM records"))
    return app


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
