"""Webhooks (Standard Webhooks v1): endpoints managed by admin keys, events signed and
delivered from outside the request, retried with the same ``webhook-id``, 410 to
unsubscribe, and no target on loopback or private addresses unless allowed."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from api import webhooks
from api.models import Challenge, WebhookDelivery
from tests.conftest import bearer

API = "/api/v1"
CODE = "YU1-C-AAAAAAB"
WAIT = 20.0


class Receiver:
    """A webhook receiver on loopback: keeps every request, answers from a list of codes (then 200)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.answers: list[int] = []
        self.arrived = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                code = outer.answers.pop(0) if outer.answers else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with outer.arrived:
                    outer.received.append({"headers": dict(self.headers), "body": body, "at": time.monotonic(),
                                           "answered": code})
                    outer.arrived.notify_all()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks?source=test"

    def wait(self, count: int, timeout: float = WAIT) -> list[dict[str, Any]]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.received) >= count, timeout), \
                f"{len(self.received)} of {count} webhook requests arrived"
            return list(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


@pytest.fixture
def hook_app(make_empty_app: Any) -> Any:
    return make_empty_app(WEBHOOK_ALLOW_PRIVATE=True)


def admin_key(app: Any, name: str = "ops") -> dict[str, str]:
    from api.auth import create_key

    with app.extensions["api.db"].sessions() as session:
        return bearer(create_key(session, name, admin=True)[1])


def register(client: Any, headers: dict[str, str], url: str, *events: str) -> dict[str, Any]:
    response = client.post(f"{API}/webhooks", json={"url": url, "events": list(events)}, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def submit(client: Any, legal_log: Any, player: str = "ann", skip: int = 0) -> dict[str, Any]:
    response = client.post(f"{API}/records", json={"code": CODE, "player": player,
                                                  "moves": legal_log(CODE, 6, skip)})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def verified(secret: str, request: dict[str, Any]) -> dict[str, Any]:
    """The payload, after checking its signature as a receiver does (the spec's algorithm)."""
    return Webhook(secret).verify(request["body"], request["headers"])


# -- registering -------------------------------------------------------------------

@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/x",
                                 "http://10.1.2.3/x", "http://192.168.0.1/x", "http://169.254.169.254/latest",
                                 "http://0.0.0.0/x", "http://[::ffff:127.0.0.1]/x"])
def test_a_target_on_a_loopback_private_or_metadata_address_is_refused(app, client, url):
    response = client.post(f"{API}/webhooks", json={"url": url, "events": ["record.created"]},
                           headers=admin_key(app))
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["errors"][0]["field"] == "url"
    assert "address" in problem["detail"] and "WEBHOOK_ALLOW_PRIVATE" in problem["detail"]
    assert client.get(f"{API}/webhooks", headers=admin_key(app, "ops2")).get_json()["items"] == []


@pytest.mark.parametrize(("body", "field"), [
    ({"url": "ftp://example.com/x", "events": ["record.created"]}, "url"),
    ({"url": "https://user:pw@example.com/x", "events": ["record.created"]}, "url"),
    ({"url": "https://example.com/x", "events": ["record.deleted"]}, "events"),
    ({"url": "https://example.com/x", "events": []}, "events"),
    ({"url": "https://example.com/x"}, "events"),
])
def test_a_bad_endpoint_is_refused_naming_the_field(hook_app, body, field):
    response = hook_app.test_client().post(f"{API}/webhooks", json=body, headers=admin_key(hook_app))
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"].split(".")[0] == field


def test_only_admin_keys_manage_webhooks(hook_app, make_key, receiver):
    client = hook_app.test_client()
    body = {"url": receiver.url, "events": ["record.created"]}
    assert client.post(f"{API}/webhooks", json=body).status_code == 401
    assert client.post(f"{API}/webhooks", json=body, headers=bearer(make_key("game"))).status_code == 403
    assert client.get(f"{API}/webhooks", headers=bearer(make_key("game2"))).status_code == 403


def test_an_endpoint_is_shown_without_its_secret_and_can_be_deleted(hook_app, receiver):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "record.created", "challenge.closed")
    assert made["secret"].startswith("whsec_") and made["enabled"]
    shown = client.get(f"{API}/webhooks/{made['id']}", headers=headers).get_json()
    assert "secret" not in shown and shown["events"] == ["record.created", "challenge.closed"]
    assert [item["id"] for item in client.get(f"{API}/webhooks", headers=headers).get_json()["items"]] == [made["id"]]
    assert client.delete(f"{API}/webhooks/{made['id']}", headers=headers).status_code == 204
    assert client.get(f"{API}/webhooks/{made['id']}", headers=headers).status_code == 404
    assert client.delete(f"{API}/webhooks/{made['id']}", headers=headers).status_code == 404


# -- delivering ----------------------------------------------------------------------

def test_a_stored_record_is_sent_signed_with_the_record_as_the_api_shows_it(hook_app, receiver, legal_log):
    client = hook_app.test_client()
    made = register(client, admin_key(hook_app), receiver.url, "record.created")
    record = submit(client, legal_log)
    [request] = receiver.wait(1)
    payload = verified(made["secret"], request)
    assert payload["type"] == "record.created"
    assert datetime.fromisoformat(payload["timestamp"]) <= datetime.now(UTC)
    assert payload["data"] == client.get(f"{API}/records/{record['id']}").get_json()
    assert {"ranked", "flags"} <= payload["data"].keys()
    assert request["headers"]["webhook-id"].startswith("msg_")
    with pytest.raises(WebhookVerificationError):  # another secret does not verify
        Webhook(webhooks.new_secret()).verify(request["body"], request["headers"])
    # the same game again is no new record, and no new event
    assert client.post(f"{API}/records", json={"code": CODE, "player": "ann",
                                               "moves": legal_log(CODE, 6)}).status_code == 200
    time.sleep(0.5)
    assert len(receiver.received) == 1


def test_a_failed_delivery_is_retried_with_the_same_webhook_id(hook_app, receiver, legal_log):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "record.created")
    receiver.answers = [500]
    submit(client, legal_log)
    first, second = receiver.wait(2, timeout=webhooks.SCHEDULE[1] + WAIT)
    assert first["answered"] == 500 and second["answered"] == 200
    assert first["headers"]["webhook-id"] == second["headers"]["webhook-id"]
    assert second["at"] - first["at"] >= webhooks.SCHEDULE[1] - 0.5
    assert verified(made["secret"], second) == verified(made["secret"], first)
    deadline = time.monotonic() + WAIT
    while True:
        [delivery] = client.get(f"{API}/webhooks/{made['id']}/deliveries", headers=headers).get_json()["items"]
        if delivery["status"] == "delivered" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert delivery["status"] == "delivered" and delivery["type"] == "record.created"
    assert [attempt["status_code"] for attempt in delivery["attempts"]] == [500, 200]


def test_a_status_change_sends_record_ranked_changed(hook_app, receiver, legal_log):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "record.ranked_changed")
    record = submit(client, legal_log)
    response = client.post(f"{API}/records/{record['id']}/status", json={"status": "hidden", "reason": "test"},
                           headers=headers)
    assert response.status_code == 200
    [request] = receiver.wait(1)
    payload = verified(made["secret"], request)
    assert payload["type"] == "record.ranked_changed"
    assert payload["data"]["id"] == record["id"] and payload["data"]["status"] == "hidden"
    assert payload["data"]["history"][-1]["reason"] == "test"


def test_410_gone_disables_the_endpoint(hook_app, receiver, legal_log):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "record.created")
    receiver.answers = [410]
    submit(client, legal_log)
    receiver.wait(1)
    deadline = time.monotonic() + WAIT
    while client.get(f"{API}/webhooks/{made['id']}", headers=headers).get_json()["enabled"]:
        assert time.monotonic() < deadline, "the endpoint was not disabled"
        time.sleep(0.1)
    shown = client.get(f"{API}/webhooks/{made['id']}", headers=headers).get_json()
    assert "410" in shown["disabled_reason"]
    webhooks._forget_subscriptions()
    submit(client, legal_log, player="bob", skip=1)
    time.sleep(0.5)
    assert len(receiver.received) == 1


def test_a_rotated_secret_signs_beside_the_old_one_for_a_while(hook_app, receiver, legal_log):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "record.created")
    rotated = client.post(f"{API}/webhooks/{made['id']}/secret", headers=headers).get_json()
    assert rotated["secret"] != made["secret"] and rotated["previous_secret_expires_at"]
    submit(client, legal_log)
    [request] = receiver.wait(1)
    assert len(request["headers"]["webhook-signature"].split(" ")) == 2
    assert verified(made["secret"], request) == verified(rotated["secret"], request)


def test_a_delivery_refuses_a_private_address_reached_after_registering(hook_app, make_app, receiver, legal_log):
    """The target is checked again when connecting: a host whose address became private is not sent to."""
    client = hook_app.test_client()
    made = register(client, admin_key(hook_app), receiver.url, "record.created")
    strict = make_app(WEBHOOK_ALLOW_PRIVATE=False)
    with strict.app_context(), strict.extensions["api.db"].sessions() as session:
        message = webhooks.WebhookMessage(id=webhooks.message_id(), type="record.created", payload="{}",
                                          created_at=datetime.now(UTC))
        session.add(message)
        delivery = WebhookDelivery(message_id=message.id, endpoint_id=made["id"], status="pending",
                                   next_attempt_at=datetime.now(UTC), attempts=[], created_at=datetime.now(UTC))
        session.add(delivery)
        session.commit()
        assert webhooks.deliver(strict, delivery.id) == "retry"
        session.refresh(delivery)
        assert delivery.attempts[0]["status_code"] is None and "loopback" in delivery.attempts[0]["error"]
    assert receiver.received == []


def test_a_closed_challenge_is_announced_once_with_its_podium(hook_app, receiver):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "challenge.closed")
    now = datetime.now(UTC)
    with hook_app.extensions["api.db"].sessions() as session:
        session.add(Challenge(variant="yukon-classic", kind="daily", starts_at=now - timedelta(days=1),
                              ends_at=now - timedelta(minutes=5), code=CODE, candidate=0, par=90, par_line="T1>F",
                              prepared_at=now - timedelta(days=1)))
        session.commit()
    with hook_app.app_context():
        assert webhooks.sweep(hook_app)["announced"] == 1
        assert webhooks.sweep(hook_app)["announced"] == 0
    [request] = receiver.wait(1)
    payload = verified(made["secret"], request)
    assert payload["type"] == "challenge.closed"
    assert payload["data"]["code"] == CODE and payload["data"]["podium"] == []


def test_nothing_is_written_when_no_endpoint_wants_the_event(hook_app, legal_log):
    from sqlalchemy import func, select

    submit(hook_app.test_client(), legal_log)
    with hook_app.extensions["api.db"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(webhooks.WebhookMessage)) == 0


# -- the command line ------------------------------------------------------------------

def test_the_webhooks_commands(hook_app, receiver):
    runner = hook_app.test_cli_runner()
    added = runner.invoke(args=["webhooks", "add", receiver.url, "--event", "record.created"])
    assert added.exit_code == 0, added.output
    endpoint_id = int(added.output.split()[1].rstrip(":"))
    assert "whsec_" in added.output
    listed = runner.invoke(args=["webhooks", "list"])
    assert f"{endpoint_id}\tenabled\trecord.created\t{receiver.url}" in listed.output
    rotated = runner.invoke(args=["webhooks", "rotate", str(endpoint_id)])
    assert rotated.exit_code == 0 and "whsec_" in rotated.output
    assert runner.invoke(args=["webhooks", "deliveries", str(endpoint_id)]).exit_code == 0
    assert runner.invoke(args=["webhooks", "remove", str(endpoint_id)]).exit_code == 0
    missing = runner.invoke(args=["webhooks", "remove", str(endpoint_id)])
    assert missing.exit_code != 0 and f"no webhook endpoint {endpoint_id}" in missing.output
    refused = runner.invoke(args=["webhooks", "add", "ftp://example.com", "--event", "record.created"])
    assert refused.exit_code != 0 and "https://" in refused.output


# -- the worker tier ------------------------------------------------------------------

@pytest.mark.slow
def test_a_worker_delivers_and_retries(tier, receiver, legal_log):
    app = tier.app(WEBHOOK_ALLOW_PRIVATE=True)
    tier.worker(concurrency=1, WEBHOOK_ALLOW_PRIVATE="1")
    client, headers = app.test_client(), admin_key(app)
    made = register(client, headers, receiver.url, "record.created")
    receiver.answers = [503]
    record = submit(client, legal_log)
    first, second = receiver.wait(2, timeout=webhooks.SCHEDULE[1] + 2 * WAIT)
    assert first["headers"]["webhook-id"] == second["headers"]["webhook-id"]
    assert verified(made["secret"], second)["data"]["id"] == record["id"]
    assert json.loads(second["body"])["type"] == "record.created"


def test_the_contract_lists_exactly_the_event_types_declared():
    from tests.api.test_api_contract import spec

    assert tuple(spec()["components"]["schemas"]["WebhookEvent"]["enum"]) == webhooks.EVENTS
