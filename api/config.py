"""Settings from the environment, read once when the app is created.

=========================  ==============================================  ===============================
variable                   meaning                                         default
=========================  ==============================================  ===============================
``DATABASE_URL``           SQLAlchemy URL; ``postgres://`` and             SQLite file
                           ``postgresql://`` use psycopg 3                 ``instance/records.sqlite3``
``AUTO_MIGRATE``           upgrade the schema to head on start             ``1``
``MAX_CONTENT_LENGTH``     largest request body, in bytes (else 413)       ``1048576`` (1 MiB)
``MAX_LOG_ACTIONS``        most actions in one move log (else 422)         ``5000``
``MAX_PLAYER_LENGTH``      longest player name, after trimming (≤ 64)      ``32``
``MAX_PAGE_SIZE``          largest ``page_size`` and leaderboard ``limit``  ``100``
``API_KEYS_REQUIRED``      ``POST /records`` needs an API key              on, except in debug mode
``RATELIMIT_ENABLED``      rate limits on or off                           ``1``
``RATELIMIT_STORAGE_URI``  where the counters live: ``memory://`` (one     ``memory://``
                           process) or ``redis://host:port/db`` (shared)
``RATELIMIT_PER_CLIENT``   requests per client IP, all endpoints           ``300 per minute``
``RATELIMIT_WRITES``       writes per API key (per IP without a key)       ``60 per minute``
``RATELIMIT_KEY_PREFIX``   prefix of the counters' keys in the storage     ``solitaire-verifier``
``TRUSTED_PROXIES``        proxies in front that set ``X-Forwarded-For``   ``0``
``LOG_LEVEL``              level of the JSON log on stderr                 ``INFO``
``SOLVER_ENABLED``         run searches (off: stored answers only)         ``1``
``SOLVER_BUDGET_SECONDS``  time budget of a deal's search                  ``10``
``SOLVER_BUDGET_NODES``    node budget of a deal's search (empty: none)    none
``SOLVER_QUEUE_SIZE``      searches waiting or running, all clients and    ``64``
                           web processes together (more: 503)
``SOLVER_STALE_SECONDS``   a pending search older than this is started     ``300``
                           again (it was lost in a crash or restart)
``SOLVER_HINT_SECONDS``    time budget of a hint's search                  ``2``
``SOLVER_HINT_NODES``      node budget of a hint's search (empty: none)    none
``RATELIMIT_SOLVER``       searches started per client IP (hints, new      ``30 per minute``
                           deals), on top of ``RATELIMIT_PER_CLIENT``
``DATABASE_CONNECT_TIMEOUT``  PostgreSQL: seconds to open a connection       ``3``
                           (whole seconds, at least 2)
``DATABASE_STATEMENT_TIMEOUT``  PostgreSQL: the server cancels a statement     ``5``
                           after this; the client gives up on any answer
                           one second later (a partition: 503)
``DATABASE_POOL_TIMEOUT``  seconds a request waits for a pooled            ``3``
                           connection when all are in use (then 503)
``READYZ_TIMEOUT``         seconds ``/readyz`` waits for the database      ``2``
                           before answering 503
``FRAMES_CACHE_BYTES``     memory for records' frames, gzipped, per        ``33554432`` (32 MiB)
                           process (``0``: no cache)
``FRAMES_MAX_ACTIONS``     most actions of a log posted to                 ``1000``
                           ``/frames.json`` (else 422)
``CELERY_BROKER_URL``      the worker tier's broker (``redis://…`` or      none: searches run in the
                           ``amqp://…``); unset: embedded, one user only   request (embedded)
``CELERY_RESULT_BACKEND``  where bulk tasks' results wait for the          the broker (Redis), ``rpc://``
                           command that sent them                          (RabbitMQ)
``CELERY_QUEUE_PREFIX``    prefix of the queues' names (and Redis keys)    ``solitaire-verifier``
``CELERY_VISIBILITY_TIMEOUT``  a task taken by a worker that died is       ``600``
                           given to another after this many seconds
``SOLVER_PENDING_PER_CLIENT``  searches waiting or running per client      ``2``
                           (API key, else IP; more: 429)
``SOLVER_UNKNOWN_SECONDS`` an ``unknown`` answer is kept this long, then   ``86400``
                           searched again on request
``SOLVER_HINT_KEEP_SECONDS``   a hint's answer is kept this long           ``3600``
``SOLVER_WORKER_MAX_MEMORY_MB``  a worker process is replaced after a      ``1500``
                           task that left it larger than this
``CHALLENGE_NODES``        positions a challenge candidate's search may    ``100000``
                           examine (part of which deal is picked)
``CHALLENGE_CANDIDATES``   candidates tried per challenge window           ``16``
``WINNABLE_POOL_SIZE``     deals proved winnable kept per variant for      ``200``
                           ``GET /deals/random?winnable=true``
=========================  ==============================================  ===============================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
#: the ``player`` column's width: no setting may allow longer names
PLAYER_COLUMN_LENGTH = 64
#: the largest page any setting may allow
PAGE_SIZE_CEILING = 1000


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the variable."""


def normalize_database_url(url: str) -> str:
    """Make PostgreSQL URLs use the psycopg 3 driver; leave every other URL alone.

    >>> normalize_database_url("postgres://u@db:5432/app")
    'postgresql+psycopg://u@db:5432/app'
    >>> normalize_database_url("postgresql://u@db/app")
    'postgresql+psycopg://u@db/app'
    >>> normalize_database_url("sqlite:////tmp/x.sqlite3")
    'sqlite:////tmp/x.sqlite3'
    """
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def parse_bool(name: str, value: Any) -> bool:
    """``1/true/yes/on`` or ``0/false/no/off`` (any case); booleans pass through."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{name}={value!r}: expected 1, true, yes, on or 0, false, no, off")


def parse_optional_bool(name: str, value: Any) -> bool | None:
    """:func:`parse_bool`, or ``None`` (decide later) for ``None``, empty or ``auto``."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return None
    return parse_bool(name, value)


def parse_positive_int(name: str, value: Any, most: int | None = None) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or isinstance(value, bool) or (most is not None and number > most):
        upper = "" if most is None else f" and at most {most}"
        raise ConfigError(f"{name}={value!r}: expected a whole number of at least 1{upper}")
    return number


def parse_seconds(name: str, value: Any) -> float:
    """A positive, finite number of seconds (``2``, ``0.5``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = 0.0
    if isinstance(value, bool) or not 0 < number < float("inf"):
        raise ConfigError(f"{name}={value!r}: expected a positive number of seconds")
    return number


def parse_optional_positive_int(name: str, value: Any) -> int | None:
    """:func:`parse_positive_int`, or ``None`` (no limit) for ``None``, empty or ``none``."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    return parse_positive_int(name, value)


def parse_rate_limit(name: str, value: Any) -> str:
    """A Flask-Limiter rate limit such as ``60 per minute`` or ``10/second;500/hour``."""
    from limits import parse_many

    text = str(value).strip()
    try:
        if not parse_many(text):
            raise ValueError(text)
    except ValueError:
        raise ConfigError(f"{name}={value!r}: expected a rate limit such as '60 per minute' or "
                          f"'10/second;500/hour'") from None
    return text


def parse_storage_uri(name: str, value: Any) -> str:
    """A storage URI the ``limits`` package knows (``memory://``, ``redis://…``, ``redis+sentinel://…`` …)."""
    from limits.storage import SCHEMES

    text = str(value).strip()
    scheme = text.split("://", 1)[0] if "://" in text else ""
    if scheme not in SCHEMES or scheme.startswith("async+"):
        raise ConfigError(f"{name}={value!r}: expected memory:// or redis://host:port/db "
                          f"(known schemes: {', '.join(sorted(s for s in SCHEMES if not s.startswith('async+')))})")
    return text


#: the broker schemes Celery is used with here: Redis, and RabbitMQ (AMQP)
BROKER_SCHEMES = ("redis", "rediss", "amqp", "amqps", "pyamqp")


def parse_broker_url(name: str, value: Any) -> str | None:
    """A Celery broker URL (``redis://host:6379/0``, ``amqp://user:pw@host:5672//``), or
    ``None`` (no broker: the embedded mode) for ``None`` or empty."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    scheme = text.split("://", 1)[0] if "://" in text else ""
    if scheme not in BROKER_SCHEMES:
        raise ConfigError(f"{name}={value!r}: expected redis://host:port/db or amqp://user:password@host:port/vhost")
    return text


def time_limits(budget_seconds: float) -> tuple[float, float]:
    """A search's soft and hard time limits on a worker: its budget, then room for the
    replay that verifies a solution and for storing the answer."""
    soft = budget_seconds * 1.25 + 2
    return soft, soft + 3


def load_settings(instance_path: str, overrides: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The app's settings: the environment, then ``overrides`` (``create_app(config)``), checked."""
    env = os.environ if environ is None else environ
    default_db = "sqlite:///" + str(Path(instance_path) / "records.sqlite3")
    raw: dict[str, Any] = {
        "DATABASE_URL": env.get("DATABASE_URL") or default_db,
        "AUTO_MIGRATE": env.get("AUTO_MIGRATE", "1"),
        "MAX_CONTENT_LENGTH": env.get("MAX_CONTENT_LENGTH", 1024 * 1024),
        "MAX_LOG_ACTIONS": env.get("MAX_LOG_ACTIONS", 5000),
        "MAX_PLAYER_LENGTH": env.get("MAX_PLAYER_LENGTH", 32),
        "MAX_PAGE_SIZE": env.get("MAX_PAGE_SIZE", 100),
        "API_KEYS_REQUIRED": env.get("API_KEYS_REQUIRED"),
        "RATELIMIT_ENABLED": env.get("RATELIMIT_ENABLED", "1"),
        "RATELIMIT_STORAGE_URI": env.get("RATELIMIT_STORAGE_URI") or "memory://",
        "RATELIMIT_PER_CLIENT": env.get("RATELIMIT_PER_CLIENT") or "300 per minute",
        "RATELIMIT_WRITES": env.get("RATELIMIT_WRITES") or "60 per minute",
        "RATELIMIT_KEY_PREFIX": env.get("RATELIMIT_KEY_PREFIX", "solitaire-verifier"),
        "TRUSTED_PROXIES": env.get("TRUSTED_PROXIES", "0"),
        "LOG_LEVEL": env.get("LOG_LEVEL", "INFO"),
        "SOLVER_ENABLED": env.get("SOLVER_ENABLED", "1"),
        "SOLVER_BUDGET_SECONDS": env.get("SOLVER_BUDGET_SECONDS", "10"),
        "SOLVER_BUDGET_NODES": env.get("SOLVER_BUDGET_NODES"),
        "SOLVER_QUEUE_SIZE": env.get("SOLVER_QUEUE_SIZE", "64"),
        "SOLVER_STALE_SECONDS": env.get("SOLVER_STALE_SECONDS", "300"),
        "SOLVER_HINT_SECONDS": env.get("SOLVER_HINT_SECONDS", "2"),
        "SOLVER_HINT_NODES": env.get("SOLVER_HINT_NODES"),
        "RATELIMIT_SOLVER": env.get("RATELIMIT_SOLVER") or "30 per minute",
        "DATABASE_CONNECT_TIMEOUT": env.get("DATABASE_CONNECT_TIMEOUT", "3"),
        "DATABASE_STATEMENT_TIMEOUT": env.get("DATABASE_STATEMENT_TIMEOUT", "5"),
        "DATABASE_POOL_TIMEOUT": env.get("DATABASE_POOL_TIMEOUT", "3"),
        "READYZ_TIMEOUT": env.get("READYZ_TIMEOUT", "2"),
        "FRAMES_CACHE_BYTES": env.get("FRAMES_CACHE_BYTES", str(32 * 1024 * 1024)),
        "FRAMES_MAX_ACTIONS": env.get("FRAMES_MAX_ACTIONS", "1000"),
        "CELERY_BROKER_URL": env.get("CELERY_BROKER_URL"),
        "CELERY_RESULT_BACKEND": env.get("CELERY_RESULT_BACKEND"),
        "CELERY_QUEUE_PREFIX": env.get("CELERY_QUEUE_PREFIX", "solitaire-verifier"),
        "CELERY_VISIBILITY_TIMEOUT": env.get("CELERY_VISIBILITY_TIMEOUT", "600"),
        "SOLVER_PENDING_PER_CLIENT": env.get("SOLVER_PENDING_PER_CLIENT", "2"),
        "SOLVER_UNKNOWN_SECONDS": env.get("SOLVER_UNKNOWN_SECONDS", "86400"),
        "SOLVER_HINT_KEEP_SECONDS": env.get("SOLVER_HINT_KEEP_SECONDS", "3600"),
        "SOLVER_WORKER_MAX_MEMORY_MB": env.get("SOLVER_WORKER_MAX_MEMORY_MB", "1500"),
        "CHALLENGE_NODES": env.get("CHALLENGE_NODES", "100000"),
        "CHALLENGE_CANDIDATES": env.get("CHALLENGE_CANDIDATES", "16"),
        "WINNABLE_POOL_SIZE": env.get("WINNABLE_POOL_SIZE", "200"),
    }
    raw.update(overrides or {})
    level = str(raw["LOG_LEVEL"]).strip().upper()
    if level not in _LEVELS:
        raise ConfigError(f"LOG_LEVEL={raw['LOG_LEVEL']!r}: expected one of {', '.join(sorted(_LEVELS))}")
    proxies = raw["TRUSTED_PROXIES"]
    proxies = 0 if str(proxies).strip() in ("", "0") else parse_positive_int("TRUSTED_PROXIES", proxies, most=10)
    budget = parse_seconds("SOLVER_BUDGET_SECONDS", raw["SOLVER_BUDGET_SECONDS"])
    stale = parse_seconds("SOLVER_STALE_SECONDS", raw["SOLVER_STALE_SECONDS"])
    if stale <= budget:
        raise ConfigError(f"SOLVER_STALE_SECONDS={raw['SOLVER_STALE_SECONDS']!r}: must be longer than "
                          f"SOLVER_BUDGET_SECONDS ({budget:g}), or running searches would be started again")
    broker = parse_broker_url("CELERY_BROKER_URL", raw["CELERY_BROKER_URL"])
    backend = raw["CELERY_RESULT_BACKEND"]
    backend = str(backend).strip() if backend and str(backend).strip() else None
    if backend is None and broker is not None:
        backend = broker if broker.startswith(("redis://", "rediss://")) else "rpc://"
    visibility = parse_seconds("CELERY_VISIBILITY_TIMEOUT", raw["CELERY_VISIBILITY_TIMEOUT"])
    hard_limit = time_limits(budget)[1]
    if visibility <= hard_limit:
        raise ConfigError(f"CELERY_VISIBILITY_TIMEOUT={raw['CELERY_VISIBILITY_TIMEOUT']!r}: must be longer than a "
                          f"search's hard time limit ({hard_limit:g} s for SOLVER_BUDGET_SECONDS={budget:g}), or "
                          f"running searches would be handed to a second worker")
    prefix = str(raw["CELERY_QUEUE_PREFIX"]).strip()
    if not prefix or not all(c.isalnum() or c in "-_." for c in prefix):
        raise ConfigError(f"CELERY_QUEUE_PREFIX={raw['CELERY_QUEUE_PREFIX']!r}: expected letters, digits, '-', '_' "
                          f"or '.'")
    return {
        **raw,
        "DATABASE_URL": normalize_database_url(str(raw["DATABASE_URL"]).strip()),
        "AUTO_MIGRATE": parse_bool("AUTO_MIGRATE", raw["AUTO_MIGRATE"]),
        "MAX_CONTENT_LENGTH": parse_positive_int("MAX_CONTENT_LENGTH", raw["MAX_CONTENT_LENGTH"]),
        "MAX_LOG_ACTIONS": parse_positive_int("MAX_LOG_ACTIONS", raw["MAX_LOG_ACTIONS"]),
        "MAX_PLAYER_LENGTH": parse_positive_int("MAX_PLAYER_LENGTH", raw["MAX_PLAYER_LENGTH"],
                                                most=PLAYER_COLUMN_LENGTH),
        "MAX_PAGE_SIZE": parse_positive_int("MAX_PAGE_SIZE", raw["MAX_PAGE_SIZE"], most=PAGE_SIZE_CEILING),
        "API_KEYS_REQUIRED": parse_optional_bool("API_KEYS_REQUIRED", raw["API_KEYS_REQUIRED"]),
        "RATELIMIT_ENABLED": parse_bool("RATELIMIT_ENABLED", raw["RATELIMIT_ENABLED"]),
        "RATELIMIT_STORAGE_URI": parse_storage_uri("RATELIMIT_STORAGE_URI", raw["RATELIMIT_STORAGE_URI"]),
        "RATELIMIT_PER_CLIENT": parse_rate_limit("RATELIMIT_PER_CLIENT", raw["RATELIMIT_PER_CLIENT"]),
        "RATELIMIT_WRITES": parse_rate_limit("RATELIMIT_WRITES", raw["RATELIMIT_WRITES"]),
        "RATELIMIT_KEY_PREFIX": str(raw["RATELIMIT_KEY_PREFIX"]).strip(),
        "TRUSTED_PROXIES": proxies,
        "LOG_LEVEL": level,
        "SOLVER_ENABLED": parse_bool("SOLVER_ENABLED", raw["SOLVER_ENABLED"]),
        "SOLVER_BUDGET_SECONDS": budget,
        "SOLVER_BUDGET_NODES": parse_optional_positive_int("SOLVER_BUDGET_NODES", raw["SOLVER_BUDGET_NODES"]),
        "SOLVER_QUEUE_SIZE": parse_positive_int("SOLVER_QUEUE_SIZE", raw["SOLVER_QUEUE_SIZE"]),
        "SOLVER_STALE_SECONDS": stale,
        "SOLVER_HINT_SECONDS": parse_seconds("SOLVER_HINT_SECONDS", raw["SOLVER_HINT_SECONDS"]),
        "SOLVER_HINT_NODES": parse_optional_positive_int("SOLVER_HINT_NODES", raw["SOLVER_HINT_NODES"]),
        "RATELIMIT_SOLVER": parse_rate_limit("RATELIMIT_SOLVER", raw["RATELIMIT_SOLVER"]),
        "DATABASE_CONNECT_TIMEOUT": parse_positive_int("DATABASE_CONNECT_TIMEOUT", raw["DATABASE_CONNECT_TIMEOUT"],
                                                       most=3600),
        "DATABASE_STATEMENT_TIMEOUT": parse_seconds("DATABASE_STATEMENT_TIMEOUT", raw["DATABASE_STATEMENT_TIMEOUT"]),
        "DATABASE_POOL_TIMEOUT": parse_seconds("DATABASE_POOL_TIMEOUT", raw["DATABASE_POOL_TIMEOUT"]),
        "READYZ_TIMEOUT": parse_seconds("READYZ_TIMEOUT", raw["READYZ_TIMEOUT"]),
        "FRAMES_CACHE_BYTES": 0 if str(raw["FRAMES_CACHE_BYTES"]).strip() == "0" else
        parse_positive_int("FRAMES_CACHE_BYTES", raw["FRAMES_CACHE_BYTES"]),
        "FRAMES_MAX_ACTIONS": parse_positive_int("FRAMES_MAX_ACTIONS", raw["FRAMES_MAX_ACTIONS"], most=5000),
        "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": backend,
        "CELERY_QUEUE_PREFIX": prefix,
        "CELERY_VISIBILITY_TIMEOUT": visibility,
        "SOLVER_PENDING_PER_CLIENT": parse_positive_int("SOLVER_PENDING_PER_CLIENT", raw["SOLVER_PENDING_PER_CLIENT"]),
        "SOLVER_UNKNOWN_SECONDS": parse_seconds("SOLVER_UNKNOWN_SECONDS", raw["SOLVER_UNKNOWN_SECONDS"]),
        "SOLVER_HINT_KEEP_SECONDS": parse_seconds("SOLVER_HINT_KEEP_SECONDS", raw["SOLVER_HINT_KEEP_SECONDS"]),
        "SOLVER_WORKER_MAX_MEMORY_MB": parse_positive_int("SOLVER_WORKER_MAX_MEMORY_MB",
                                                          raw["SOLVER_WORKER_MAX_MEMORY_MB"]),
        "CHALLENGE_NODES": parse_positive_int("CHALLENGE_NODES", raw["CHALLENGE_NODES"]),
        "CHALLENGE_CANDIDATES": parse_positive_int("CHALLENGE_CANDIDATES", raw["CHALLENGE_CANDIDATES"]),
        "WINNABLE_POOL_SIZE": parse_positive_int("WINNABLE_POOL_SIZE", raw["WINNABLE_POOL_SIZE"]),
    }
