"""``GET /healthz`` (the process answers) and ``GET /readyz`` (the database
answers and its schema is at the migrations' head)."""

from __future__ import annotations

import logging

from flask import Blueprint, current_app
from sqlalchemy.exc import SQLAlchemyError

import engine
from api.platform.db import PingTimeout, get_db
from api.platform.problems import Problem
from api.schemas import HealthSchema

bp = Blueprint("health", __name__)
log = logging.getLogger(__name__)
HEALTH = HealthSchema()  # schemas hold no per-request state: build them once (a build is 8 times a dump)


@bp.get("/healthz")
def healthz() -> dict:
    return HEALTH.dump({"status": "ok", "engine": engine.BUILD})


@bp.get("/readyz")
def readyz() -> dict:
    database = get_db()
    try:
        # on a thread of its own with a short deadline: a database that went silent is not ready
        current = database.current_within(current_app.config["READYZ_TIMEOUT"])
    except (SQLAlchemyError, PingTimeout) as error:
        log.warning("not ready: database unreachable: %s", error)
        cause = getattr(error, "orig", None) or error
        detail = str(cause) if isinstance(cause, PingTimeout) else type(cause).__name__
        raise Problem(503, f"the database did not answer ({detail})", "not-ready",
                      headers={"Retry-After": "5"}) from None
    if current != database.heads:
        shown = ", ".join(sorted(current)) or "empty"
        raise Problem(503, f"the database schema is at {shown}, this version needs {', '.join(sorted(database.heads))}:"
                           " run `flask --app api db upgrade`", "not-ready", headers={"Retry-After": "5"})
    return HEALTH.dump({"status": "ok", "database": "ok", "schema": ", ".join(sorted(current))})
