"""Rate limits (Flask-Limiter), answered 429 as a problem with ``Retry-After``.

Two limits, each a Flask-Limiter string such as ``300 per minute``:

- ``RATELIMIT_PER_CLIENT``: every request of one client IP, all endpoints
  together (the health probes and static files excepted);
- ``RATELIMIT_WRITES``: the writes (``POST /records``, ``POST
  /records/{id}/status``) of one API key, or of one IP when no key is sent.
  The key is identified by the hash of the token it sends, so counting needs
  no database and random tokens only spread the count, they do not escape the
  per-client limit.

The counters live in ``RATELIMIT_STORAGE_URI``: ``memory://`` for one process,
``redis://host:port/db`` shared by every worker and instance. When that storage
fails, the limiter falls back to memory (per process) rather than refusing
requests. Behind a load balancer, set ``TRUSTED_PROXIES`` to the number of
proxies that append to ``X-Forwarded-For`` so that the client IP is the real
one, and only there: on a server that clients also reach directly, a client
chooses its own address by sending the header (past the per-address limits and
the solver's per-client places, and into ``/metrics`` as loopback or a network
of ``METRICS_ALLOW``), so the app warns of it when it is created.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time

from flask import Flask, current_app, request
from flask.wrappers import Response
from flask_limiter import Limit, Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address
from sqlalchemy import select
from werkzeug.middleware.proxy_fix import ProxyFix

from api.platform.auth import MAX_TOKEN_LENGTH, PLAYER_TOKEN_PREFIX, bearer_token, hash_token
from api.platform.db import session
from api.platform.models import ApiKey
from api.platform.problems import Problem

log = logging.getLogger(__name__)
#: said when an app trusts ``X-Forwarded-For`` (``TRUSTED_PROXIES``): what a client that reaches it directly can do
PROXIES_WARNING = (
    "TRUSTED_PROXIES=%d: the client address is taken from X-Forwarded-For. Any client that reaches this server "
    "directly, not through those proxies, chooses its own address by sending the header: it escapes the "
    "per-address rate limits and solver places, and reads /metrics as loopback or a METRICS_ALLOW network. Bind "
    "the server where only the proxies reach it (gunicorn.conf.py: 127.0.0.1:8000 behind nginx), or set "
    "TRUSTED_PROXIES=0")
#: the endpoints whose requests count as writes
WRITE_ENDPOINTS = frozenset({"records.submit_record", "records.set_status", "players.create_player"})
#: never limited: an orchestrator's probes and Prometheus's scrapes must always get through
EXEMPT_ENDPOINTS = frozenset({"health.healthz", "health.readyz", "metrics.metrics"})


def client_key() -> str:
    return "ip:" + (get_remote_address() or "unknown")


def writer_key() -> str:
    """The API key a write is counted against (by its token's hash), else the client IP."""
    token = bearer_token()
    return "key:" + hash_token(token)[:32] if token else client_key()


def search_client() -> str:
    """Whose place a solver search takes (``SOLVER_PENDING_PER_CLIENT``): the API key sent,
    if it is a valid one, else the client IP, so that made-up tokens do not make one
    client many (a player token is never a key: no read). Asked only when a search is about
    to take a place (one indexed read)."""
    token = bearer_token()
    if token is not None and len(token) <= MAX_TOKEN_LENGTH and not token.startswith(PLAYER_TOKEN_PREFIX):
        key = session().scalar(select(ApiKey).where(ApiKey.key_hash == hash_token(token)))
        if key is not None and key.revoked_at is None:
            return f"key:{key.id}"
    return client_key()


def _not_a_write() -> bool:
    return request.endpoint not in WRITE_ENDPOINTS


def get_limiter() -> Limiter:
    return current_app.extensions["api.limiter"]


def _too_many_requests(error: RateLimitExceeded) -> Response:
    retry_after = 1
    breached = get_limiter().current_limit
    if breached is not None:
        with contextlib.suppress(Exception):  # the storage went away between the hit and now: 1 s is a safe guess
            retry_after = max(1, math.ceil(breached.window.reset_time - time.time()))
    return Problem(429, f"too many requests: the limit is {error.description}; try again in {retry_after} s",
                   "rate-limited", headers={"Retry-After": str(retry_after)}).response()


def request_line(environ: dict) -> int:
    """The request line's length in bytes: ``METHOD target HTTP/1.1`` as the client sent it
    (gunicorn's and werkzeug's ``RAW_URI``), else as rebuilt from the path and query."""
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if target is None:
        query = environ.get("QUERY_STRING", "")
        target = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "") + ("?" + query if query else "")
    return len(environ.get("REQUEST_METHOD", "")) + len(target.encode("latin-1", "replace")) + \
        len(environ.get("SERVER_PROTOCOL", "")) + 2


#: the environ's keys of the two header fields WSGI keeps without ``HTTP_`` (and their ``HTTP_`` forms, skipped)
_ENVIRON_HEADERS = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})
_BODY_HEADERS = frozenset({"HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"})


def _check_request_head() -> None:
    """``MAX_REQUEST_LINE``, ``MAX_REQUEST_HEADERS`` and ``MAX_HEADER_BYTES``, answered as problems
    (gunicorn.conf.py gives gunicorn's own, HTML, limits twice as much room)."""
    config = current_app.config
    length = request_line(request.environ)
    if length > config["MAX_REQUEST_LINE"]:
        raise Problem(414, f"the request line is {length} bytes, more than the {config['MAX_REQUEST_LINE']} this "
                           f"server accepts")
    # the header fields as werkzeug's EnvironHeaders lists them, in one pass over the environ
    # and without formatting each name (done for the field refused only)
    count, limit, refused = 0, config["MAX_HEADER_BYTES"], None
    for key, value in request.environ.items():
        if key.startswith("HTTP_"):
            if key in _BODY_HEADERS:
                continue
            size = len(key) - 3 + len(value)  # (name: the key without HTTP_; then ": ")
        elif key in _ENVIRON_HEADERS and value:
            size = len(key) + 2 + len(value)
        else:
            continue
        count += 1
        if size > limit and refused is None:
            refused = key, size
    if count > config["MAX_REQUEST_HEADERS"]:
        raise Problem(431, f"the request has {count} header fields, more than the "
                           f"{config['MAX_REQUEST_HEADERS']} this server accepts")
    if refused is not None:
        name = refused[0].removeprefix("HTTP_").replace("_", "-").title()
        raise Problem(431, f"the header field {name[:64]} is {refused[1]} bytes, more than the {limit} this "
                           "server accepts")


def init_app(app: Flask) -> Limiter:
    """A limiter for this app (its own counters), configured from the app's settings; before it,
    the limits on the request line and headers."""
    app.before_request(_check_request_head)
    config = app.config
    if config["TRUSTED_PROXIES"]:
        hops = config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]
        log.warning(PROXIES_WARNING, hops)
    limiter = Limiter(
        client_key,
        default_limits=[
            # one budget per client across all endpoints (shared: the scope does not include the endpoint)
            Limit(config["RATELIMIT_PER_CLIENT"], key_function=client_key, shared=True, scope="client"),
            Limit(config["RATELIMIT_WRITES"], key_function=writer_key, shared=True, scope="writes",
                  exempt_when=_not_a_write),
        ],
        storage_uri=config["RATELIMIT_STORAGE_URI"],
        key_prefix=config["RATELIMIT_KEY_PREFIX"],
        strategy="fixed-window",
        swallow_errors=True,
        in_memory_fallback_enabled=True,
        headers_enabled=False,
        enabled=config["RATELIMIT_ENABLED"],
    )
    limiter.request_filter(lambda: request.endpoint in EXEMPT_ENDPOINTS)
    limiter.init_app(app)
    app.extensions["api.limiter"] = limiter
    app.register_error_handler(RateLimitExceeded, _too_many_requests)
    return limiter
