"""A submission's read of its deal stays flat as the tables grow (PostgreSQL), statistics or
none: the line index's candidates are looked up in ``line_bands``' index, never found by
scanning the table. Read as ``IN (SELECT <the packed values>)``, a planner without statistics
(a restored backup before its ANALYZE, a new service's tables growing between autovacuum's
runs) guessed a thousand values and scanned the whole table: 20 ms a submission at 240,000
rows, and growing. The test fills the tables as a busy service has them and reads the plan
that a pooled connection keeps (prepared, generic)."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from psycopg.sql import Literal
from sqlalchemy import text

from api import create_app
from api.fairplay import judging
from api.fairplay.evidence import pack
from api.players.accounts import name_params
from tests.conftest import TEST_DEFAULTS

#: the parameters' types, by their values
TYPES = {bytes: "bytea", str: "text", int: "bigint", datetime: "timestamptz"}
#: the deal read, records stored and their rows in line_bands (14 keys a record)
CODE, RECORDS, ROWS = "YU1-C-AAAAAAB", 17_000, 240_000


@pytest.mark.parametrize("empty_database_url", ["postgresql"], indirect=True)
def test_the_deal_read_looks_its_candidates_up_in_the_index(empty_database_url):
    app = create_app({"TESTING": True, "DATABASE_URL": empty_database_url, **TEST_DEFAULTS})
    with app.extensions["api.platform.db"].sessions() as session:
        connection = session.connection()
        # (no statistics, as after a restore or while a new service grows: autovacuum kept away)
        for table in ("records", "line_bands"):
            connection.execute(text(f"ALTER TABLE {table} SET (autovacuum_enabled = false)"))
        # records as a busy service has them, one in twenty of them of the deal read
        connection.execute(text(
            "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, "
            "undos, takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, earned, "
            "line) SELECT 'p' || n, CASE WHEN n % 20 = 0 THEN :code ELSE 'YU1-C-X' || n END, 'yukon-classic', n, "
            "'S', md5(n::text), false, 0, 1, 1, 0, 0, 0, 'test', 1, now(), now(), 0, '\\x00'::bytea "
            "FROM generate_series(1, :records) AS n"), {"code": CODE, "records": RECORDS})
        # (most keys are a record's own; an eighth are a few hundred keys that many games share: openings)
        connection.execute(text("INSERT INTO line_bands (band, record_id) "
                                "SELECT CASE WHEN n % 8 = 0 THEN n % 100 ELSE n * 7919 END, "
                                "(SELECT min(id) FROM records) + n % :records FROM generate_series(1, :rows) AS n "
                                "ON CONFLICT DO NOTHING"),
                           {"rows": ROWS, "records": RECORDS})
        session.commit()
        connection = session.connection()
        sql, binds, _ = judging._known_dollar(True, True)._compiled(connection)
        values = {"code": CODE, "positions": pack(range(1, 120)), "bands": pack(range(0, 14 * 3571, 3571)),
                  "now": datetime.now(UTC), **name_params("plan")}
        positional = [values.get(name, own) if process is None else process(values.get(name, own))
                      for name, own, process in binds]
        raw = connection.connection.driver_connection
        with psycopg.RawCursor(raw) as cursor:
            # (as a pooled connection runs it after a few times: prepared, with a plan for any values)
            cursor.execute("SET plan_cache_mode = force_generic_plan")
            types = [TYPES[type(value)] for value in positional]
            # (by the simple protocol: the statement's $n are PREPARE's parameters, not this query's)
            raw.pgconn.exec_(f"PREPARE deal_read ({', '.join(types)}) AS {sql}".encode())
            literals = ", ".join(Literal(value).as_string(raw) for value in positional)  # (EXPLAIN takes no $n)
            cursor.execute(f"EXPLAIN EXECUTE deal_read({literals})")
            plan = "\n".join(line for (line,) in cursor.fetchall())
    app.extensions["api.platform.db"].dispose()
    assert "line_bands" in plan and "Seq Scan on line_bands" not in plan, plan
    assert "pk_line_bands" in plan, plan
