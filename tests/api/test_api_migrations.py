"""Alembic migrations, the ``db`` commands and the settings."""

from __future__ import annotations

import json

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from api.platform.config import ConfigError, load_settings, normalize_database_url
from api.platform.db import Database, alembic_config
from api.platform.models import Base

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
            assert set(inspect(connection).get_table_names()) == {"alembic_version", *Base.metadata.tables}
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
            from api.platform.models import Record

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
    assert app.extensions["api.platform.db"].current() == frozenset()


def test_db_commands(make_app, empty_database_url):
    app = make_app(DATABASE_URL=empty_database_url, AUTO_MIGRATE=False)
    runner = app.test_cli_runner()
    head = ", ".join(sorted(app.extensions["api.platform.db"].heads))
    result = runner.invoke(args=["db", "current"])
    assert result.exit_code == 0 and result.stdout.strip() == "empty (no migration applied)"
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"database at {head} (head)"
    lines = [json.loads(line) for line in result.stderr.splitlines() if "schema" in line]
    assert {line["logger"] for line in lines} == {"api.migrations"}
    chain = [script.revision for script in reversed(list(ScriptDirectory.from_config(alembic_config())
                                                            .walk_revisions()))]
    assert [line["message"].split(" (")[0] for line in lines] == [
        f"database schema upgraded: {before} -> {after}" for before, after in zip(["empty", *chain], chain)]
    assert chain[:7] == ["0001", "0002", "0003", "0004", "0005", "0006", "0007"]
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
        assert app.extensions["api.platform.db"].current() == app.extensions["api.platform.db"].heads
    finally:
        app.extensions["api.platform.db"].dispose()


OLD_COLUMNS = ("id", "player", "code", "variant", "number", "canonical", "log_hash", "won", "score", "moves", "actions",
               "undos", "takebacks", "foundation_cards", "claimed_score", "claimed_moves", "claimed_won", "elapsed_ms",
               "client", "engine_version", "rules_version", "received_at", "verified_at", "submitted_by", "status")


#: a record as the schema of 0006 and 0007 stores it (``player``, ``hash``, ``at``)
RECORD_AT_0006 = text(
    "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, undos, "
    "takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status, ranked, "
    "flags) VALUES (:player, 'FT1-N-AAAAAAB', 'forty-thieves', 1, 'S', :hash, false, 0, 1, 1, 0, 0, 0, "
    "'0.9.0', 1, :at, :at, 'visible', true, '[]')")


def _old_rows(connection):
    return [tuple(row) for row in connection.execute(text(
        f"SELECT {', '.join(OLD_COLUMNS)} FROM records ORDER BY id")).all()]


@BOTH
def test_0005_keeps_every_old_record_and_makes_players_and_evidence(empty_database_url):
    """Records stored at 0003 (before players): every value kept; one player per NFC name; look-alike
    names kept apart; copies among the old records unranked and pointing to the first; empty logs unranked."""
    from api.platform.models import Player, Record

    database = Database(empty_database_url)
    old = [  # player, log hash, actions, status
        ("ann", "a" * 64, 5, "visible"),
        ("René", "b" * 64, 5, "visible"),            # composed …
        ("Rene\u0301", "c" * 64, 5, "visible"),      # … and decomposed: one player
        ("\u0430nn", "d" * 64, 5, "visible"),        # Cyrillic: reads as ann, kept as a player of its own
        ("copycat", "a" * 64, 5, "visible"),         # ann's log again
        ("ann", "e" * 64, 5, "hidden"),
        ("spammer", "f" * 64, 0, "visible"),         # an empty log
    ]
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0003")
            for number, (player, log_hash, actions, status) in enumerate(old):
                connection.execute(text(
                    "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, "
                    "actions, undos, takebacks, foundation_cards, claimed_score, engine_version, rules_version, "
                    "received_at, verified_at, submitted_by, status) VALUES (:player, 'FT1-N-AAAAAAB', "
                    "'forty-thieves', 1, 'S', :hash, false, :score, 1, :actions, 0, 0, 0, 10, '0.9.0', 1, :at, :at, "
                    "'old-key', :status)"),
                    {"player": player, "hash": log_hash, "actions": actions, "status": status, "score": 10 + number,
                     "at": f"2025-03-0{number + 1} 12:00:00+00:00"})
            before = _old_rows(connection)
        database.upgrade()
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before  # every record, every old value, unchanged
        with database.sessions() as session:
            records = session.query(Record).order_by(Record.id).all()
            players = {p.id: p for p in session.query(Player).all()}
        by_record = [players[r.player_id].name for r in records]
        assert by_record == ["ann", "René", "René", "\u0430nn", "copycat", "ann", "spammer"]
        assert {p.name for p in players.values()} == {"ann", "René", "\u0430nn", "copycat", "spammer"}
        assert all(p.token_hash is None for p in players.values())
        assert [p.skeleton_hash is None for p in players.values() if p.name == "\u0430nn"] == [True]
        assert [(r.ranked, [f["flag"] for f in r.flags], r.copy_of) for r in records] == [
            (True, [], None), (True, [], None), (True, [], None), (True, [], None),
            (False, ["copy"], records[0].id), (True, [], None), (False, ["empty-log"], None)]
        assert [r.status for r in records] == [row[-1] for row in before]
    finally:
        database.dispose()


@BOTH
def test_after_0005_old_names_are_taken_and_old_records_keep_their_ranks(make_app, empty_database_url):
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0003")
            connection.execute(text(
                "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, "
                "undos, takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status) "
                "VALUES ('ann', 'FT1-N-AAAAAAB', 'forty-thieves', 1, 'S', :hash, false, 0, 1, 1, 0, 0, 0, '0.9.0', "
                "1, :at, :at, 'visible')"), {"hash": "a" * 64, "at": "2025-03-01 12:00:00+00:00"})
    finally:
        database.dispose()
    client = make_app(DATABASE_URL=empty_database_url).test_client()
    for name in ("ann", "ANN", "\u0391\u039d\u039d"):  # (Greek capitals)
        response = client.post("/api/v1/players", json={"name": name})
        assert response.status_code == 409 and response.get_json()["player"] == "ann"
    profile = client.get("/api/v1/players/ann").get_json()
    assert profile["registered"] is False
    board = client.get("/api/v1/leaderboard?variant=forty-thieves").get_json()["entries"]
    assert [e["player"] for e in board] == ["ann"]


@BOTH
def test_0005_down_again_keeps_every_record(empty_database_url):
    """Downgrading below 0005 keeps every record; one waiting for review becomes hidden (the old
    schema has no review), and the players, hints and flags go."""
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0003")
            for number, player in enumerate(("ann", "copycat", "bot")):
                connection.execute(text(
                    "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, "
                    "actions, undos, takebacks, foundation_cards, engine_version, rules_version, received_at, "
                    "verified_at, status) VALUES (:player, 'FT1-N-AAAAAAB', 'forty-thieves', 1, 'S', :hash, false, "
                    "0, 1, 1, 0, 0, 0, '0.9.0', 1, :at, :at, 'visible')"),
                    {"player": player, "hash": ("a" if number < 2 else "b") * 64,
                     "at": f"2025-03-0{number + 1} 12:00:00+00:00"})
            before = _old_rows(connection)
        database.upgrade()
        with database.engine.begin() as connection:
            connection.execute(text("UPDATE records SET status = 'review' WHERE player = 'bot'"))
            assert connection.execute(text("SELECT copy_of FROM records WHERE player = 'copycat'")).scalar() == 1
            command.downgrade(alembic_config(connection), "0003")
        with database.engine.connect() as connection:
            after = _old_rows(connection)
            assert "players" not in inspect(connection).get_table_names()
        assert after == [row if row[1] != "bot" else (*row[:-1], "hidden") for row in before]
    finally:
        database.dispose()


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


@BOTH
def test_0007_keeps_every_record_and_the_copy_check_finds_the_first_of_a_log(empty_database_url):
    """Records stored at 0006: every value kept through 0007 and back; the index ends in the id."""
    database = Database(empty_database_url)
    insert = RECORD_AT_0006
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0006")
            for n, (player, hash_) in enumerate([("ann", "h1"), ("bob", "h1"), ("cat", "h2"), ("dan", "h1")]):
                connection.execute(insert, {"player": player, "hash": hash_, "at": f"2025-03-0{n + 1} 12:00:00+00:00"})
            before = _old_rows(connection)
        database.upgrade()
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            indexes = {i["name"]: i["column_names"] for i in inspect(connection).get_indexes("records")}
            assert indexes["ix_records_code_log_hash_id"] == ["code", "log_hash", "id"]
            assert "ix_records_code_log_hash" not in indexes
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0006")
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            assert "ix_records_code_log_hash" in {i["name"] for i in inspect(connection).get_indexes("records")}
    finally:
        database.dispose()


@BOTH
@pytest.mark.parametrize(("module", "added"), [
    ("0012_webhooks", {"webhook_endpoints", "webhook_messages", "webhook_deliveries"}),
    ("0013_deal_versions", {"deal_versions"}), ("0014_unjudged_index", set()), ("0015_webhook_prune_index", set())])
def test_the_migrations_that_add_tables_keep_every_record(empty_database_url, module, added):
    """0012 adds the webhook tables, 0013 the deals' versions, 0014 and 0015 indexes: a record stored
    before is unchanged, up and down again, and only those tables come and go."""
    import importlib

    migration = importlib.import_module(f"migrations.versions.{module}")
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), migration.down_revision)
            connection.execute(text(
                "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, "
                "undos, takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status) "
                "VALUES ('ann', 'FT1-N-AAAAAAB', 'forty-thieves', 1, 'S', :hash, false, 5, 1, 1, 0, 0, 0, '1.0.0', 1, "
                "'2026-01-01 12:00:00+00:00', '2026-01-01 12:00:00+00:00', 'visible')"), {"hash": "a" * 64})
            before = _old_rows(connection)
            tables = set(inspect(connection).get_table_names())
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), migration.revision)
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            assert set(inspect(connection).get_table_names()) - tables == added
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), migration.down_revision)
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before and set(inspect(connection).get_table_names()) == tables
    finally:
        database.dispose()


@BOTH
def test_0008_keeps_every_record_and_player_and_computes_the_effective_lines(empty_database_url):
    """Records, players and hints stored in the schema before 0008 (its ``down_revision``): every
    value kept; each record gets its effective line and band keys (undos and loops left out, so a
    padded copy of a log gets the same line); a log that does not replay keeps none; and back down."""
    import importlib.util

    from api.fairplay import evidence
    from api.platform.db import MIGRATIONS
    from tests.api.conftest import play_legal

    spec = importlib.util.spec_from_file_location("evidence_0008", MIGRATIONS / "versions" / "0008_evidence.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    played = play_legal("FT1-N-AAAAAAB", 6)
    database = Database(empty_database_url)
    insert = text(
        "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, undos, "
        "takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status, ranked, "
        "flags, player_id) VALUES (:player, 'FT1-N-AAAAAAB', 'forty-thieves', 1, :log, :hash, false, 0, 1, 1, 0, "
        "0, 0, '0.9.0', 1, :at, :at, 'visible', true, '[]', :player_id)")
    logs = [("ann", " ".join(played)), ("bob", " ".join(played[:3] + ["U"] + played[2:])),
            ("cat", "T9>T9 # not a log")]
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), module.down_revision)
            for n, (player, log) in enumerate(logs):
                player_id = connection.execute(text(
                    "INSERT INTO players (name, created_at) VALUES (:name, :at) RETURNING id"),
                    {"name": player, "at": "2025-03-01 12:00:00+00:00"}).scalar_one()
                connection.execute(insert, {"player": player, "log": log, "hash": f"h{n}", "player_id": player_id,
                                            "at": f"2025-03-0{n + 1} 12:00:00+00:00"})
            connection.execute(text("INSERT INTO hints (player_id, code, at, actions, position) VALUES "
                                    "(1, 'FT1-N-AAAAAAB', '2025-03-01 12:00:00+00:00', 0, 'p')"))
            before = _old_rows(connection)
            players = connection.execute(text("SELECT id, name FROM players ORDER BY id")).all()
        database.upgrade()
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            assert connection.execute(text("SELECT id, name FROM players ORDER BY id")).all() == players
            lines = [row[0] for row in connection.execute(text("SELECT line FROM records ORDER BY id"))]
            bands = connection.execute(text("SELECT record_id, count(*) FROM line_bands GROUP BY record_id "
                                            "ORDER BY record_id")).all()
            hint = connection.execute(text("SELECT action, reached, position FROM hints")).one()
        expected = evidence.pack(evidence.effective_line("FT1-N-AAAAAAB", played))
        assert lines[0] == lines[1] and bytes(lines[0]) == expected and lines[2] is None
        keys = len(evidence.index_keys(evidence.effective_line("FT1-N-AAAAAAB", played)))
        assert [tuple(b) for b in bands] == [(1, keys), (2, keys)]
        assert tuple(hint) == (None, None, "p")
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), module.down_revision)
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            assert "line_bands" not in inspect(connection).get_table_names()
    finally:
        database.dispose()


@BOTH
def test_0011_keeps_every_record_and_indexes_a_players_records_by_id(empty_database_url):
    """Records stored in the schema 0011 revises: every value kept through 0011 and back."""
    old = ScriptDirectory.from_config(alembic_config()).get_revision("0011").down_revision
    database = Database(empty_database_url)
    insert = RECORD_AT_0006
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), old)
            for n, player in enumerate(["ann", "bob", "ann"]):
                connection.execute(insert, {"player": player, "hash": f"h{n}",
                                            "at": f"2025-03-0{n + 1} 12:00:00+00:00"})
            before = _old_rows(connection)
        database.upgrade()
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            indexes = {i["name"]: i["column_names"] for i in inspect(connection).get_indexes("records")}
            assert indexes["ix_records_player_id_id"] == ["player_id", "id"]
            assert "ix_records_player_id" not in indexes
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), old)
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            assert "ix_records_player_id" in {i["name"] for i in inspect(connection).get_indexes("records")}
    finally:
        database.dispose()


@BOTH
def test_0017_gives_every_record_its_earned_points_and_ranks_the_boards_by_them(empty_database_url):
    """Records and a challenge stored in the schema before 0017: every value kept; each record gets
    the earned points of its stored log (a log that does not replay: from its score and take-backs);
    the boards and standings are those the service builds at head (a Yukon win with take-back loops
    falls below the honest wins, and a player's entry becomes their honest win); and back down, the
    boards rank by score again."""
    import importlib

    from sqlalchemy import select

    from api.boards import upkeep
    from api.platform.models import BoardEntry, Standing
    from tests.api.test_api_board_loops import with_loops, with_undos
    from tests.engine.engine_helpers import find_win
    from tests.play import play_greedy
    from verifier import replay

    migration = importlib.import_module("migrations.versions.0017_earned_points")
    win = [str(action) for action in find_win("YU1-C-AAAAAAB")]
    thief = play_greedy("FT1-N-AAAAAAB", 80)
    games = [("honest", "YU1-C-AAAAAAB", win), ("cheat", "YU1-C-AAAAAAB", with_loops("YU1-C-AAAAAAB", win, 30)),
             ("ann", "YU1-C-AAAAAAB", with_undos("YU1-C-AAAAAAB", win, 20)),
             ("ann", "YU1-C-AAAAAAB", with_loops("YU1-C-AAAAAAB", win, 2)),
             ("bob", "FT1-N-AAAAAAB", with_loops("FT1-N-AAAAAAB", thief, 2)), ("bob", "FT1-N-AAAAAAB", thief)]
    insert = text(
        "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, undos, "
        "takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status, ranked, "
        "flags) VALUES (:player, :code, :variant, 1, :log, :hash, :won, :score, :moves, :actions, :undos, "
        ":takebacks, :cards, '1.0.0', 1, :at, :at, 'visible', true, '[]')")
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), migration.down_revision)
            for n, (player, code, log) in enumerate(games):
                verdict = replay(code, " ".join(log))
                assert verdict.verified
                connection.execute(insert, {
                    "player": player, "code": code, "variant": verdict.code.variant, "log": verdict.canonical_text,
                    "hash": f"h{n}", "won": verdict.won, "score": verdict.score, "moves": verdict.moves,
                    "actions": verdict.actions, "undos": verdict.undos, "takebacks": verdict.takebacks,
                    "cards": verdict.foundation_cards, "at": f"2025-03-0{n + 1} 12:00:00+00:00"})
            connection.execute(insert, {  # a log that does not replay (none should)
                "player": "cid", "code": "YU1-C-AAAAAAB", "variant": "yukon-classic", "log": "T9>T9 # not a log",
                "hash": "h9", "won": False, "score": 40, "moves": 9, "actions": 9, "undos": 0, "takebacks": 1,
                "cards": 2, "at": "2025-03-09 12:00:00+00:00"})
            connection.execute(text(
                "INSERT INTO challenges (variant, kind, starts_at, ends_at, code, candidate, par, par_line, prepared_at, "
                "attempts_required) VALUES ('yukon-classic', 'daily', '2025-03-01 00:00:00+00:00', "
                "'2025-03-10 00:00:00+00:00', 'YU1-C-AAAAAAB', 0, 90, '', '2025-03-01 00:00:00+00:00', false)"))
            before = _old_rows(connection)

        def deal_board(connection):
            return [(row.player, row.score, row.takebacks) for row in connection.execute(text(
                "SELECT player, score, takebacks FROM board_entries WHERE board = 'deal:YU1-C-AAAAAAB' "
                "ORDER BY sort_key, received_at, record_id"))]

        database.upgrade()
        with database.engine.begin() as connection:
            assert _old_rows(connection) == before
            earned = connection.execute(text("SELECT player, takebacks, earned FROM records ORDER BY id")).all()
            assert [tuple(row) for row in earned][:4] == [("honest", 0, 625), ("cheat", 30, 625), ("ann", 0, 625),
                                                          ("ann", 2, 625)]
            thief_earned = [row.earned for row in earned if row.player == "bob"]
            assert thief_earned[0] == thief_earned[1] == replay("FT1-N-AAAAAAB", " ".join(thief)).score
            assert tuple(earned[-1]) == ("cid", 1, 30)  # 40 less the take-back's 10
            assert deal_board(connection) == [("honest", 625, 0), ("ann", 625, 0), ("cheat", 925, 30),
                                              ("cid", 40, 1)]

            def snapshot():
                return [sorted(tuple(row) for row in connection.execute(select(*table.__table__.columns)).all())
                        for table in (BoardEntry, Standing)]

            migrated = snapshot()
            upkeep.rebuild_all(connection)
            assert snapshot() == migrated and migrated[1]
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), migration.down_revision)
        with database.engine.connect() as connection:
            assert _old_rows(connection) == before
            assert deal_board(connection)[0] == ("cheat", 925, 30)  # the order before: the score first
    finally:
        database.dispose()


@BOTH
def test_0018_computes_every_line_key_and_hint_again_on_settled_positions_and_back(empty_database_url):
    """Records, hints and a copy flag stored before 0018 with the former lines (layout hashes, MinHash
    bands): every other value kept; each line, its index keys and each hint's position computed on
    settled positions; a log that does not replay keeps its line; the copy flag keeps its evidence
    and gains the shared share; and back down to exactly the former values."""
    import importlib

    from api.fairplay import evidence
    from engine import Game
    from engine.layouts import position_hash
    from tests.api.conftest import play_legal

    migration = importlib.import_module("migrations.versions.0018_settled_lines")
    code = "YU1-C-AAAAAAB"
    played = play_legal(code, 40)
    logs = [("ann", " ".join(played)), ("bob", " ".join(played[:20] + ["U"] + played[19:])),
            ("cat", "T9>T9 # not a log")]
    former = [migration._pack(migration.former_line(code, played))] * 2 + [b"\x00" * 8]
    copy_flag = {"flag": "copy", "reason": "copied", "review": False,
                 "evidence": {"original": 1, "jaccard": 1.0, "threshold": 0.8}}
    database = Database(empty_database_url)
    insert = text(
        "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, undos, "
        "takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status, ranked, "
        "flags, player_id, line, copy_of, earned) VALUES (:player, :code, 'yukon-classic', 1, :log, :hash, false, 0, "
        "1, 1, 0, 0, 0, '1.0.0', 1, :at, :at, 'visible', :ranked, :flags, :player_id, :line, :copy_of, 0)")
    game = Game.from_code(code)
    position = str(game.position)
    game.push_text(played[0])
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), migration.down_revision)
            for n, (player, log) in enumerate(logs):
                player_id = connection.execute(text(
                    "INSERT INTO players (name, created_at) VALUES (:name, :at) RETURNING id"),
                    {"name": player, "at": "2025-03-01 12:00:00+00:00"}).scalar_one()
                connection.execute(insert, {
                    "player": player, "code": code, "log": log, "hash": f"h{n}", "player_id": player_id,
                    "at": f"2025-03-0{n + 1} 12:00:00+00:00", "line": former[n], "ranked": n != 1,
                    "flags": json.dumps([copy_flag] if n == 1 else []), "copy_of": 1 if n == 1 else None})
                keys = migration.former_band_keys(code, migration._unpack(former[n]))
                connection.execute(text("INSERT INTO line_bands (band, record_id) VALUES (:band, :id)"),
                                   [{"band": key, "id": n + 1} for key in keys])
            connection.execute(text("INSERT INTO hints (player_id, code, at, actions, position, action, reached) "
                                    "VALUES (1, :code, '2025-03-01 12:00:00+00:00', 0, :position, :action, :reached)"),
                               {"code": code, "position": position, "action": played[0],
                                "reached": position_hash(game.position)})
            columns = [c for c in OLD_COLUMNS if c != "flags"]

            def rows(connection):
                return [tuple(row) for row in connection.execute(text(
                    f"SELECT {', '.join(columns)} FROM records ORDER BY id")).all()]

            def state(connection):
                return (
                    [bytes(row[0]) for row in connection.execute(text("SELECT line FROM records ORDER BY id"))],
                    sorted(tuple(row) for row in connection.execute(text("SELECT record_id, band FROM line_bands"))),
                    connection.execute(text("SELECT reached FROM hints")).scalar_one(),
                    [json.loads(f) if isinstance(f, str) else f
                     for (f,) in connection.execute(text("SELECT flags FROM records ORDER BY id"))])

            before, former_state = rows(connection), state(connection)
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), migration.revision)
        with database.engine.connect() as connection:
            assert rows(connection) == before
            lines, keys, reached, flags = state(connection)
        new = frozenset(evidence.effective_line(code, played))
        assert lines == [evidence.pack(new)] * 2 + [former[2]]  # (the log that does not replay keeps its line)
        assert keys == sorted([(1, key) for key in evidence.index_keys(new)] + [(2, key) for key in
                                                                                 evidence.index_keys(new)]
                              + [k for k in former_state[1] if k[0] == 3])
        assert reached == evidence.position_hash(game.position) != former_state[2]
        assert flags[1][0]["evidence"] == {"original": 1, "jaccard": 1.0, "threshold": 0.8,
                                           "shared_positions": len(new), "share_of_original": 1.0,
                                           "share_of_game": 1.0, "overlap": 1.0}
        assert flags[0] == flags[2] == []
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), migration.down_revision)
        with database.engine.connect() as connection:
            assert rows(connection) == before and state(connection) == former_state
    finally:
        database.dispose()
