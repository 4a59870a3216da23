"""``FAIRPLAY_JUDGE=worker``: a record is stored before its judgement (unranked, flagged
``pending``, off the boards), the web process asks the worker tier, and the worker's task
judges it as its submission would have; the sweep judges those whose ask was lost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

API = "/api/v1"
FT = "FT1-N-AAAAAAB"


class CaughtAsks:
    """The web process's asks to the worker tier (``api.tasks.Asks``), kept instead of sent."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, bool, bool]] = []

    def add(self, code: str, solve: bool, pending_only: bool = False) -> None:
        self.asked.append((code, solve, pending_only))


@pytest.fixture
def later(app, monkeypatch):
    """The app judging on the worker tier: a broker set (never reached: the asks are caught)."""
    asks = CaughtAsks()
    monkeypatch.setitem(app.config, "FAIRPLAY_JUDGE", "worker")
    monkeypatch.setitem(app.config, "CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setitem(app.extensions, "api.asks", asks)
    return asks


def judge(app, code):
    """What a worker runs for the ask of a new record (``api.reevaluate_deal``, pending only)."""
    from api import tasks

    with app.app_context():
        return tasks.reevaluate_deal(code, False, True)


def token_of(client, name):
    response = client.post(f"{API}/players", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def submit(client, name, **body):
    return client.post(f"{API}/records", json={"code": FT, **body},
                       headers={"Authorization": f"Bearer {token_of(client, name)}"})


def board_players(client):
    return [entry["player"] for entry in client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"]]


def test_a_record_waits_unranked_off_the_boards_until_the_worker_judges_it(app, client, later, legal_log):
    log = legal_log(FT, 12)
    response = submit(client, "ann", moves=log)
    assert response.status_code == 201
    stored = response.get_json()
    assert stored["ranked"] is False and stored["status"] == "visible"
    assert [found["flag"] for found in stored["flags"]] == ["pending"]
    assert later.asked == [(FT, False, True)]  # the deal's judgement asked for, records of it only
    assert board_players(client) == []

    assert judge(app, FT)["changed"] == [stored["id"]]
    judged = client.get(f"{API}/records/{stored['id']}").get_json()
    assert judged["ranked"] is True and judged["flags"] == [] and judged["status"] == "visible"
    assert board_players(client) == ["ann"]
    assert judge(app, FT)["changed"] == []  # judged once


def test_near_equal_games_are_judged_in_the_order_they_were_stored_as_at_submission(app, client, later, legal_log,
                                                                                     monkeypatch):
    log = legal_log(FT, 12)
    waiting = [submit(client, name, moves=log).get_json() for name in ("ann", "bob", "cat")]
    assert all(record["ranked"] is False for record in waiting)
    judge(app, FT)
    judged = [client.get(f"{API}/records/{record['id']}").get_json() for record in waiting]
    # the same games judged at submission, on another deal's number: the same verdicts
    monkeypatch.setitem(app.config, "FAIRPLAY_JUDGE", "submission")
    other = "FT1-N-AAAAAAC"
    at_once = [client.post(f"{API}/records", json={"code": other, "moves": legal_log(other, 12)},
                           headers={"Authorization": f"Bearer {token_of(client, name + '2')}"}).get_json()
               for name in ("ann", "bob", "cat")]
    assert [record["ranked"] for record in judged] == [record["ranked"] for record in at_once] == [True, False, False]
    assert [record["copy_of"] for record in judged] == [None, waiting[0]["id"], waiting[0]["id"]]
    assert [record["copy_of"] for record in at_once] == [None, at_once[0]["id"], at_once[0]["id"]]
    for one, other_one in zip(judged, at_once, strict=True):
        assert [found["flag"] for found in one["flags"]] == [found["flag"] for found in other_one["flags"]]
        assert one["status"] == other_one["status"] == "visible"
    assert sorted(board_players(client)) == ["ann", "ann2"]


def test_the_times_judged_at_submission_stay_with_the_judgement(app, client, later, legal_log):
    log = legal_log(FT, 30)
    times = [60 * (i + 1) for i in range(30)]  # one action every 60 ms
    stored = submit(client, "bot", moves=log, times=times, elapsed_ms=1900).get_json()
    assert [found["flag"] for found in stored["flags"]] == ["timing", "pending"] and stored["status"] == "review"
    judge(app, FT)
    judged = client.get(f"{API}/records/{stored['id']}").get_json()
    assert [found["flag"] for found in judged["flags"]] == ["timing"]
    assert judged["ranked"] is False and judged["status"] == "review"


def test_the_sweep_judges_the_records_whose_ask_was_lost(app, client, later, legal_log):
    from api import tasks
    from api.platform.db import session
    from api.platform.models import Record

    old = submit(client, "ann", moves=legal_log(FT, 12)).get_json()
    new = client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAD", "moves": legal_log("FT1-N-AAAAAAD", 12)},
                      headers={"Authorization": f"Bearer {token_of(client, 'bob')}"}).get_json()
    with app.app_context():
        long_ago = datetime.now(UTC) - timedelta(seconds=tasks.JUDGE_SWEEP_AFTER + 5)
        session().execute(update(Record).where(Record.id == old["id"]).values(received_at=long_ago))
        session().commit()
        assert tasks.judge_sweep() == {"judged": [old["id"]]}  # the one received within the last minute waits
        ranked = dict(session().execute(select(Record.id, Record.ranked)).all())
    assert ranked == {old["id"]: True, new["id"]: False}


def test_a_claimed_name_is_settled_by_the_statement_that_stores_the_record(app, client, later, legal_log,
                                                                         count_records):
    """Judged later, a record under a claimed name reads nothing before its store: the store's
    statement finds the player the name reads as, makes a new one, or refuses a registered one."""
    from api.platform.auth import create_key
    from api.platform.db import session
    from api.platform.models import DealVersion, Player

    def send(code, name, key=None, **body):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return client.post(f"{API}/records", json={"code": code, "player": name, "moves": legal_log(code, 8), **body},
                           headers=headers)

    first = send(FT, "dora")
    assert first.status_code == 201 and first.get_json()["player"] == "dora"
    again = send("FT1-N-AAAAAAD", "ＤＯＲＡ")  # (full-width: reads as dora, a tokenless player)
    assert again.status_code == 201 and again.get_json()["player"] == "dora"
    token_of(client, "ann")
    refused = send("FT1-N-AAAAAAE", "ANN")  # a registered player's name, and no key to vouch
    assert refused.status_code == 403 and refused.get_json()["type"].endswith("/wrong-player")
    with app.extensions["api.platform.db"].sessions() as db:
        vouching = create_key(db, "game-server", vouch=True)[1]
    vouched = send("FT1-N-AAAAAAF", "ann", vouching)
    assert vouched.status_code == 201
    assert (vouched.get_json()["player"], vouched.get_json()["vouched_by"]) == ("ann", "game-server")
    assert count_records() == 3
    with app.app_context():
        assert session().scalars(select(Player.name).order_by(Player.name)).all() == ["ann", "dora"]
        # the refused record changed nothing: its deal has no version
        assert session().scalars(select(DealVersion.code).order_by(DealVersion.code)).all() == [
            FT, "FT1-N-AAAAAAD", "FT1-N-AAAAAAF"]
    assert judge(app, "FT1-N-AAAAAAF")["changed"] == [vouched.get_json()["id"]]


def test_a_new_name_taken_meanwhile_is_stored_again_as_that_player(app, later, legal_log, monkeypatch):
    """PostgreSQL: the store's statement found nobody under the claimed name, but another
    submission made the name's player before it could (here: its lookup misses, once, a
    player already made). Nothing is stored; the submission is stored again and reads the
    name as that player."""
    from api.platform.db import session
    from api.platform.models import Player, Record
    from api.records import store as records

    with app.app_context():
        if session().get_bind().dialect.name != "postgresql":
            pytest.skip("SQLite holds its write lock from the read: no other store comes between")
    client = app.test_client()
    first = client.post(f"{API}/records", json={"code": FT, "player": "zed", "moves": legal_log(FT, 8)})
    assert first.status_code == 201
    lookups = []

    def first_misses(name):
        lookups.append(name)
        found = real(name)
        return {"nfc": "nobody", "skeleton": "0" * 64} if len(lookups) == 1 else found

    real = records.name_params
    monkeypatch.setattr(records, "name_params", first_misses)
    code = "FT1-N-AAAAAAD"
    again = client.post(f"{API}/records", json={"code": code, "player": "zed", "moves": legal_log(code, 8)})
    assert again.status_code == 201 and again.get_json()["player"] == "zed"
    assert lookups == ["zed", "zed"]  # the first statement stored nothing: the name was taken
    with app.app_context():
        [player_id] = session().scalars(select(Player.id).where(Player.name == "zed")).all()
        assert set(session().scalars(select(Record.player_id))) == {player_id}


def test_without_a_broker_the_submission_judges_its_own_record(app, client, legal_log, monkeypatch):
    monkeypatch.setitem(app.config, "FAIRPLAY_JUDGE", "worker")  # (embedded: every task runs where it is sent)
    stored = submit(client, "ann", moves=legal_log(FT, 12)).get_json()
    assert stored["ranked"] is True and stored["flags"] == []


def test_fairplay_judge_takes_a_place_and_names_the_variable(tmp_path):
    from api.platform.config import ConfigError, load_settings

    assert load_settings(str(tmp_path), environ={"FAIRPLAY_JUDGE": " Worker "})["FAIRPLAY_JUDGE"] == "worker"
    assert load_settings(str(tmp_path), environ={})["FAIRPLAY_JUDGE"] == "submission"
    with pytest.raises(ConfigError, match="FAIRPLAY_JUDGE='later': expected one of submission, worker"):
        load_settings(str(tmp_path), environ={"FAIRPLAY_JUDGE": "later"})


def test_the_reevaluate_command_judges_the_records_waiting_first(app, client, later, legal_log):
    stored = submit(client, "ann", moves=legal_log(FT, 12)).get_json()
    result = app.test_cli_runner().invoke(args=["fairplay", "reevaluate"])
    assert result.exit_code == 0, result.output
    assert "1 records waiting for their judgement judged" in result.output
    judged = client.get(f"{API}/records/{stored['id']}").get_json()
    assert judged["ranked"] is True and judged["flags"] == []


def test_record_created_is_sent_once_the_record_is_judged_with_its_verdict(make_empty_app, legal_log, monkeypatch):
    import json

    from api.platform.auth import create_key
    from api.platform.db import session
    from api.platform.models import WebhookMessage

    app = make_empty_app(WEBHOOK_ALLOW_PRIVATE=True)
    monkeypatch.setitem(app.config, "FAIRPLAY_JUDGE", "worker")
    monkeypatch.setitem(app.config, "CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setitem(app.extensions, "api.asks", CaughtAsks())
    client = app.test_client()
    with app.extensions["api.platform.db"].sessions() as db:
        admin = create_key(db, "ops", admin=True)[1]
    # (an endpoint that answers nothing: the event's message is what is checked, not its delivery)
    made = client.post(f"{API}/webhooks", json={"url": "http://127.0.0.1:9/hooks", "events": ["record.created"]},
                       headers={"Authorization": f"Bearer {admin}"})
    assert made.status_code == 201, made.get_json()

    def events():
        with app.app_context():
            return [json.loads(m.payload) for m in session().scalars(select(WebhookMessage)
                                                                     .where(WebhookMessage.type == "record.created"))]

    stored = submit(client, "ann", moves=legal_log(FT, 12)).get_json()
    assert events() == []  # not while it waits
    judge(app, FT)
    [event] = events()
    assert event["data"]["id"] == stored["id"] and event["data"]["ranked"] is True and event["data"]["flags"] == []
