"""Settings from the environment, read once when the app is created.

===================  =========================================  ==========================
variable             meaning                                    default
===================  =========================================  ==========================
``DATABASE_URL``     SQLAlchemy URL; ``postgres://`` and        SQLite file
                     ``postgresql://`` use psycopg 3            ``instance/records.sqlite3``
``AUTO_MIGRATE``     upgrade the schema to head on start        ``1``
``MAX_CONTENT_LENGTH``  largest request body, in bytes          ``1048576`` (1 MiB)
``LOG_LEVEL``        level of the JSON log on stderr            ``INFO``
===================  =========================================  ==========================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}


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


def parse_positive_int(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or isinstance(value, bool):
        raise ConfigError(f"{name}={value!r}: expected a whole number of at least 1")
    return number


def load_settings(instance_path: str, overrides: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The app's settings: the environment, then ``overrides`` (``create_app(config)``), checked."""
    env = os.environ if environ is None else environ
    default_db = "sqlite:///" + str(Path(instance_path) / "records.sqlite3")
    raw: dict[str, Any] = {
        "DATABASE_URL": env.get("DATABASE_URL") or default_db,
        "AUTO_MIGRATE": env.get("AUTO_MIGRATE", "1"),
        "MAX_CONTENT_LENGTH": env.get("MAX_CONTENT_LENGTH", 1024 * 1024),
        "LOG_LEVEL": env.get("LOG_LEVEL", "INFO"),
    }
    raw.update(overrides or {})
    level = str(raw["LOG_LEVEL"]).strip().upper()
    if level not in _LEVELS:
        raise ConfigError(f"LOG_LEVEL={raw['LOG_LEVEL']!r}: expected one of {', '.join(sorted(_LEVELS))}")
    return {
        **raw,
        "DATABASE_URL": normalize_database_url(str(raw["DATABASE_URL"]).strip()),
        "AUTO_MIGRATE": parse_bool("AUTO_MIGRATE", raw["AUTO_MIGRATE"]),
        "MAX_CONTENT_LENGTH": parse_positive_int("MAX_CONTENT_LENGTH", raw["MAX_CONTENT_LENGTH"]),
        "LOG_LEVEL": level,
    }
