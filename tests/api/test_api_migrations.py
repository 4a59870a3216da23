"""Alembic migrations, the ``db`` commands and the settings."""

from __future__ import annotations

import json

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from api.config import ConfigError, load_settings, normalize_database_url
from api.db import Database, alembic_config
from api.models import Base

BOTH = pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)


def test_there_is_one_head():
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    assert len(heads) == 1, heads


@BOTH
def test_an_empty_database_upgrades_to_head_and_matches_the_models(empty_database_url):
    database = Database(empty_database_url)
    try:
        assert database.current() == frozenset()
        database.upgrade()
        assert database.current() == database.heads
        with database.engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) == {"alembic_version", "records", "record_status",
                                                                  "api_keys", "solvability", "board_entries",
                                                                  "challenges", "standings", "player_stats"}
            diff = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}),
                                    Base.metadata)
        assert diff == []
        # and back down, and up again
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), "base")
        with database.engine.connect() as connection:
            assert set(inspect(connection).get_table_names()) == {"alembic_version"}
        database.upgrade()
        assert database.current() == database.heads
    finally:
        database.dispose()


@BOTH
def test_0002_keeps_the_records_of_0001_and_marks_them_visible_and_verified_when_received(empty_database_url):
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0001")
            connection.execute(text(
                "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, "
                "undos, takebacks, foundation_cards, engine_version, rules_version, received_at) VALUES ('ann', "
                "'FT1-N-AAAAAAB', 'forty-thieves', 1, 'S', 'x', false, 0, 1, 1, 0, 0, 0, '0.9.0', 1, :at)"),
                {"at": "2025-03-01 12:00:00+00:00"})
        database.upgrade()
        with database.sessions() as session:
            from api.models import Record

            [record] = session.query(Record).all()
        assert (record.player, record.status, record.submitted_by, record.history) == ("ann", "visible", None, [])
        assert record.verified_at == record.received_at and record.received_at.isoformat() == "2025-03-01T12:00:00+00:00"
        assert record.engine_version == "0.9.0"
    finally:
        database.dispose()


def test_auto_migrate_off_leaves_the_database_alone(make_app, empty_database_url):
    app = make_app(DATABASE_URL=empty_database_url, AUTO_MIGRATE="0")
    engine = create_engine(empty_database_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as connection:
            assert inspect(connection).get_table_names() == []
    finally:
        engine.dispose()
    assert app.extensions["api.db"].current() == frozenset()


def test_db_commands(make_app, empty_database_url):
    app = make_app(DATABASE_URL=empty_database_url, AUTO_MIGRATE=False)
    runner = app.test_cli_runner()
    head = ", ".join(sorted(app.extensions["api.db"].heads))
    result = runner.invoke(args=["db", "current"])
    assert result.exit_code == 0 and result.stdout.strip() == "empty (no migration applied)"
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"database at {head} (head)"
    lines = [json.loads(line) for line in result.stderr.splitlines() if "schema" in line]
    assert {line["logger"] for line in lines} == {"api.migrations"}
    assert [line["message"].split(" (")[0] for line in lines] == [
        "database schema upgraded: empty -> 0001", "database schema upgraded: 0001 -> 0002",
        "database schema upgraded: 0002 -> 0003", "database schema upgraded: 0003 -> 0006"]
    assert runner.invoke(args=["db", "current"]).stdout.strip() == f"{head} (head)"


def test_db_current_on_the_suites_database(runner, app):
    result = runner.invoke(args=["db", "current"])
    assert result.exit_code == 0
    assert result.stdout.strip().endswith("(head)")


# -- settings ------------------------------------------------------------

@pytest.mark.parametrize("url, expected", [
    ("postgres://u:p@db:5432/app", "postgresql+psycopg://u:p@db:5432/app"),
    ("postgresql://u@db/app?sslmode=require", "postgresql+psycopg://u@db/app?sslmode=require"),
    ("postgresql+psycopg://u@db/app", "postgresql+psycopg://u@db/app"),
    ("sqlite:////var/lib/records.sqlite3", "sqlite:////var/lib/records.sqlite3"),
])
def test_postgres_urls_use_psycopg_3(url, expected):
    assert normalize_database_url(url) == expected


def test_settings_come_from_the_environment_then_the_overrides(tmp_path):
    defaults = load_settings(str(tmp_path), environ={})
    assert defaults["DATABASE_URL"] == f"sqlite:///{tmp_path / 'records.sqlite3'}"
    assert (defaults["AUTO_MIGRATE"], defaults["MAX_CONTENT_LENGTH"], defaults["LOG_LEVEL"]) == (True, 1048576, "INFO")
    env = {"DATABASE_URL": "postgres://x@h/d", "AUTO_MIGRATE": "off", "MAX_CONTENT_LENGTH": "2048",
           "LOG_LEVEL": "debug"}
    settings = load_settings(str(tmp_path), environ=env)
    assert settings["DATABASE_URL"] == "postgresql+psycopg://x@h/d"
    assert (settings["AUTO_MIGRATE"], settings["MAX_CONTENT_LENGTH"], settings["LOG_LEVEL"]) == (False, 2048, "DEBUG")
    assert load_settings(str(tmp_path), {"AUTO_MIGRATE": True}, environ=env)["AUTO_MIGRATE"] is True


@pytest.mark.parametrize("env, name", [
    ({"AUTO_MIGRATE": "maybe"}, "AUTO_MIGRATE"),
    ({"MAX_CONTENT_LENGTH": "0"}, "MAX_CONTENT_LENGTH"),
    ({"MAX_CONTENT_LENGTH": "1MB"}, "MAX_CONTENT_LENGTH"),
    ({"LOG_LEVEL": "loud"}, "LOG_LEVEL"),
])
def test_bad_settings_name_the_variable(tmp_path, env, name):
    with pytest.raises(ConfigError, match=name):
        load_settings(str(tmp_path), environ=env)


def test_create_app_reads_the_environment(monkeypatch, tmp_path):
    from api import create_app

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'env.sqlite3'}")
    monkeypatch.setenv("MAX_CONTENT_LENGTH", "4096")
    app = create_app()
    try:
        assert app.config["MAX_CONTENT_LENGTH"] == 4096
        assert (tmp_path / "env.sqlite3").exists()
        assert app.extensions["api.db"].current() == app.extensions["api.db"].heads
    finally:
        app.extensions["api.db"].dispose()


@BOTH
def test_0006_builds_the_boards_and_totals_from_the_stored_records(empty_database_url):
    database = Database(empty_database_url)
    insert = text(
        "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, undos, "
        "takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status) VALUES "
        "(:player, 'FT1-N-AAAAAAB', 'forty-thieves', 1, :log, :hash, :won, :score, :moves, 1, 0, :takebacks, 0, "
        "'0.9.0', 1, :at, :at, :status)")
    rows = [("ann", False, 40, 9, 0, "visible"), ("ann", True, 900, 120, 2, "visible"),
            ("ann", True, 950, 100, 0, "hidden"), ("bob", False, 60, 12, 0, "visible")]
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0003")
            for n, (player, won, score, moves, takebacks, status) in enumerate(rows):
                connection.execute(insert, {"player": player, "log": f"log{n}", "hash": f"hash{n}", "won": won, "score": score,
                                            "moves": moves, "takebacks": takebacks, "status": status,
                                            "at": f"2025-03-0{n + 1} 12:00:00+00:00"})
        database.upgrade()
        with database.engine.connect() as connection:
            kept = connection.execute(text("SELECT count(*) FROM records")).scalar_one()
            entries = connection.execute(text(
                "SELECT board, player, score FROM board_entries ORDER BY board, sort_key")).all()
            totals = connection.execute(text(
                "SELECT player, games, wins, best_score, won_moves, takebacks FROM player_stats ORDER BY player")).all()
        assert kept == 4
        assert [tuple(e) for e in entries] == [
            ("deal-nt:FT1-N-AAAAAAB", "bob", 60), ("deal-nt:FT1-N-AAAAAAB", "ann", 40),
            ("deal:FT1-N-AAAAAAB", "ann", 900), ("deal:FT1-N-AAAAAAB", "bob", 60),
            ("variant-nt:forty-thieves", "bob", 60), ("variant-nt:forty-thieves", "ann", 40),
            ("variant:forty-thieves", "ann", 900), ("variant:forty-thieves", "bob", 60)]
        assert [tuple(t) for t in totals] == [("ann", 2, 1, 900, 120, 2), ("bob", 1, 0, 60, 0, 0)]
    finally:
        database.dispose()
