"""Migration 0016 (hints keep their line): hints stored before keep every value, with no line
and no key (served as they were; the next hint after them is a new search), up and down again."""

from __future__ import annotations

import importlib.util

import pytest
from alembic import command
from sqlalchemy import inspect, text

from api.platform.db import MIGRATIONS, Database, alembic_config

BOTH = pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)
HINT_COLUMNS = ("id", "code", "log_hash", "log", "after_actions", "budget", "engine_version", "rules_version",
                "status", "reason", "answer", "attempts")


def rows(connection):
    return [tuple(row) for row in connection.execute(text(
        f"SELECT {', '.join(HINT_COLUMNS)} FROM hint_answers ORDER BY id")).all()]


@BOTH
def test_0016_keeps_every_hint_and_adds_its_line_empty(empty_database_url):
    spec = importlib.util.spec_from_file_location("hint_lines_0016", MIGRATIONS / "versions" / "0016_hint_lines.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), module.down_revision)
            for n, status in enumerate(["winnable", "pending", "unknown"]):
                connection.execute(text(
                    "INSERT INTO hint_answers (code, log_hash, log, after_actions, budget, engine_version, "
                    "rules_version, status, reason, answer, attempts, requested_at, solved_at) VALUES "
                    "('YU1-C-AAAAAAB', :hash, :log, :n, '2s', '1.0.0', 1, :status, 'why', :answer, 1, "
                    "'2026-01-01 12:00:00+00:00', '2026-01-01 12:00:01+00:00')"),
                    {"hash": str(n) * 64, "log": "T7:TS>T2" if n else "", "n": n, "status": status,
                     "answer": '{"hint": "T7:TS>T2", "line_length": 90}' if n == 0 else None})
            before = rows(connection)
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), module.revision)
        with database.engine.connect() as connection:
            assert rows(connection) == before
            assert connection.execute(text("SELECT line, next_key FROM hint_answers")).all() == [(None, None)] * 3
            assert "ix_hint_answers_next_key" in {i["name"] for i in inspect(connection).get_indexes("hint_answers")}
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), module.down_revision)
        with database.engine.connect() as connection:
            assert rows(connection) == before
            assert {"line", "next_key"}.isdisjoint(c["name"] for c in inspect(connection).get_columns("hint_answers"))
    finally:
        database.dispose()
