"""Every error as ``application/problem+json`` (RFC 9457): built in one place,
:meth:`Problem.response`, whatever raised it.

``type`` is ``about:blank`` for plain HTTP errors (404, 405, 413, 415, 500)
and one of :data:`TYPES` when the API has more to say; validation problems
list the wrong fields in ``errors``; a rejected log carries the ``verdict``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, cast

from flask import Flask, current_app, g, has_request_context, request
from flask.wrappers import Response
from marshmallow import ValidationError
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from werkzeug.exceptions import HTTPException, InternalServerError, RequestEntityTooLarge
from werkzeug.http import HTTP_STATUS_CODES

from api.pages.i18n import localized_verdict
from api.schemas import ProblemSchema
from engine import InvalidCodeError
from verifier import Verdict

log = logging.getLogger(__name__)

TYPE_BASE = "https://solitaire-verifier.example/problems/"
#: the problem types this API defines, with their titles
TYPES = {
    "malformed-json": "Malformed JSON",
    "validation-error": "Invalid request",
    "invalid-code": "Invalid game code",
    "illegal-log": "Illegal move log",
    "claims-mismatch": "Claims do not match the replay",
    "database-unavailable": "Database unavailable",
    "not-ready": "Service not ready",
    "unauthorized": "API key needed",
    "forbidden": "Not allowed",
    "rate-limited": "Too many requests",
    "name-taken": "Name taken",
    "wrong-player": "Submitting for another player",
    "empty-log": "Empty move log",
    "attempt-exists": "Attempt started before",
    "attempt-used": "Attempt already played",
    "challenge-not-running": "Challenge not running",
}
MEDIA_TYPE = "application/problem+json"
_schema = ProblemSchema()


class Problem(Exception):
    """An error answer: ``status``, a ``detail`` sentence, an optional ``kind``
    (a key of :data:`TYPES`) and extension members (``errors``, ``verdict``)."""

    def __init__(self, status: int, detail: str, kind: str | None = None,
                 headers: dict[str, str] | None = None, **extensions: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.kind = kind
        self.headers = headers or {}
        self.extensions = extensions

    def to_json(self) -> dict[str, Any]:
        body = {
            "type": TYPE_BASE + self.kind if self.kind else "about:blank",
            "title": TYPES[self.kind] if self.kind else HTTP_STATUS_CODES.get(self.status, "Error"),
            "status": self.status,
            "detail": self.detail,
            **self.extensions,
        }
        if has_request_context():
            body["instance"] = request.path
            body["request_id"] = g.get("request_id")
        return _schema.dump(body)

    def response(self) -> Response:
        out = cast(Response, current_app.json.response(self.to_json()))
        out.status_code = self.status
        out.mimetype = MEDIA_TYPE
        out.headers.update(self.headers)
        return out


# -- the problems the views raise ----------------------------------------

def field_errors(messages: Any, root: str) -> list[dict[str, str]]:
    """marshmallow's nested messages as ``[{"field": "claimed.score", "message": …}]``;
    errors about the whole body or query are given under ``root``."""

    def walk(node: Any, path: str) -> Iterator[tuple[str, str]]:
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, path if key == "_schema" else f"{path}.{key}" if path else str(key))
        elif isinstance(node, list):
            for item in node:
                yield from walk(item, path)
        else:
            yield path or root, str(node)

    return [{"field": field, "message": message} for field, message in sorted(set(walk(messages, "")))]


def validation_problem(error: ValidationError, root: str) -> Problem:
    errors = field_errors(error.messages, root)
    summary = "; ".join(f"{e['field']}: {e['message'].rstrip('.')}" for e in errors)
    return Problem(422, summary, "validation-error", errors=errors)


def invalid_field(field: str, message: str) -> Problem:
    return Problem(422, f"{field}: {message}", "validation-error", errors=[{"field": field, "message": message}])


def invalid_code(error: InvalidCodeError, field: str) -> Problem:
    entry: dict[str, Any] = {"field": field, "message": error.message, "part": error.part}
    if error.position is not None:
        entry["position"] = error.position
    return Problem(422, f"{field}: {error.message}", "invalid-code", errors=[entry])


def rejected_log(verdict: Verdict) -> Problem:
    """A log that is not stored: illegal, or legal with claims that do not match."""
    if verdict.error is not None:
        e = verdict.error
        body = localized_verdict(verdict)  # the rule sentence in the Accept-Language
        detail = f"action {e.index} {e.action!r} is not allowed: {e.rule}: {body['error']['message']}"
        return Problem(422, detail, "illegal-log", verdict=body)
    wrong = ", ".join(f"{name} claimed {c['claimed']!r}, replay gives {c['actual']!r}"
                      for name, c in (verdict.claims or {}).items() if not c["match"])
    return Problem(422, f"the claims do not match the replay: {wrong}", "claims-mismatch",
                   verdict=verdict.to_json())


# -- error handlers ------------------------------------------------------

def _http_error(error: HTTPException) -> Response | HTTPException:
    if error.code is None or error.code < 400:  # redirects stay what they are
        return error
    if isinstance(error, InternalServerError):  # an error outside the view; Flask has logged it
        return _server_error()
    headers = {}
    allowed = getattr(error, "valid_methods", None)
    if allowed:
        headers["Allow"] = ", ".join(allowed)
    return Problem(error.code, error.description or HTTP_STATUS_CODES.get(error.code, "Error"),
                   headers=headers).response()


#: what SQLAlchemy raises when the database cannot be reached or its connections broke
#: (a connection found broken is replaced, and the request run again: api.platform.db.retrying_lost_connection)
DATABASE_DOWN = (OperationalError, InterfaceError, DisconnectionError, PoolTimeoutError)


def _database_error(error: Exception) -> Response:
    cause = getattr(error, "orig", None) or error
    log.error("database error: %s", cause)
    return Problem(503, f"the database did not answer ({type(cause).__name__}); try again later",
                   "database-unavailable", headers={"Retry-After": "5"}).response()


def _too_large(error: RequestEntityTooLarge) -> Response:
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    detail = f"the request body is larger than {limit} bytes, the most this server accepts" if limit else (
        error.description or "the request body is too large")
    return Problem(413, detail).response()


def _unexpected(error: Exception) -> Response:
    log.error("unhandled error: %s", error, exc_info=error)
    return _server_error()


def _server_error() -> Response:
    return Problem(500, f"an unexpected error occurred; the log has the details under request id "
                        f"{g.get('request_id', '-')}").response()


def init_app(app: Flask) -> None:
    app.register_error_handler(Problem, lambda problem: problem.response())
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(RequestEntityTooLarge, _too_large)
    for kind in DATABASE_DOWN:
        app.register_error_handler(kind, _database_error)
    app.register_error_handler(Exception, _unexpected)
