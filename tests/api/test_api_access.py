"""API keys (``flask --app api keys …``), who may write, and hiding records:
a missing, wrong or revoked key gets 401, a key without the right gets 403,
and neither changes anything."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select, text

from api.platform.models import ApiKey, Record

API = "/api/v1"
CODE = "FT1-N-AAAAAAB"
BODY = {"code": CODE, "player": "ann", "moves": "T7>F S"}


@pytest.fixture
def secured(make_empty_app):
    """An app that requires keys (the default outside development), empty."""
    return make_empty_app(API_KEYS_REQUIRED=True)


def stored(app) -> list[Record]:
    with app.extensions["api.platform.db"].sessions() as session:
        return list(session.scalars(select(Record).order_by(Record.id)))


def new_key(app, name: str, admin: bool = False) -> str:
    result = app.test_cli_runner().invoke(args=["keys", "create", name, *(["--admin"] if admin else [])])
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


# -- the keys command ------------------------------------------------------------

def test_a_key_is_printed_once_and_stored_only_as_its_hash(secured):
    result = secured.test_cli_runner().invoke(args=["keys", "create", "ann-laptop"])
    assert result.exit_code == 0
    token = result.stdout.strip()
    assert result.stdout == token + "\n"  # only the key on stdout: KEY=$(flask --app api keys create …)
    assert token.startswith("svk_") and len(token) >= 40
    assert "not shown again" in result.stderr
    engine = secured.extensions["api.platform.db"].engine
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT * FROM api_keys")).mappings().all()
    [row] = rows
    assert row["key_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in repr(dict(row))  # the key itself is nowhere in the database
    assert (row["name"], bool(row["admin"]), row["revoked_at"]) == ("ann-laptop", False, None)
    assert new_key(secured, "boss", admin=True) != token


def test_keys_are_listed_without_the_keys_and_revoked_by_name(secured):
    runner = secured.test_cli_runner()
    token = new_key(secured, "ann-laptop")
    new_key(secured, "boss", admin=True)
    listing = runner.invoke(args=["keys", "list"]).stdout
    assert "ann-laptop  write" in listing and "boss        admin" in listing
    assert token not in listing and listing.count("active") == 2
    result = runner.invoke(args=["keys", "revoke", "ann-laptop"])
    assert result.exit_code == 0 and "key 'ann-laptop' revoked at" in result.stdout
    assert "revoked 20" in runner.invoke(args=["keys", "list"]).stdout
    assert runner.invoke(args=["keys", "revoke", "ann-laptop"]).exit_code == 0  # again: nothing more to do


@pytest.mark.parametrize("args, message", [
    (["keys", "create", "bad name"], "key name 'bad name'"),
    (["keys", "create", "-x"], "No such option"),
    (["keys", "create", "x" * 65], "key name"),
    (["keys", "revoke", "nobody"], "there is no key named 'nobody'"),
])
def test_key_commands_say_what_is_wrong(secured, args, message):
    result = secured.test_cli_runner().invoke(args=args)
    assert result.exit_code != 0
    assert message in result.output


def test_a_key_name_is_never_reused(secured):
    new_key(secured, "ann-laptop")
    secured.test_cli_runner().invoke(args=["keys", "revoke", "ann-laptop"])
    result = secured.test_cli_runner().invoke(args=["keys", "create", "ann-laptop"])
    assert result.exit_code == 1 and "already a key named 'ann-laptop'" in result.output


def test_keys_list_when_there_are_none(secured):
    assert "no keys" in secured.test_cli_runner().invoke(args=["keys", "list"]).stdout


# -- submitting ------------------------------------------------------------------

def test_a_valid_key_submits_and_the_record_remembers_it(secured, auth):
    token = new_key(secured, "ann-laptop")
    response = secured.test_client().post(f"{API}/records", json=BODY, headers=auth(token))
    assert response.status_code == 201
    assert response.get_json()["submitted_by"] == "ann-laptop"
    assert [r.submitted_by for r in stored(secured)] == ["ann-laptop"]


@pytest.mark.parametrize("headers, error", [
    ({}, None),
    ({"Authorization": ""}, None),
    ({"Authorization": "Bearer svk_notakeyatallnotakeyatallnotakeyatall12345"}, "invalid_token"),
    ({"Authorization": "Bearer"}, "invalid_request"),
    ({"Authorization": "Basic YW5uOnNlY3JldA=="}, "invalid_request"),
    ({"Authorization": "Bearer two words"}, "invalid_token"),
    ({"Authorization": "Bearer " + "x" * 300}, "invalid_token"),
    ({"Authorization": "Bearer caf\u00e9"}, "invalid_token"),
])
def test_a_missing_or_wrong_key_is_401_and_stores_nothing(secured, headers, error):
    new_key(secured, "ann-laptop")
    response = secured.test_client().post(f"{API}/records", json=BODY, headers=headers)
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer realm="solitaire-verifier"')
    assert (f'error="{error}"' in challenge) if error else ("error=" not in challenge)
    problem = response.get_json()
    assert problem["type"].endswith("/unauthorized") and problem["status"] == 401
    assert stored(secured) == []


def test_a_revoked_key_is_401_and_stores_nothing(secured, auth):
    token = new_key(secured, "ann-laptop")
    client = secured.test_client()
    assert client.post(f"{API}/records", json=BODY, headers=auth(token)).status_code == 201
    secured.test_cli_runner().invoke(args=["keys", "revoke", "ann-laptop"])
    response = client.post(f"{API}/records", json={**BODY, "player": "bob"}, headers=auth(token))
    assert response.status_code == 401
    assert "revoked" in response.get_json()["detail"]
    assert [r.player for r in stored(secured)] == ["ann"]


def test_the_key_is_checked_before_the_body_is_read(secured):
    response = secured.test_client().post(f"{API}/records", data="not json", content_type="text/plain")
    assert response.status_code == 401


def test_reading_needs_no_key(secured, auth):
    token = new_key(secured, "ann-laptop")
    client = secured.test_client()
    record = client.post(f"{API}/records", json=BODY, headers=auth(token)).get_json()
    for path in (f"/records/{record['id']}", "/records", "/leaderboard?variant=forty-thieves", f"/deals/{CODE}",
                 "/healthz", "/readyz", "/openapi.yaml"):
        assert client.get(API + path).status_code == 200, path
    assert client.post(f"{API}/verify", json={"code": CODE, "moves": "S"}).status_code == 200


def test_without_required_keys_anyone_submits_but_a_key_sent_is_still_checked(make_empty_app, auth):
    app = make_empty_app(API_KEYS_REQUIRED=False)
    client = app.test_client()
    response = client.post(f"{API}/records", json=BODY)
    assert response.status_code == 201 and response.get_json()["submitted_by"] is None
    assert client.post(f"{API}/records", json={**BODY, "player": "bob"}, headers=auth("svk_wrong")).status_code == 401
    assert [r.player for r in stored(app)] == ["ann"]


def test_keys_are_required_by_default_except_in_debug_mode(make_app):
    app = make_app(API_KEYS_REQUIRED=None)  # as when the variable is not set
    assert app.config["API_KEYS_REQUIRED"] is None
    client = app.test_client()
    assert client.post(f"{API}/records", json=BODY).status_code == 401
    app.debug = True  # flask --app api run --debug
    assert app.test_client().post(f"{API}/records", json={**BODY, "player": "debugger"}).status_code in (200, 201)


@pytest.mark.parametrize("value, expected", [("1", True), ("0", False), ("", None), ("auto", None), (None, None)])
def test_api_keys_required_setting(tmp_path, value, expected):
    from api.platform.config import load_settings

    environ = {} if value is None else {"API_KEYS_REQUIRED": value}
    assert load_settings(str(tmp_path), environ=environ)["API_KEYS_REQUIRED"] is expected


# -- hiding and showing records ----------------------------------------------------

@pytest.fixture
def one_record(secured, auth):
    """``(app, record id, write key, admin key)``."""
    writer, admin = new_key(secured, "ann-laptop"), new_key(secured, "boss", admin=True)
    record = secured.test_client().post(f"{API}/records", json=BODY, headers=auth(writer)).get_json()
    return secured, record["id"], writer, admin


def set_status(client, record_id, headers, status="hidden", reason="the same log was posted by two players"):
    return client.post(f"{API}/records/{record_id}/status", json={"status": status, "reason": reason},
                       headers=headers)


def test_an_admin_hides_a_record_and_the_history_says_who_when_and_why(one_record, auth):
    app, record_id, _, admin = one_record
    client = app.test_client()
    assert [e["player"] for e in client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"]] == [
        "ann"]
    response = set_status(client, record_id, auth(admin), reason="  shared log  ")
    assert response.status_code == 200
    record = response.get_json()
    assert record["status"] == "hidden"
    [change] = record["history"]
    assert (change["status"], change["actor"], change["reason"]) == ("hidden", "boss", "shared log")
    assert change["at"].endswith("+00:00")
    assert client.get(f"{API}/records/{record_id}").get_json() == record  # shown on the record, to anyone
    assert client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"] == []
    assert len(client.get(f"{API}/records").get_json()["items"]) == 0
    assert [r["id"] for r in client.get(f"{API}/records?status=hidden").get_json()["items"]] == [record_id]
    assert len(client.get(f"{API}/records?status=all").get_json()["items"]) == 1

    restored = set_status(client, record_id, auth(admin), status="visible", reason="it was the same player").get_json()
    assert restored["status"] == "visible"
    assert [(c["status"], c["reason"]) for c in restored["history"]] == [
        ("hidden", "shared log"), ("visible", "it was the same player")]
    assert len(client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"]) == 1
    assert len(client.get(f"{API}/records").get_json()["items"]) == 1


def test_setting_the_status_a_record_has_changes_nothing(one_record, auth):
    app, record_id, _, admin = one_record
    record = set_status(app.test_client(), record_id, auth(admin), status="visible").get_json()
    assert record["status"] == "visible" and record["history"] == []


@pytest.mark.parametrize("who, status", [("nobody", 401), ("wrong", 401), ("writer", 403), ("revoked admin", 401)])
def test_only_a_valid_admin_key_changes_a_status_and_others_change_nothing(one_record, auth, who, status):
    app, record_id, writer, admin = one_record
    if who == "revoked admin":
        app.test_cli_runner().invoke(args=["keys", "revoke", "boss"])
    headers = {"nobody": {}, "wrong": auth("svk_" + "x" * 43), "writer": auth(writer),
               "revoked admin": auth(admin)}[who]
    response = set_status(app.test_client(), record_id, headers)
    assert response.status_code == status
    assert response.get_json()["type"].endswith("/forbidden" if status == 403 else "/unauthorized")
    [record] = stored(app)
    assert (record.status, record.history) == ("visible", [])


def test_the_status_endpoint_needs_an_admin_key_even_without_required_keys(make_empty_app):
    app = make_empty_app(API_KEYS_REQUIRED=False)
    record = app.test_client().post(f"{API}/records", json=BODY).get_json()
    assert set_status(app.test_client(), record["id"], {}).status_code == 401


@pytest.mark.parametrize("body, field", [
    ({"status": "deleted", "reason": "x"}, "status"),
    ({"status": "hidden"}, "reason"),
    ({"status": "hidden", "reason": "   "}, "reason"),
    ({"status": "hidden", "reason": "x" * 501}, "reason"),
    ({"status": "hidden", "reason": "a\x00b"}, "reason"),
    ({"status": "hidden", "reason": "x", "by": "me"}, "by"),
])
def test_a_wrong_status_request_is_422_and_changes_nothing(one_record, auth, body, field):
    app, record_id, _, admin = one_record
    response = app.test_client().post(f"{API}/records/{record_id}/status", json=body, headers=auth(admin))
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]
    assert stored(app)[0].status == "visible"


def test_the_status_of_an_unknown_record_is_404(one_record, auth):
    app, record_id, _, admin = one_record
    assert set_status(app.test_client(), record_id + 1, auth(admin)).status_code == 404
    assert set_status(app.test_client(), 0, auth(admin)).status_code == 404


def test_a_bad_status_filter_is_422(client):
    response = client.get(f"{API}/records?status=deleted")
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == ["status"]


def test_keys_in_the_database_are_what_the_model_says(secured):
    new_key(secured, "boss", admin=True)
    with secured.extensions["api.platform.db"].sessions() as session:
        [key] = session.scalars(select(ApiKey)).all()
    assert key.admin and not key.revoked and key.created_at.utcoffset().total_seconds() == 0
