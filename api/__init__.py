"""The REST service: deals, verification, verified records and leaderboards
under ``/api/v1``, on SQLite (default) or PostgreSQL.

``flask --app api run`` or ``gunicorn 'api:create_app()'``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, cast

from flask import Flask, Request
from sqlalchemy import make_url
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream, get_input_stream

from api import commands, routes, tasks
from api.boards import upkeep  # noqa: F401 (its ORM hooks keep the boards)
from api.pages import cards as page_cards  # noqa: F401 (adds views to page_views.bp)
from api.pages import challenges as page_challenges  # noqa: F401 (adds views to page_views.bp)
from api.pages import check as page_check  # noqa: F401 (adds views to page_views.bp)
from api.pages import players as page_players  # noqa: F401 (adds views to page_views.bp)
from api.pages import views as page_views
from api.platform import db, events, limits, logs, problems
from api.platform.config import load_settings
from api.routes import metrics
from api.solver.queue import Solver
from api.tasks import challenges as challenge_tasks
from api.tasks import fairplay as fairplay_tasks
from api.tasks import webhooks as webhook_tasks

#: the contract, at the top of the repository
OPENAPI_PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"


class _DecodedBody:
    """The server's decoded body stream, whose decoding errors (gunicorn raises its own
    exceptions for malformed chunks) become 400 instead of escaping as 500."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        try:
            return self._stream.read(size)
        except (OSError, ValueError):  # a client gone: werkzeug's stream handles it
            raise
        except Exception as error:
            raise BadRequest(f"the chunked request body is malformed ({type(error).__name__})") from None


class BoundedBody(LimitedStream):
    """A body sent without ``Content-Length`` (``Transfer-Encoding: chunked``), read up to
    ``limit`` bytes; one byte more is 413. (Werkzeug's own stream stops at the limit and
    hands the view the first ``limit`` bytes as if they were the whole body.)"""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        super().__init__(_DecodedBody(stream), limit, is_max=True)  # type: ignore[arg-type]

    def on_exhausted(self) -> None:
        if self._stream.read(1):  # the server ends the stream at the body's end: more is too much
            raise RequestEntityTooLarge()

    def readall(self) -> bytes:
        data = super().readall()
        if self.is_exhausted:
            self.on_exhausted()
        return data


class ServiceRequest(Request):
    """Flask's request, whose body stream refuses a chunked body past ``MAX_CONTENT_LENGTH``."""

    @cached_property
    def stream(self) -> IO[bytes]:
        limit = self.max_content_length
        if self.content_length is None and limit is not None and "wsgi.input_terminated" in self.environ:
            return cast(IO[bytes], BoundedBody(self.environ["wsgi.input"], limit))
        return get_input_stream(self.environ, max_content_length=limit)


class Service(Flask):
    """Flask, with each view run again once if a pooled database connection turns out
    to be broken (:func:`api.platform.db.retrying_lost_connection`), and chunked bodies held to
    ``MAX_CONTENT_LENGTH`` (:class:`ServiceRequest`)."""

    request_class = ServiceRequest

    def dispatch_request(self) -> Any:
        return db.retrying_lost_connection(super().dispatch_request)


def listen() -> None:
    """Who listens to the services' events (:mod:`api.platform.events`); connecting again changes nothing."""
    events.line_learned.connect(fairplay_tasks.line_learned)  # fair play judges the deal's records again
    events.record_submitted.connect(fairplay_tasks.record_submitted)  # … or a new one, on the worker tier
    events.deliveries_written.connect(webhook_tasks.dispatch_written)  # webhook deliveries go out
    events.challenge_unprepared.connect(challenge_tasks.challenge_unprepared)  # a challenge prepared first
    events.pool_empty.connect(challenge_tasks.pool_empty)  # a few deals searched for the winnable pool


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app: settings (environment, then ``config``), JSON logging, the
    database (migrated to head unless ``AUTO_MIGRATE`` is off), error handlers,
    rate limits, the worker tier and the solver, who listens to the services' events,
    blueprints and CLI commands."""
    app = Service(__name__, static_folder=None, template_folder="pages/templates")
    app.config.update(OPENAPI_PATH=str(OPENAPI_PATH))
    app.config.update(load_settings(app.instance_path, config))
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep the verifier's key order
    logs.init_app(app)
    url = make_url(app.config["DATABASE_URL"])
    if url.get_backend_name() == "sqlite" and url.database and Path(url.database).parent == Path(app.instance_path):
        Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    db.init_app(app)
    metrics.init_app(app)  # GET /metrics, request durations, the pool's connections
    problems.init_app(app)
    limits.init_app(app)  # rate limits: before any view runs, after the request id is set
    tasks.init_app(app)  # the worker tier's Celery app, to send tasks with (never waiting for one)
    app.extensions["api.solver"] = Solver(app.extensions["api.platform.db"], app.config, tasks.sender(app))
    listen()
    routes.init_app(app)
    page_views.init_app(app)  # the players' HTML pages, outside /api/v1
    commands.init_app(app)
    return app
