"""``flask --app api records export|import``: a backup holds every row of every table a
restore needs (derived from the models' metadata), and a round trip into an empty
database gives every row back, column for column: players keep their tokens, keys
keep working. Files of one record a line, made before, still import."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from api.challenges.windows import derivation_key
from api.platform.auth import create_key, revoke_key
from api.platform.models import (
    Base,
    Challenge,
    ChallengeAttempt,
    Hint,
    Player,
    Record,
    Solvability,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookMessage,
)
from api.records import backup
from tests.conftest import ROOT
from tests.play import play_greedy

API = "/api/v1"
FT = "FT1-N-AAAAAAB"
YU = "YU1-C-AAAAAAB"
#: a file written by `records export` before backups held every table (one record a line)
V1_FILE = Path(__file__).with_name("data") / "backup-v1.jsonl"
MOMENT = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


@pytest.fixture
def filled(make_empty_app, make_key, auth, legal_log):
    """An app with a row in every table a backup holds, every nullable column filled somewhere:
    records with claims, client fields, times, a copy flagged for review, hidden and restored
    ones; registered players; keys of every kind (a revoked one too); a hint, a challenge, an answer."""
    app = make_empty_app(API_KEYS_REQUIRED=True)
    writer, admin = auth(make_key("ann-laptop")), auth(make_key("boss", admin=True))
    client = app.test_client()
    ids = []
    for player, code, length, extra in (
            ("ann", FT, 5, {"claimed": {"score": 40, "moves": 5}, "elapsed_ms": 93000, "client": "web/1.0"}),
            ("bob", FT, 9, {"claimed": {"won": False}}),
            ("Zoë Ångström", YU, 12, {}),
            ("李雷", YU, 3, {"elapsed_ms": 0})):
        body = {"code": code, "player": player, "moves": legal_log(code, length), **extra}
        response = client.post(f"{API}/records", json=body, headers=writer)
        assert response.status_code == 201, response.get_data(as_text=True)
        ids.append(response.get_json()["id"])
    for record_id, changes in ((ids[1], ["hidden"]), (ids[2], ["hidden", "visible"])):
        for status in changes:
            response = client.post(f"{API}/records/{record_id}/status", headers=admin,
                                   json={"status": status, "reason": f"check {status} \u2713"})
            assert response.status_code == 200
    tokens = {}
    for name in ("zoe", "Åsa"):
        response = client.post(f"{API}/players", json={"name": name})
        assert response.status_code == 201
        tokens[name] = response.get_json()["token"]
    # (a game long enough that sending its very log again is a copy: min_positions settled positions)
    moves = play_greedy(YU, 40)
    own = {"code": YU, "moves": moves, "times": [900 * (n + 1) + 37 * (n % 7) for n in range(len(moves))]}
    assert client.post(f"{API}/records", json=own, headers=auth(tokens["zoe"])).status_code == 201
    copied = client.post(f"{API}/records", json={**own, "times": None}, headers=auth(tokens["Åsa"]))
    assert copied.status_code == 201 and copied.get_json()["copy_of"] is not None  # a copy, with its flag
    with app.extensions["api.platform.db"].sessions() as session:
        server = create_key(session, "game-server", vouch=True)[1]
    vouched = {"code": YU, "player": "Åsa", "moves": legal_log(YU, 6, 2)}  # (a game of its own: no copy)
    response = client.post(f"{API}/records", json=vouched, headers=auth(server))
    assert response.status_code == 201 and response.get_json()["vouched_by"] == "game-server"
    with app.extensions["api.platform.db"].sessions() as session:
        create_key(session, "old-client")
        revoke_key(session, "old-client")
        zoe = session.scalars(select(Player).where(Player.name == "zoe")).one()
        session.add(Hint(player_id=zoe.id, code=FT, at=MOMENT, actions=3, position="FT1-N 6D7D/… 30 3 0", action="S",
                         reached=-1234567890123))
        challenge = Challenge(variant="forty-thieves", kind="daily", starts_at=MOMENT, ends_at=MOMENT + timedelta(1),
                              code=FT, candidate=2, par=88, par_line="T7:AS>F1 S", prepared_at=MOMENT)
        session.add(challenge)
        session.flush()
        derivation_key(session, None)  # the key the service generates for the challenges' candidates
        attempt = ChallengeAttempt(challenge_id=challenge.id, player_id=zoe.id, started_at=MOMENT)
        session.add(attempt)
        session.flush()
        session.execute(update(Record).where(Record.id == ids[0]).values(attempt_id=attempt.id,
                                                                         server_elapsed_ms=93500))
        zoe.name_review = "reads as an older player's name"
        session.add(Solvability(code=FT, variant="forty-thieves", budget="2s+5000n", budget_seconds=2.5,
                                budget_nodes=5000, engine_version="1.0.0", rules_version=1, status="winnable",
                                reason="a winning line", solution="T7:AS>F1", solution_actions=1, verified=True,
                                statistics={"nodes": 12}, coverage={"moves": ["S"]}, attempts=1,
                                requested_at=MOMENT, queued_at=MOMENT, solved_at=MOMENT))
        endpoint = WebhookEndpoint(url="https://games.example.com/hooks", events=["record.created"],
                                   secret="whsec_" + "A" * 43 + "=", previous_secret="whsec_" + "B" * 43 + "=",
                                   previous_expires_at=MOMENT, created_by="boss", created_at=MOMENT,
                                   disabled_at=MOMENT, disabled_reason="the receiver answered 410 Gone")
        session.add(endpoint)
        session.add(WebhookMessage(id="msg_" + "0" * 32, type="challenge.closed", key="challenge.closed:1",
                                   payload='{"type":"challenge.closed"}', created_at=MOMENT))
        session.flush()
        session.add(WebhookDelivery(message_id="msg_" + "0" * 32, endpoint_id=endpoint.id, status="pending",
                                    next_attempt_at=MOMENT, claimed_until=MOMENT, created_at=MOMENT,
                                    attempts=[{"at": "2026-01-01T00:00:00Z", "status_code": 500, "error": None,
                                               "ms": 12}]))
        session.commit()
    app.tokens = tokens
    return app


def export(app, *args):
    result = app.test_cli_runner().invoke(args=["records", "export", *args])
    assert result.exit_code == 0, result.output
    return result


def import_(app, *args, input=None):
    return app.test_cli_runner().invoke(args=["records", "import", *args], input=input)


def api_records(app):
    client = app.test_client()
    return client.get(f"{API}/records?status=all&page_size=100").get_json()["items"]


def every_row(app) -> dict[str, list[dict]]:
    """Every row of every table the backup holds, column by column, in primary-key order."""
    out = {}
    with app.extensions["api.platform.db"].engine.connect() as connection:
        for table in backup.backed_up():
            query = select(table).order_by(*table.primary_key.columns)
            out[table.name] = [dict(row) for row in connection.execute(query).mappings()]
    return out


def test_a_backup_is_a_header_then_a_line_per_row_of_every_table(filled):
    lines = [json.loads(line) for line in export(filled).stdout.splitlines()]
    head, rows = lines[0], lines[1:]
    assert head["format"] == backup.FORMAT and head["version"] == backup.VERSION
    assert set(head["tables"]) == {t.name for t in Base.metadata.sorted_tables} - set(backup.EXCLUDED)
    for table in Base.metadata.sorted_tables:  # every column of every table, unless the table is left out
        if table.name not in backup.EXCLUDED:
            assert head["tables"][table.name] == [column.name for column in table.columns]
    order = [row["table"] for row in rows]
    assert order == sorted(order, key=list(head["tables"]).index)  # parents before the tables that refer to them
    players = {row["row"]["name"]: row["row"] for row in rows if row["table"] == "players"}
    assert players["zoe"]["token_hash"] and players["zoe"]["skeleton_hash"]
    keys = {row["row"]["name"]: row["row"] for row in rows if row["table"] == "api_keys"}
    assert keys["game-server"]["vouch"] and keys["old-client"]["revoked_at"] and keys["boss"]["admin"]
    assert "李雷" in export(filled).stdout  # written as UTF-8, not escaped


@pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)  # into either, from either
def test_every_row_of_every_table_survives_a_round_trip(filled, make_app, empty_database_url, tmp_path, auth):
    before = every_row(filled)
    empty = [name for name, rows in before.items() if not rows]
    assert not empty, f"give the tables {empty} a row in the `filled` fixture, so that the round trip covers them"
    nulls = {f"{name}.{column}" for name, rows in before.items() for column in rows[0]
             if all(row[column] is None for row in rows)}
    assert not nulls, f"fill the columns {nulls} in the `filled` fixture, so that the round trip covers them"
    path = tmp_path / "backup.jsonl"
    assert "exported 7 records (" in export(filled, str(path)).stderr
    restored = make_app(DATABASE_URL=empty_database_url, API_KEYS_REQUIRED=True)
    result = import_(restored, str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("imported 7 records (ids kept) from a backup: api_keys 4; ")
    assert every_row(restored) == before  # every column of every row, equal
    assert api_records(restored) == api_records(filled)
    for board in ("/leaderboard?variant=yukon-classic", f"/leaderboard?variant=forty-thieves&code={FT}",
                  "/players/zoe/stats"):  # the derived tables were rebuilt
        assert restored.test_client().get(API + board).get_json() == filled.test_client().get(API + board).get_json()
    client = restored.test_client()
    # a player's token still works, and nobody can take the name
    response = client.post(f"{API}/records", json={"code": FT, "moves": "S"}, headers=auth(filled.tokens["zoe"]))
    assert response.status_code == 201, response.get_data(as_text=True)
    assert response.get_json()["id"] == max(r["id"] for r in api_records(filled)) + 1  # sequences moved on
    assert client.post(f"{API}/players", json={"name": "zoe"}).status_code == 409
    copies = [r for r in api_records(restored) if r["copy_of"]]  # the copy: flagged, unranked
    assert len(copies) == 1 and copies[0]["flags"] and not copies[0]["ranked"]


def test_restored_keys_work_as_before(filled, make_app, empty_database_url, tmp_path, make_key, auth):
    token = make_key("before-backup", admin=True)
    path = tmp_path / "backup.jsonl"
    export(filled, str(path))
    restored = make_app(DATABASE_URL=empty_database_url, API_KEYS_REQUIRED=True)
    assert import_(restored, str(path)).exit_code == 0
    assert restored.test_client().get(f"{API}/review", headers=auth(token)).status_code == 200
    listing = restored.test_cli_runner().invoke(args=["keys", "list"]).stdout
    assert re.search(r"game-server\s+write\s+vouch", listing), listing
    assert re.search(r"old-client .* revoked", listing), listing


def test_a_backup_restores_only_into_an_empty_database(filled, tmp_path):
    path = tmp_path / "backup.jsonl"
    export(filled, str(path))
    before = every_row(filled)
    result = import_(filled, str(path))
    assert result.exit_code == 1
    assert "the database is not empty (table api_keys has rows)" in result.output
    assert "nothing was imported" in result.output
    assert every_row(filled) == before


def test_the_operators_guide_lists_exactly_what_a_backup_holds():
    """docs/operations.md has the list made from the models: a column or a table added to a
    model (and so to every backup) without the guide saying so fails here. Paste
    ``python -m tools.backup_contents`` between the markers."""
    guide = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- backup-contents[^>]*-->\n(.*?)\n<!-- /backup-contents -->", guide, re.S)
    assert match, "docs/operations.md has no backup-contents markers"
    assert match.group(1) == backup.contents_markdown()


def test_every_column_of_every_model_has_a_backup_form():
    for table in Base.metadata.sorted_tables:
        for column in table.columns:
            assert backup._kind(column) in ("time", "bytes", "json", "bool", "int", "float", "text")


# -- a backup's lines, checked ------------------------------------------------------

def backup_lines(filled) -> list[dict]:
    return [json.loads(line) for line in export(filled).stdout.splitlines()]


def first_row(lines, table):
    return next(i for i, line in enumerate(lines) if line.get("table") == table)


def _set(lines, table, **values):
    index = first_row(lines, table)
    lines[index] = {**lines[index], "row": {**lines[index]["row"], **values}}
    return lines


@pytest.mark.parametrize("change, words", [
    (lambda ls: [{**ls[0], "version": 9}] + ls[1:], "line 1: format 'solitaire-verifier-backup' version 9"),
    (lambda ls: [{**ls[0], "tables": {**ls[0]["tables"], "gadgets": ["id"]}}] + ls[1:],
     "line 1: tables: this version keeps no table 'gadgets'"),
    (lambda ls: [{**ls[0], "tables": {**ls[0]["tables"], "hints": ls[0]["tables"]["hints"] + ["colour"]}}] + ls[1:],
     "line 1: tables.hints: columns this version does not know: ['colour']"),
    (lambda ls: _set(ls, "records", score="30"), "records.score: expected a whole number"),
    (lambda ls: _set(ls, "records", won=None), "records.won: may not be null"),
    (lambda ls: _set(ls, "records", received_at="2025-01-01T00:00:00"),
     "records.received_at: expected an ISO 8601 time with its zone"),
    (lambda ls: _set(ls, "records", log_hash="0" * 64), "records.log_hash: is not the SHA-256 of canonical"),
    (lambda ls: _set(ls, "records", player="x" * 65), "records.player: expected text of at most 64 characters"),
    (lambda ls: _set(ls, "records", times="not base64!"), "records.times:"),
    (lambda ls: _set(ls, "players", token_hash=7), "players.token_hash: expected text"),
    (lambda ls: ls + [{"table": "records", "row": {"id": 1}}], "the row's columns differ from the header's"),
    (lambda ls: ls + [{"table": "board_entries", "row": {}}], "with one of the header's tables"),
    (lambda ls: _set(ls, "record_status", record_id=999), "record_status: the database refused the rows"),
])
def test_a_bad_backup_line_is_named_and_nothing_is_imported(filled, make_app, empty_database_url, change, words):
    lines = change(backup_lines(filled))
    target = make_app(DATABASE_URL=empty_database_url)
    result = import_(target, "-", input="".join(json.dumps(line) + "\n" for line in lines))
    assert result.exit_code == 1, result.output
    assert words in result.output and "nothing was imported" in result.output
    assert not any(every_row(target).values())


def test_a_column_added_since_the_backup_takes_its_default(filled, make_app, empty_database_url):
    """A backup made before a column existed: the column's default (here ``api_keys.vouch``: false)."""
    lines = backup_lines(filled)
    lines[0]["tables"]["api_keys"].remove("vouch")
    for line in lines[1:]:
        if line["table"] == "api_keys":
            del line["row"]["vouch"]
    target = make_app(DATABASE_URL=empty_database_url)
    result = import_(target, "-", input="".join(json.dumps(line) + "\n" for line in lines))
    assert result.exit_code == 0, result.output
    assert {row["vouch"] for row in every_row(target)["api_keys"]} == {False}


def test_a_backup_made_before_earned_points_computes_them_from_each_log(client, app, records, make_app,
                                                                        empty_database_url):
    """``records.earned`` came with migration 0017: a backup made before it restores each record's
    earned points from its log, and its boards rank by them."""
    from tests.api.test_api_board_loops import with_loops
    from tests.engine.engine_helpers import find_win

    win = [str(action) for action in find_win("YU1-C-AAAAAAB")]
    records.create(player="honest", won=True, score=625, moves=len(win) + 10)
    response = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAB", "player": "cheat",
                                                    "moves": " ".join(with_loops("YU1-C-AAAAAAB", win, 3))})
    assert response.status_code == 201, response.get_data(as_text=True)
    lines = backup_lines(app)
    lines[0]["tables"]["records"].remove("earned")
    for line in lines[1:]:
        if line["table"] == "records":
            del line["row"]["earned"]
    target = make_app(DATABASE_URL=empty_database_url)
    result = import_(target, "-", input="".join(json.dumps(line) + "\n" for line in lines))
    assert result.exit_code == 0, result.output
    assert sorted((row["player"], row["score"], row["earned"]) for row in every_row(target)["records"]) == [
        ("cheat", 655, 625), ("honest", 625, 625)]
    entries = target.test_client().get("/api/v1/leaderboard?variant=yukon-classic").get_json()["entries"]
    assert [(e["rank"], e["player"]) for e in entries] == [(1, "honest"), (2, "cheat")]


# -- files of one record a line (the format before) ---------------------------------

def v1_lines() -> list[str]:
    return V1_FILE.read_text(encoding="utf-8").splitlines()


def test_a_file_of_the_previous_format_still_restores_what_it_has(make_app, empty_database_url):
    target = make_app(DATABASE_URL=empty_database_url)
    result = import_(target, str(V1_FILE))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["imported 5 records (ids kept); skipped 0 duplicates"]
    stored = {r["id"]: r for r in api_records(target)}
    for line in v1_lines():  # every field the file has, as the API shows it
        record = json.loads(line)
        del record["log_hash"]
        shown = stored[record["id"]]
        assert {key: shown[key] for key in record} == record
        assert (shown["attempt"], shown["server_elapsed_ms"]) == (None, None)  # (fields the file predates)
    rows = every_row(target)
    assert sorted(p["name"] for p in rows["players"]) == sorted(["ann", "bob", "Zoë Ångström", "李雷", "zoe"])
    assert all(p["token_hash"] is None for p in rows["players"])  # the old format had no players: no tokens
    assert len(rows["record_status"]) == 3


def test_importing_an_old_file_into_a_database_with_records_skips_and_reports_duplicates(make_app,
                                                                                        empty_database_url):
    lines = v1_lines()
    target = make_app(DATABASE_URL=empty_database_url, API_KEYS_REQUIRED=False)
    client = target.test_client()
    # the target already has ann's game (as its record 2) and one of its own
    ann = json.loads(lines[0])
    assert client.post(f"{API}/records", json={"code": FT, "player": "carol", "moves": "S"}).status_code == 201
    assert client.post(f"{API}/records", json={"code": ann["code"], "player": "ann",
                                               "moves": ann["canonical"]}).status_code == 201
    result = import_(target, "-", input="\n".join(lines + [lines[3]]) + "\n")  # and line 6 repeats line 4
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out[0] == "imported 4 records (new ids: the database was not empty); skipped 2 duplicates"
    assert out[1:] == [f"  skipped line 1: ann {FT}: already stored as record 2",
                       f"  skipped line 6: 李雷 {YU}: already stored as an earlier line of the file"]
    records = api_records(target)
    assert sorted(r["player"] for r in records) == sorted(["carol", "ann", "bob", "Zoë Ångström", "李雷", "zoe"])
    imported = {r["player"]: r for r in records}
    assert imported["bob"]["status"] == "hidden" and len(imported["Zoë Ångström"]["history"]) == 2
    assert imported["zoe"]["times"] == [1800, 4100, 5000, 7000]


@pytest.mark.parametrize("change, words", [
    (lambda r: "not json", "line 2: not JSON"),
    (lambda r: [r], "line 2: expected a JSON object"),
    (lambda r: {**r, "score": "30"}, "line 2: score: Not a valid integer"),
    (lambda r: {**r, "extra": 1}, "line 2: extra: Unknown field"),
    (lambda r: {k: v for k, v in r.items() if k != "history"}, "line 2: history: Missing data"),
    (lambda r: {**r, "log_hash": "0" * 64}, "line 2: log_hash: is not the SHA-256 of canonical"),
    (lambda r: {**r, "code": r["code"].lower()}, "line 2: code: 'ft1-n-aaaaaab' is not in canonical form"),
    (lambda r: {**r, "code": "FT1-N-AAAAAA"}, "line 2: code: the deal number has 7 characters"),
    (lambda r: {**r, "variant": "yukon-classic"}, "line 2: variant: 'yukon-classic' does not match"),
    (lambda r: {**r, "status": "hidden"}, "line 2: status: 'hidden' is not the last status of the history"),
    (lambda r: {**r, "received_at": "2025-01-01T00:00:00"}, "line 2: received_at: Not a valid aware datetime"),
])
def test_a_bad_line_of_an_old_file_is_named_and_nothing_is_imported(app, change, words):
    good = json.loads(v1_lines()[0])
    bad = change(dict(good))
    text = json.dumps({**good, "id": 99, "player": "first"}) + "\n" + (bad if isinstance(bad, str) else json.dumps(bad))
    result = import_(app, "-", input=text + "\n")  # line 1 alone would be imported
    assert result.exit_code == 1
    assert words in result.output and "nothing was imported" in result.output
    assert api_records(app) == []


def test_two_records_with_one_id_are_refused(app):
    good = json.loads(v1_lines()[0])
    text = json.dumps(good) + "\n" + json.dumps({**good, "player": "someone else"}) + "\n"
    result = import_(app, "-", input=text)
    assert result.exit_code == 1 and f"line 2: id: {good['id']} is already the id of line 1" in result.output
    assert api_records(app) == []


def test_long_runs_show_a_progress_bar(filled, tmp_path):
    result = export(filled, str(tmp_path / "out.jsonl"), "--progress")
    assert "exporting" in result.stderr
    assert "exporting" not in export(filled, str(tmp_path / "out.jsonl")).stderr  # a few rows: no bar by default


def test_an_empty_database_exports_its_header_only(app):
    result = export(app)
    assert [json.loads(line)["format"] for line in result.stdout.splitlines()] == [backup.FORMAT]
    assert "exported 0 records" in result.stderr
