"""The REST service: deals, verification, verified records and leaderboards
under ``/api/v1``, on SQLite (default) or PostgreSQL.

``flask --app api run`` or ``gunicorn 'api:create_app()'``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import make_url

from . import boards, commands, db, limits, logs, problems, routes, solving  # noqa: F401 (boards: its ORM hooks)
from .config import load_settings
from .routes import pages

#: the contract, at the top of the repository
OPENAPI_PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"


class Service(Flask):
    """Flask, with each view run again once if a pooled database connection turns out
    to be broken (:func:`api.db.retrying_lost_connection`)."""

    def dispatch_request(self) -> Any:
        return db.retrying_lost_connection(super().dispatch_request)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app: settings (environment, then ``config``), JSON logging, the
    database (migrated to head unless ``AUTO_MIGRATE`` is off), error handlers,
    rate limits, blueprints and CLI commands."""
    app = Service(__name__, static_folder=None)
    app.config.update(OPENAPI_PATH=str(OPENAPI_PATH))
    app.config.update(load_settings(app.instance_path, config))
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep the verifier's key order
    logs.init_app(app)
    url = make_url(app.config["DATABASE_URL"])
    if url.get_backend_name() == "sqlite" and url.database and Path(url.database).parent == Path(app.instance_path):
        Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    db.init_app(app)
    problems.init_app(app)
    limits.init_app(app)  # rate limits: before any view runs, after the request id is set
    solving.init_app(app)  # the solver's worker processes start with the first search
    routes.init_app(app)
    app.register_blueprint(pages.bp)  # the players' HTML pages, outside /api/v1
    commands.init_app(app)
    return app
