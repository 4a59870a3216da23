"""``flask --app api records export|import``: JSON Lines with every record and its
status history; a round trip into an empty database loses nothing, an import
into a database with records skips and reports the ones it has."""

from __future__ import annotations

import json

import pytest

API = "/api/v1"
FT = "FT1-N-AAAAAAB"
YU = "YU1-C-AAAAAAB"


@pytest.fixture
def filled(make_empty_app, make_key, auth, legal_log):
    """An app with records of every kind: claims, client fields, keys, a hidden one, a restored one."""
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


def test_the_export_is_one_json_object_per_record_with_its_history(filled):
    lines = export(filled).stdout.splitlines()
    assert len(lines) == 4
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    by_player = {r["player"]: r for r in records}
    assert by_player["ann"]["claimed"] == {"score": 40, "moves": 5} and by_player["ann"]["client"] == "web/1.0"
    assert by_player["ann"]["submitted_by"] == "ann-laptop"
    assert [(c["status"], c["actor"]) for c in by_player["Zoë Ångström"]["history"]] == [
        ("hidden", "boss"), ("visible", "boss")]
    assert by_player["bob"]["status"] == "hidden"
    assert "李雷" in lines[3]  # written as UTF-8, not escaped
    for record in records:
        api = filled.test_client().get(f"{API}/records/{record['id']}").get_json()
        assert {k: v for k, v in record.items() if k != "log_hash"} == api  # the same fields the API shows


def test_a_round_trip_into_an_empty_database_loses_nothing(filled, make_app, empty_database_url, tmp_path):
    backup = tmp_path / "records.jsonl"
    result = export(filled, str(backup))
    assert "exported 4 records" in result.stderr
    restored = make_app(DATABASE_URL=empty_database_url, API_KEYS_REQUIRED=False)
    result = import_(restored, str(backup))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["imported 4 records (ids kept); skipped 0 duplicates"]
    assert export(restored).stdout == backup.read_text(encoding="utf-8")  # byte for byte
    assert api_records(restored) == api_records(filled)
    board = "/leaderboard?variant=yukon-classic"
    assert restored.test_client().get(API + board).get_json() == filled.test_client().get(API + board).get_json()
    # new submissions carry on after the imported ids (PostgreSQL's sequence was moved past them)
    response = restored.test_client().post(f"{API}/records", json={"code": FT, "player": "new", "moves": "S"})
    assert response.status_code == 201
    assert response.get_json()["id"] == max(r["id"] for r in api_records(filled)) + 1


def test_importing_into_a_database_with_records_skips_and_reports_duplicates(filled, make_app, empty_database_url,
                                                                            tmp_path):
    backup = tmp_path / "records.jsonl"
    export(filled, str(backup))
    lines = backup.read_text(encoding="utf-8").splitlines()
    target = make_app(DATABASE_URL=empty_database_url, API_KEYS_REQUIRED=False)
    client = target.test_client()
    # the target already has ann's game (as its record 1) and one of its own
    ann = json.loads(lines[0])
    assert client.post(f"{API}/records", json={"code": FT, "player": "carol", "moves": "S"}).status_code == 201
    assert client.post(f"{API}/records", json={"code": ann["code"], "player": "ann",
                                               "moves": ann["canonical"]}).status_code == 201
    result = import_(target, "-", input="\n".join(lines + [lines[3]]) + "\n")  # and line 5 repeats line 4
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out[0] == "imported 3 records (new ids: the database was not empty); skipped 2 duplicates"
    assert out[1:] == [f"  skipped line 1: ann {FT}: already stored as record 2",
                       f"  skipped line 5: 李雷 {YU}: already stored as an earlier line of the file"]
    records = api_records(target)
    assert sorted(r["player"] for r in records) == sorted(["carol", "ann", "bob", "Zoë Ångström", "李雷"])
    assert len({r["id"] for r in records}) == 5
    imported = {r["player"]: r for r in records}
    assert imported["bob"]["status"] == "hidden" and len(imported["Zoë Ångström"]["history"]) == 2
    assert imported["bob"]["id"] not in {json.loads(line)["id"] for line in lines} - {3, 4, 5}


def valid_line(filled) -> dict:
    return json.loads(export(filled).stdout.splitlines()[0])


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
def test_a_bad_line_is_named_and_nothing_is_imported(filled, change, words):
    good = valid_line(filled)
    before = api_records(filled)
    bad = change(dict(good))
    text = json.dumps({**good, "id": 99, "player": "first"}) + "\n" + (bad if isinstance(bad, str) else json.dumps(bad))
    result = import_(filled, "-", input=text + "\n")  # line 1 alone would be imported
    assert result.exit_code == 1
    assert words in result.output and "nothing was imported" in result.output
    assert api_records(filled) == before


def test_two_records_with_one_id_are_refused(filled, make_app, empty_database_url):
    good = valid_line(filled)
    target = make_app(DATABASE_URL=empty_database_url)
    text = json.dumps(good) + "\n" + json.dumps({**good, "player": "someone else"}) + "\n"
    result = import_(target, "-", input=text)
    assert result.exit_code == 1 and f"line 2: id: {good['id']} is already the id of line 1" in result.output
    assert api_records(target) == []


def test_long_runs_show_a_progress_bar(filled, tmp_path):
    result = export(filled, str(tmp_path / "out.jsonl"), "--progress")
    assert "exporting" in result.stderr
    assert "exporting" not in export(filled, str(tmp_path / "out.jsonl")).stderr  # 4 records: no bar by default


def test_an_empty_database_exports_nothing(app):
    result = export(app)
    assert result.stdout == "" and "exported 0 records" in result.stderr
