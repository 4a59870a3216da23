"""JSON logging: one object per line on stderr, with the request's id, method,
path, status and duration when there is a request.

Every request gets an id: the client's ``X-Request-ID`` when it is a short
token (1 to 64 of ``A-Z a-z 0-9 . _ : -``), else a new one; it is echoed in the
response header and in problem bodies, so a report can be matched with its log
lines. Every response also says ``X-Content-Type-Options: nosniff``: browsers
take a JSON answer for JSON, never for a page or a script.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from celery import current_task
from flask import Flask, g, has_request_context, request
from flask.wrappers import Response

REQUEST_ID_HEADER = "X-Request-ID"
#: a client's request id is kept only when it is a short token (it goes into every log line)
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}\Z", re.ASCII)
#: loggers whose records go to the JSON handler, and their least level (alembic: the
#: migration context logs each check at INFO; ``api.platform.db`` reports upgrades itself;
#: flask-limiter: each refused request at INFO, its storage failing at WARNING and above)
LOGGERS = {"api": None, "alembic": "WARNING", "flask-limiter": "WARNING"}


#: every field a line may have, in this order, for the web app and the worker alike; a line has
#: those it knows: a request's on the web, a task's on the worker (and in the embedded mode, both)
FIELDS = ("time", "level", "logger", "message", "request_id", "method", "path", "status", "duration_ms",
          "task_id", "task_name", "exception")


class JsonFormatter(logging.Formatter):
    """One JSON object a line, with the fields of :data:`FIELDS` that are known."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if has_request_context():
            out["request_id"] = g.get("request_id")
            out["method"] = request.method
            out["path"] = request.path
        for key in ("status", "duration_ms"):
            if hasattr(record, key):
                out[key] = getattr(record, key)
        task = getattr(current_task, "request", None)  # (the proxy has no attributes outside a task)
        if task is not None and task.id is not None:
            out["task_id"] = task.id
            out["task_name"] = task.task
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)  # ASCII: whatever a client sent, the line can be written


class StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (so test capture sees it too)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def configure(level: str, celery_level: str | None = None) -> None:
    """Send the app's loggers to one JSON handler on stderr (idempotent); with ``celery_level``
    (a worker, :func:`api.tasks._json_logs`), Celery's own loggers too, at that level."""
    levels = {name: max(logging.getLevelName(level), logging.getLevelName(floor or level))
              for name, floor in LOGGERS.items()}
    if celery_level:
        levels["celery"] = logging.getLevelName(celery_level)
    for name, least in levels.items():
        logger = logging.getLogger(name)
        if not any(isinstance(h, StderrHandler) for h in logger.handlers):
            handler = StderrHandler()
            handler.setFormatter(JsonFormatter())
            logger.addHandler(handler)
        logger.setLevel(least)
        logger.propagate = False


def _start_request() -> None:
    given = request.headers.get(REQUEST_ID_HEADER, "")
    g.request_id = given if _SANE_ID.match(given) else uuid.uuid4().hex
    g.request_started = time.perf_counter()


def _finish_request(response: Response) -> Response:
    response.headers[REQUEST_ID_HEADER] = g.get("request_id", "")
    response.headers["X-Content-Type-Options"] = "nosniff"
    started = g.get("request_started")
    duration = round((time.perf_counter() - started) * 1000, 3) if started is not None else None
    logging.getLogger("api.access").info("%s %s %s", request.method, request.path, response.status_code,
                                         extra={"status": response.status_code, "duration_ms": duration})
    return response


def init_app(app: Flask) -> None:
    configure(app.config["LOG_LEVEL"])
    app.before_request(_start_request)
    app.after_request(_finish_request)
