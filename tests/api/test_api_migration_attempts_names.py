"""The attempts-and-names migration (0009) on data stored in the schema before it: every
record and player kept, old challenges keep their boards, look-alike names flagged."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from api.platform.auth import hash_token
from api.platform.db import Database, alembic_config

MODULE = Path(__file__).resolve().parents[2] / "migrations" / "versions" / "0009_attempts_names.py"
BOTH = pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)


def migration():
    spec = importlib.util.spec_from_file_location("migration_0009", MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: (name, token or None): players stored before; the skeleton column holds what the old rules gave (distinct)
OLD_PLAYERS = [("leo", "svp_" + "l" * 43), ("Ieo", "svp_" + "i" * 43), ("bill", None), ("biII", "svp_" + "b" * 43),
               ("ann", None), ("a\u034fnn", "svp_" + "a" * 43), ("k\u03b1te", None), ("Jääskeläinen", None)]
RECORD = text(
    "INSERT INTO records (player, code, variant, number, canonical, log_hash, won, score, moves, actions, undos, "
    "takebacks, foundation_cards, engine_version, rules_version, received_at, verified_at, status, ranked, flags, "
    "player_id) VALUES (:player, 'FT1-N-AAAAAAB', 'forty-thieves', 1, 'S', :hash, false, :score, 1, 1, 0, 0, 0, "
    "'0.9.0', 1, :at, :at, 'visible', true, '[]', :player_id)")


def old_players(connection):
    return [tuple(row) for row in connection.execute(text(
        "SELECT id, name, token_hash, created_at FROM players ORDER BY id")).all()]


def old_records(connection):
    return [tuple(row) for row in connection.execute(text(
        "SELECT id, player, player_id, code, canonical, log_hash, score, received_at, status, ranked FROM records "
        "ORDER BY id")).all()]


@BOTH
def test_0009_keeps_everything_keeps_old_challenge_boards_and_flags_look_alike_names(make_app, empty_database_url):
    module = migration()
    assert module.revision == "0009"
    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.upgrade(alembic_config(connection), module.down_revision)
            for n, (name, token) in enumerate(OLD_PLAYERS, 1):
                connection.execute(text(
                    "INSERT INTO players (id, name, skeleton_hash, token_hash, created_at) VALUES (:id, :name, :sk, "
                    ":token, '2025-03-01 12:00:00+00:00')"),
                    {"id": n, "name": name, "sk": f"old-{n}", "token": hash_token(token) if token else None})
            connection.execute(text(
                "INSERT INTO challenges (id, variant, kind, starts_at, ends_at, code, candidate, par, par_line, "
                "prepared_at) VALUES (1, 'forty-thieves', 'daily', '2025-03-01 00:00:00+00:00', "
                "'2025-03-02 00:00:00+00:00', 'FT1-N-AAAAAAB', 0, 90, 'S', '2025-02-28 23:00:00+00:00')"))
            for n, (player, player_id) in enumerate([("leo", 1), ("Ieo", 2), ("ann", 5)]):
                connection.execute(RECORD, {"player": player, "player_id": player_id, "hash": f"h{n}",
                                            "score": 10 + n, "at": f"2025-03-01 1{n}:00:00+00:00"})
            players_before, records_before = old_players(connection), old_records(connection)
        database.upgrade()
        with database.engine.connect() as connection:
            assert old_players(connection) == players_before  # names, tokens, creation times: all kept
            assert old_records(connection) == records_before
            flagged = dict(connection.execute(text(
                "SELECT name, name_review FROM players WHERE name_review IS NOT NULL")).all())
            holders = {row[0] for row in connection.execute(text(
                "SELECT name FROM players WHERE skeleton_hash IS NOT NULL")).all()}
            required = connection.execute(text("SELECT attempts_required FROM challenges")).scalar_one()
        assert set(flagged) == {"Ieo", "biII", "a\u034fnn", "k\u03b1te"}
        assert "reads as 'leo' (player 1)" in flagged["Ieo"] and "reads as 'bill' (player 3)" in flagged["biII"]
        assert "does not show" in flagged["a\u034fnn"] and "mixes scripts" in flagged["k\u03b1te"]
        assert holders == {"leo", "bill", "ann", "a\u034fnn", "k\u03b1te", "Jääskeläinen"}
        assert not required  # a challenge from before: its board keeps counting every record in its window
    finally:
        database.dispose()

    app = make_app(DATABASE_URL=empty_database_url)
    client = app.test_client()
    from api.boards import upkeep

    with app.extensions["api.platform.db"].engine.begin() as connection:
        upkeep.rebuild_all(connection)
    board = client.get("/api/v1/challenges/1/board").get_json()
    assert [e["player"] for e in board["entries"]] == ["ann", "Ieo", "leo"]  # the old records keep their standing
    # tokens still work: the flagged player submits as before
    response = client.post("/api/v1/records", json={"code": "FT1-N-AAAAAAC", "moves": "S"},
                           headers={"Authorization": "Bearer " + OLD_PLAYERS[1][1]})
    assert response.status_code == 201 and response.get_json()["player"] == "Ieo"
    assert client.get("/api/v1/players/Ieo").get_json()["name"] == "Ieo"  # the exact name finds its player
    for look_alike, holder in (("IEO", "leo"), ("Bill", "bill"), ("LEO", "leo")):
        taken = client.post("/api/v1/players", json={"name": look_alike})
        assert taken.status_code == 409 and taken.get_json()["player"] == holder
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
        admin = create_key(session, "admin", True)[1]
    listed = client.get("/api/v1/review/players", headers={"Authorization": f"Bearer {admin}"}).get_json()
    assert [p["name"] for p in listed["items"]] == ["Ieo", "biII", "a\u034fnn", "k\u03b1te"] and listed["next"] is None
    assert client.get("/api/v1/review/players").status_code == 401
    runner = app.test_cli_runner()
    result = runner.invoke(args=["review", "players"])
    assert result.exit_code == 0 and "Ieo" in result.output and "reads as 'leo'" in result.output
    assert runner.invoke(args=["review", "keep-name", "Ieo"]).exit_code == 0
    listed = client.get("/api/v1/review/players", headers={"Authorization": f"Bearer {admin}"}).get_json()
    assert [p["name"] for p in listed["items"]] == ["biII", "a\u034fnn", "k\u03b1te"]

    database = Database(empty_database_url)
    try:
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), module.down_revision)
        with database.engine.connect() as connection:
            assert old_players(connection) == players_before
            assert old_records(connection)[:3] == records_before
    finally:
        database.dispose()
