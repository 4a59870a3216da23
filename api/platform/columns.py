"""Column types and statements that differ by database: the ids, points in time kept in
UTC, and the ``insert`` that has ``on_conflict_do_*``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Integer
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.types import TypeDecorator

#: an auto-incrementing 64-bit id (SQLite only auto-increments ``INTEGER PRIMARY KEY``)
Id = BigInteger().with_variant(Integer, "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A point in time, stored with its zone and always read back in UTC
    (SQLite keeps no zone, PostgreSQL answers in the session's zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("UTCDateTime needs a time with a zone")
        return None if value is None else value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def dialect_insert(dialect: str) -> Any:
    """The ``insert`` of ``dialect`` that has ``on_conflict_do_*`` (PostgreSQL's, else SQLite's)."""
    return postgresql.insert if dialect == "postgresql" else sqlite.insert
