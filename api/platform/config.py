"""Settings from the environment, read once when the app is created.

Each setting is declared once, in :data:`SETTINGS`: its name, default, parse rule and
meaning. :func:`load_settings` parses from it, and the table below and the README's
(``python -m tools.settings_table``) are made from it.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from limits import parse_many
from limits.storage import SCHEMES

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
#: the ``player`` column's width: no setting may allow longer names
PLAYER_COLUMN_LENGTH = 64
#: the largest page any setting may allow
PAGE_SIZE_CEILING = 1000
#: the longest a webhook attempt may be given (the delivery task's time limits are set from it)
WEBHOOK_DEADLINE_CEILING = 60.0


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


def parse_seconds(name: str, value: Any, most: float | None = None) -> float:
    """A positive, finite number of seconds (``2``, ``0.5``), at most ``most`` if given."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = 0.0
    if isinstance(value, bool) or not 0 < number < float("inf") or (most is not None and number > most):
        upper = "" if most is None else f" of at most {most:g}"
        raise ConfigError(f"{name}={value!r}: expected a positive number of seconds{upper}")
    return number


def parse_optional_positive_int(name: str, value: Any) -> int | None:
    """:func:`parse_positive_int`, or ``None`` (no limit) for ``None``, empty or ``none``."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    return parse_positive_int(name, value)


def parse_rate_limit(name: str, value: Any) -> str:
    """A Flask-Limiter rate limit such as ``60 per minute`` or ``10/second;500/hour``."""
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


def parse_log_level(name: str, value: Any) -> str:
    level = str(value).strip().upper()
    if level not in _LEVELS:
        raise ConfigError(f"{name}={value!r}: expected one of {', '.join(sorted(_LEVELS))}")
    return level


#: where a new record is judged (``FAIRPLAY_JUDGE``)
JUDGE_PLACES = ("submission", "worker")


def parse_judge_place(name: str, value: Any) -> str:
    place = str(value).strip().lower()
    if place not in JUDGE_PLACES:
        raise ConfigError(f"{name}={value!r}: expected one of {', '.join(JUDGE_PLACES)}")
    return place


def parse_proxies(name: str, value: Any) -> int:
    """How many proxies set ``X-Forwarded-For``: ``0`` (or empty) to 10."""
    return 0 if str(value).strip() in ("", "0") else parse_positive_int(name, value, most=10)


def parse_count(name: str, value: Any) -> int:
    """A whole number, ``0`` or more (a cache size in bytes, ``0`` for none; connections beyond a pool)."""
    return 0 if str(value).strip() == "0" else parse_positive_int(name, value)



def parse_database_url(name: str, value: Any) -> str:
    return normalize_database_url(str(value).strip())


def parse_text(name: str, value: Any) -> str:
    return str(value).strip()


def parse_optional_text(name: str, value: Any) -> str | None:
    """Text, or ``None`` for ``None`` or empty (``CELERY_RESULT_BACKEND``: then made from the broker)."""
    return str(value).strip() if value and str(value).strip() else None


def parse_queue_prefix(name: str, value: Any) -> str:
    prefix = str(value).strip()
    if not prefix or not all(c.isalnum() or c in "-_." for c in prefix):
        raise ConfigError(f"{name}={value!r}: expected letters, digits, '-', '_' or '.'")
    return prefix


def parse_networks(name: str, value: Any) -> tuple[str, ...]:
    """Addresses and networks, separated by commas or spaces (``10.0.0.5, 10.1.0.0/16``); empty: none."""
    items = value if isinstance(value, list | tuple) else str(value or "").replace(",", " ").split()
    try:
        return tuple(str(ipaddress.ip_network(str(item).strip(), strict=False)) for item in items)
    except ValueError as error:
        raise ConfigError(f"{name}={value!r}: expected addresses or networks such as 10.0.0.5, 10.1.0.0/16 "
                          f"({error})") from None


def parse_optional_port(name: str, value: Any) -> int | None:
    """A TCP port, or ``None`` (off) for ``None`` or empty."""
    if value is None or not str(value).strip():
        return None
    return parse_positive_int(name, value, most=65535)


#: the shortest ``CHALLENGE_KEY`` taken (characters): a key an attacker cannot try them all of
CHALLENGE_KEY_MIN = 32


def parse_challenge_key(name: str, value: Any) -> str | None:
    """A secret of at least :data:`CHALLENGE_KEY_MIN` characters, or ``None`` (the database's own) for empty."""
    text = parse_optional_text(name, value)
    if text is not None and len(text) < CHALLENGE_KEY_MIN:
        raise ConfigError(f"{name}: expected a secret of at least {CHALLENGE_KEY_MIN} characters (it has "
                          f"{len(text)}), such as the output of `python -c 'import secrets; "
                          f"print(secrets.token_urlsafe(32))'`")
    return text


def _instance_database(instance_path: str) -> str:
    return "sqlite:///" + str(Path(instance_path) / "records.sqlite3")


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``default`` is used when it is unset (also when empty, with
    ``blank_is_default``; a callable default is given the instance path); ``parse(name, value)``
    checks and converts it; ``meaning`` and ``default_text`` (Markdown; without it, the default
    in backticks) are its documentation."""

    name: str
    default: Any
    parse: Callable[[str, Any], Any]
    meaning: str
    default_text: str | None = None
    blank_is_default: bool = False

    @property
    def shown_default(self) -> str:
        return self.default_text if self.default_text is not None else f"`{self.default}`"


_MB = 1024 * 1024
#: every setting, in the order the docs list them (new ones go at the end)
SETTINGS: tuple[Setting, ...] = (
    Setting("DATABASE_URL", _instance_database, parse_database_url,
            "SQLAlchemy URL of the records database; `postgres://…` and `postgresql://…` use psycopg 3",
            "SQLite file `instance/records.sqlite3`", blank_is_default=True),
    Setting("AUTO_MIGRATE", "1", parse_bool,
            "upgrade the schema to the latest migration on start (`1`/`0`, `true`/`false`)"),
    Setting("MAX_CONTENT_LENGTH", _MB, parse_positive_int,
            "largest request body in bytes (larger: 413)", "`1048576` (1 MiB)"),
    Setting("MAX_LOG_ACTIONS", 5000, parse_positive_int, "most actions in one move log (more: 422)", "`5000`"),
    Setting("MAX_PLAYER_LENGTH", 32, partial(parse_positive_int, most=PLAYER_COLUMN_LENGTH),
            f"longest player name, after trimming white space (at most {PLAYER_COLUMN_LENGTH})", "`32`"),
    Setting("MAX_PAGE_SIZE", 100, partial(parse_positive_int, most=PAGE_SIZE_CEILING),
            f"largest `page_size` of the record list and `limit` of the leaderboard (at most {PAGE_SIZE_CEILING})",
            "`100`"),
    Setting("API_KEYS_REQUIRED", None, parse_optional_bool,
            "`POST /records` needs an API key (`1`/`0`; unset: yes, except in debug mode)", "unset"),
    Setting("RATELIMIT_ENABLED", "1", parse_bool, "rate limits on or off"),
    Setting("RATELIMIT_STORAGE_URI", "memory://", parse_storage_uri,
            "where the counters live: `memory://` (one process) or `redis://host:6379/0` (shared by every worker "
            "and instance)", blank_is_default=True),
    Setting("RATELIMIT_PER_CLIENT", "300 per minute", parse_rate_limit,
            "requests per client IP, all endpoints and pages together (health probes and static files exempt)",
            blank_is_default=True),
    Setting("RATELIMIT_WRITES", "60 per minute", parse_rate_limit,
            "record submissions and status changes per API key (per IP without a key)", blank_is_default=True),
    Setting("RATELIMIT_KEY_PREFIX", "solitaire-verifier", parse_text,
            "prefix of the counters in a shared storage"),
    Setting("TRUSTED_PROXIES", "0", parse_proxies,
            "how many proxies in front set `X-Forwarded-For` (for the client IP; at most 10). Only for a server "
            "that clients cannot reach but through those proxies: a client that reaches it directly chooses its "
            "address by sending the header, past the per-address limits and `METRICS_ALLOW`"),
    Setting("LOG_LEVEL", "INFO", parse_log_level, "level of the JSON log on stderr (`DEBUG` … `CRITICAL`)"),
    Setting("SOLVER_ENABLED", "1", parse_bool, "run solver searches (off: stored answers only, others 503)"),
    Setting("SOLVER_BUDGET_SECONDS", "10", parse_seconds, "time budget of a deal's search"),
    Setting("SOLVER_BUDGET_NODES", None, parse_optional_positive_int,
            "node budget of a deal's search (empty: none)", "none"),
    Setting("SOLVER_QUEUE_SIZE", "64", parse_positive_int,
            "searches waiting or running, all clients and web processes together (more: 503)"),
    Setting("SOLVER_STALE_SECONDS", "300", parse_seconds,
            "a search still pending after this is started again (it was lost in a crash or restart); longer than "
            "`SOLVER_BUDGET_SECONDS`"),
    Setting("SOLVER_HINT_SECONDS", "2", parse_seconds, "time budget of a hint's search"),
    Setting("SOLVER_HINT_NODES", None, parse_optional_positive_int,
            "node budget of a hint's search (empty: none)", "none"),
    Setting("RATELIMIT_SOLVER", "30 per minute", parse_rate_limit,
            "searches started per client IP (hints, and deals with no stored answer yet), on top of "
            "`RATELIMIT_PER_CLIENT`", blank_is_default=True),
    Setting("DATABASE_CONNECT_TIMEOUT", "3", partial(parse_positive_int, most=3600),
            "PostgreSQL: seconds to open a connection (whole seconds, at least 2)"),
    Setting("DATABASE_STATEMENT_TIMEOUT", "5", parse_seconds,
            "PostgreSQL: seconds a statement may run (the server cancels it); the client gives up on any answer one "
            "second later, so a database that stops answering is `503`, not a hang"),
    Setting("DATABASE_POOL_TIMEOUT", "3", parse_seconds,
            "seconds a request waits for a pooled connection when all are in use (then `503`)"),
    Setting("READYZ_TIMEOUT", "2", parse_seconds,
            "seconds `/api/v1/readyz` waits for the database before answering `503`"),
    Setting("FRAMES_CACHE_BYTES", str(32 * _MB), parse_count,
            "memory per process for the pages' cache: windows of records' frames (gzipped), rendered "
            "viewers and share images (`0`: no cache)",
            "`33554432` (32 MiB)"),
    Setting("FRAMES_MAX_ACTIONS", "5000", partial(parse_positive_int, most=5000),
            "most actions of a log posted to `/frames.json` (more: 422)"),
    Setting("CELERY_BROKER_URL", None, parse_broker_url,
            "the worker tier's broker, `redis://host:6379/db` or `amqp://user:password@host:5672//`; unset: the "
            "embedded mode (searches run inside the request: one user only)", "unset"),
    Setting("CELERY_RESULT_BACKEND", None, parse_optional_text,
            "where re-verification ranges leave their results", "the broker (Redis), `rpc://` (RabbitMQ)"),
    Setting("CELERY_QUEUE_PREFIX", "solitaire-verifier", parse_queue_prefix,
            "prefix of the queue names (`<prefix>.challenges`, `.keys`, `.hints`, `.searches`, `.bulk`) and of "
            "Celery's Redis keys"),
    Setting("CELERY_VISIBILITY_TIMEOUT", "600", parse_seconds,
            "seconds after which a task of a worker that died goes to another worker (Redis); longer than a "
            "search's hard time limit"),
    Setting("SOLVER_PENDING_PER_CLIENT", "2", parse_positive_int,
            "searches one client (API key, else IP) may have waiting or running (more: 429)"),
    Setting("SOLVER_TASK_PLACES", "2", parse_count,
            "places of `SOLVER_QUEUE_SIZE` kept for the service's own searches (fair play's search of a deal "
            "with a record in a top, `FAIRPLAY_SOLVE_TOP`): no client takes them, and a task may hold them all; "
            "less than `SOLVER_QUEUE_SIZE`"),
    Setting("SOLVER_UNKNOWN_SECONDS", "86400", parse_seconds,
            "an `unknown` answer is kept this long, then the deal is searched again"),
    Setting("SOLVER_HINT_KEEP_SECONDS", "3600", parse_seconds,
            "a hint's answer is kept (and can be polled) this long"),
    Setting("SOLVER_WORKER_MAX_MEMORY_MB", "1500", parse_positive_int,
            "a worker process left larger than this by a task is replaced"),
    Setting("CHALLENGE_NODES", "100000", parse_positive_int,
            "positions a challenge candidate's search may examine (part of which deal a challenge is)"),
    Setting("CHALLENGE_CANDIDATES", "16", parse_positive_int,
            "candidates tried per challenge window before giving up"),
    Setting("WINNABLE_POOL_SIZE", "200", parse_positive_int,
            "deals proved winnable kept per variant for `GET /deals/random?winnable=true`"),
    Setting("WINNABLE_POOL_NODES", "20000", parse_positive_int,
            "positions a winnable-pool candidate's search may examine (a deal not proved within them is passed "
            "over: a smaller budget proves more deals a second)"),
    Setting("WEBHOOK_ALLOW_PRIVATE", "0", parse_bool,
            "webhook endpoints may be on loopback, private and link-local addresses (`1`: tests and private "
            "networks only; by default they are refused when registered and when connected to)"),
    Setting("METRICS_ALLOW", "", parse_networks,
            "addresses and networks (`10.0.0.5, 10.1.0.0/16`) besides loopback that may read `GET /metrics`",
            "none (loopback only)"),
    Setting("WORKER_METRICS_PORT", None, parse_optional_port,
            "a worker (`celery --app api.tasks worker`) serves its Prometheus metrics on this port (its processes "
            "share `PROMETHEUS_MULTIPROC_DIR`; unset, the worker makes a directory of its own)", "unset (none)"),
    Setting("DATABASE_POOL_SIZE", "5", partial(parse_positive_int, most=1000),
            "PostgreSQL: connections each process keeps open (web and worker processes alike)"),
    Setting("DATABASE_MAX_OVERFLOW", "10", parse_count,
            "PostgreSQL: connections a process may open beyond `DATABASE_POOL_SIZE` at busy moments (`0`: none)"),
    Setting("MAX_REQUEST_LINE", "4094", partial(parse_positive_int, most=8190),
            "longest request line (method, path and query, version) in bytes (longer: 414); `gunicorn.conf.py` "
            "lets gunicorn take up to twice as much, so that the app answers", "`4094`"),
    Setting("MAX_REQUEST_HEADERS", "100", partial(parse_positive_int, most=16384),
            "most header fields in a request (more: 431); gunicorn's own limit is twice it"),
    Setting("MAX_HEADER_BYTES", "8190", partial(parse_positive_int, most=65536),
            "longest header field (`Name: value`) in bytes (longer: 431); gunicorn's own limit is twice it"),
    Setting("FAIRPLAY_TIMES_REQUIRED", "1", parse_bool,
            "a record without per-action times is unranked (flag `untimed`); off: untimed records rank"),
    Setting("FAIRPLAY_SOLVE_TOP", "10", parse_optional_positive_int,
            "a record entering the top N of a board holding at least N entries (a contested board: a "
            "variant's, a challenge's, a popular deal's) has its deal solved on the worker tier, so that its "
            "evidence includes the service's own line (empty: never)"),
    Setting("FAIRPLAY_JUDGE", "submission", parse_judge_place,
            "where a new record's game is judged: `submission` (in its request: the answer says whether it "
            "ranks) or `worker` (on the worker tier, within seconds: stored unranked with the flag `pending` "
            "until then, and `record.created` is sent once it is judged: a web process stores more records a "
            "second, docs/performance.md). Without a broker, always `submission`"),
    Setting("WEBHOOK_DEADLINE_SECONDS", "10", partial(parse_seconds, most=WEBHOOK_DEADLINE_CEILING),
            "the whole of one webhook attempt (connecting, sending, the answer's status, headers and body): a "
            f"receiver that has not answered by then has the attempt recorded as timed out and retried on the "
            f"schedule (at most {WEBHOOK_DEADLINE_CEILING:g})"),
    Setting("WEBHOOK_KEEP_SECONDS", str(7 * 86400), parse_seconds,
            "webhook deliveries that ended (delivered, failed or cancelled) are deleted this long after they were "
            "made, with their messages (the beat's `webhook-prune`); pending ones are kept", "`604800` (7 days)"),
    Setting("CHALLENGE_KEY", None, parse_challenge_key,
            f"the secret (at least {CHALLENGE_KEY_MIN} characters) of the HMAC that derives each challenge window's "
            "candidate deals (docs/api.md, \"Challenges\"): nobody without it can compute a challenge's deal. "
            "Unset: a key the service generates once and keeps in the database (table `service_keys`, in every "
            "backup). Changing it changes only the windows not prepared yet",
            "unset (the generated key)"),
)


def _from_environment(setting: Setting, env: Mapping[str, str], instance_path: str) -> Any:
    value = env.get(setting.name)
    if value is None or (setting.blank_is_default and not value):
        return setting.default(instance_path) if callable(setting.default) else setting.default
    return value


def _check_together(settings: dict[str, Any], raw: Mapping[str, Any]) -> None:
    """The checks between settings; fills in the result backend from the broker."""
    budget, stale = settings["SOLVER_BUDGET_SECONDS"], settings["SOLVER_STALE_SECONDS"]
    if stale <= budget:
        raise ConfigError(f"SOLVER_STALE_SECONDS={raw['SOLVER_STALE_SECONDS']!r}: must be longer than "
                          f"SOLVER_BUDGET_SECONDS ({budget:g}), or running searches would be started again")
    if settings["SOLVER_TASK_PLACES"] >= settings["SOLVER_QUEUE_SIZE"]:
        raise ConfigError(f"SOLVER_TASK_PLACES={raw['SOLVER_TASK_PLACES']!r}: must be less than SOLVER_QUEUE_SIZE "
                          f"({settings['SOLVER_QUEUE_SIZE']}), or clients would have no place")
    broker = settings["CELERY_BROKER_URL"]
    if settings["CELERY_RESULT_BACKEND"] is None and broker is not None:
        settings["CELERY_RESULT_BACKEND"] = broker if broker.startswith(("redis://", "rediss://")) else "rpc://"
    hard_limit = time_limits(budget)[1]
    if settings["CELERY_VISIBILITY_TIMEOUT"] <= hard_limit:
        raise ConfigError(f"CELERY_VISIBILITY_TIMEOUT={raw['CELERY_VISIBILITY_TIMEOUT']!r}: must be longer than a "
                          f"search's hard time limit ({hard_limit:g} s for SOLVER_BUDGET_SECONDS={budget:g}), or "
                          f"running searches would be handed to a second worker")


def load_settings(instance_path: str, overrides: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The app's settings: the environment, then ``overrides`` (``create_app(config)``), checked.
    Keys of ``overrides`` that are not settings pass through unchanged."""
    env = os.environ if environ is None else environ
    raw: dict[str, Any] = {setting.name: _from_environment(setting, env, instance_path) for setting in SETTINGS}
    raw.update(overrides or {})
    settings = {**raw, **{setting.name: setting.parse(setting.name, raw[setting.name]) for setting in SETTINGS}}
    _check_together(settings, raw)
    return settings


def markdown_table() -> str:
    """The README's table of the settings."""
    rows = [f"| `{s.name}` | {s.meaning} | {s.shown_default} |" for s in SETTINGS]
    return "\n".join(["| variable | meaning | default |", "|---|---|---|", *rows])


def rst_table() -> str:
    """The same table in reStructuredText (this module's docstring)."""
    rows = [(f"``{s.name}``", s.meaning.replace("`", "``"), s.shown_default.replace("`", "``")) for s in SETTINGS]
    widths = [max(len(row[i]) for row in [("variable", "meaning", "default"), *rows]) for i in range(3)]
    rule = "  ".join("=" * width for width in widths)
    line = lambda row: "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
    return "\n".join([rule, line(("variable", "meaning", "default")), rule, *map(line, rows), rule])


__doc__ = f"{__doc__ or ''}\n{rst_table()}\n"
