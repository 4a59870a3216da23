"""Webhooks (Standard Webhooks v1): endpoints managed by admin keys, events signed and
delivered from outside the request, retried with the same ``webhook-id``, 410 to
unsubscribe, and no target on loopback or private addresses unless allowed."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from api.platform.models import Challenge, WebhookDelivery
from api.tasks.schedule import WEBHOOK_SWEEP_AFTER
from api.webhooks import delivery as webhooks
from api.webhooks import endpoints, targets
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
            def do_POST(self) -> None:
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


class Tarpit:
    """A receiver that never finishes its answer: it sends the status line, then one byte of a
    header every ``every`` seconds, for as long as the sender stays connected."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.connections = 0
        self.open = 0
        self.lock = threading.Condition()
        self.closed = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/slow"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                sock, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(sock,), daemon=True).start()

    def _drip(self, sock: socket.socket) -> None:
        with self.lock:
            self.connections += 1
            self.open += 1
            self.lock.notify_all()
        try:
            sock.recv(65536)
            sock.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not self.closed.wait(self.every):
                sock.sendall(b"x")
        except OSError:  # the sender gave up
            pass
        finally:
            sock.close()
            with self.lock:
                self.open -= 1
                self.lock.notify_all()

    def wait(self, condition: Any, timeout: float = WAIT) -> None:
        with self.lock:
            assert self.lock.wait_for(lambda: condition(self), timeout), "the tarpit's sender did not come (or go)"

    def close(self) -> None:
        self.closed.set()
        self.server.close()


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    made = Tarpit()
    yield made
    made.close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


@pytest.fixture
def hook_app(make_empty_app: Any) -> Any:
    return make_empty_app(WEBHOOK_ALLOW_PRIVATE=True)


def admin_key(app: Any, name: str = "ops") -> dict[str, str]:
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
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
                                 "http://0.0.0.0/x", "http://[::ffff:127.0.0.1]/x",
                                 # IPv6 forms that carry a private IPv4: 6to4, NAT64, Teredo, IPv4-compatible
                                 "http://[2002:7f00:1::]/x", "http://[2002:a9fe:a9fe::]/x", "http://[2002:a00:1::]/x",
                                 "http://[64:ff9b::a9fe:a9fe]/x", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x",
                                 "http://[::10.0.0.1]/x"])
def test_a_target_on_a_loopback_private_or_metadata_address_is_refused(app, client, url):
    response = client.post(f"{API}/webhooks", json={"url": url, "events": ["record.created"]},
                           headers=admin_key(app))
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["errors"][0]["field"] == "url"
    assert "address" in problem["detail"] and "WEBHOOK_ALLOW_PRIVATE" in problem["detail"]
    assert client.get(f"{API}/webhooks", headers=admin_key(app, "ops2")).get_json()["items"] == []


@pytest.mark.parametrize(("address", "form", "inner"), [
    ("2002:7f00:1::", "6to4", "127.0.0.1"), ("2002:a9fe:a9fe::", "6to4", "169.254.169.254"),
    ("2002:c0a8:1::1", "6to4", "192.168.0.1"), ("64:ff9b::7f00:1", "NAT64", "127.0.0.1"),
    ("64:ff9b:1::a00:1", "NAT64", "10.0.0.1"), ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo", "127.0.0.1"),
    ("::ffff:10.1.2.3", "IPv4-mapped", "10.1.2.3"), ("::169.254.169.254", "IPv4-compatible", "169.254.169.254")])
def test_an_ipv6_address_that_carries_a_private_ipv4_is_refused_naming_it(address, form, inner):
    reason = targets._refused_address(address)
    assert reason is not None and f"({form})" in reason and reason.endswith(inner), reason
    # and at delivery, on the address about to be connected to (before any packet is sent)
    with pytest.raises(ConnectionRefusedError, match=form):
        targets.connect(address, 80, targets.Deadline(5), allow_private=False)


def test_an_ipv6_address_that_carries_a_public_ipv4_is_not_refused_for_it():
    assert targets._refused_address("2002:808:808::1") is None  # 6to4 of 8.8.8.8
    assert targets._refused_address("2606:4700:4700::1111") is None


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
        Webhook(endpoints.new_secret()).verify(request["body"], request["headers"])
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
    webhooks.forget_subscriptions()
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
    with strict.app_context(), strict.extensions["api.platform.db"].sessions() as session:
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


def a_delivery(app: Any, endpoint_id: int, created_at: datetime | None = None, status: str = "pending",
               message: str | None = None) -> int:
    """A delivery of a new message (or of ``message``) to the endpoint, due now: its id."""
    created_at = created_at or datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        if message is None:
            message = webhooks.message_id()
            session.add(webhooks.WebhookMessage(id=message, type="record.created", payload='{"type":"record.created"}',
                                                created_at=created_at))
        delivery = WebhookDelivery(message_id=message, endpoint_id=endpoint_id, status=status,
                                   next_attempt_at=datetime.now(UTC) if status == "pending" else None,
                                   attempts=[], created_at=created_at)
        session.add(delivery)
        session.commit()
        return delivery.id


def the_delivery(app: Any, delivery_id: int) -> WebhookDelivery:
    with app.extensions["api.platform.db"].sessions() as session:
        found = session.get(WebhookDelivery, delivery_id)
        assert found is not None
        session.expunge(found)
        return found


@pytest.fixture
def retries(monkeypatch: Any) -> list[tuple[list[int], float]]:
    """The retries a delivery has sent, instead of sending them (a background thread, embedded)."""
    sent: list[tuple[list[int], float]] = []
    monkeypatch.setattr(webhooks, "dispatch", lambda app, ids, delay=0.0: sent.append((list(ids), delay)))
    return sent


def assert_retry_scheduled(delivery: WebhookDelivery, attempts: int) -> None:
    """The delivery is pending, its last attempt recorded, the next one after the schedule's wait."""
    assert delivery.status == "pending" and len(delivery.attempts) == attempts
    last = datetime.fromisoformat(delivery.attempts[-1]["at"].replace("Z", "+00:00"))
    assert delivery.next_attempt_at == last + timedelta(seconds=webhooks.SCHEDULE[attempts])


def test_a_tarpit_receiver_is_cut_off_at_the_deadline_and_the_attempt_recorded(make_empty_app, tarpit, retries):
    """A receiver that answers its status line and then a header byte at a time never holds a delivery
    past ``WEBHOOK_DEADLINE_SECONDS`` (the whole attempt, not each read): the attempt is recorded as timed
    out, the retry scheduled and sent, and the hold let go."""
    app = make_empty_app(WEBHOOK_ALLOW_PRIVATE=True, WEBHOOK_DEADLINE_SECONDS=1)
    made = register(app.test_client(), admin_key(app), tarpit.url, "record.created")
    delivery_id = a_delivery(app, made["id"])
    assert webhooks.deliver(app, delivery_id) == "retry"
    assert tarpit.connections == 1
    tarpit.wait(lambda pit: pit.open == 0)  # (the sender hung up)
    delivery = the_delivery(app, delivery_id)
    [attempt] = delivery.attempts
    assert attempt["status_code"] is None and attempt["error"].startswith("DeadlineExceeded"), attempt
    assert_retry_scheduled(delivery, 1)
    assert delivery.claimed_until is None
    assert retries == [([delivery_id], pytest.approx(webhooks.SCHEDULE[1], abs=1))]


def test_an_attempt_stopped_by_the_tasks_time_limit_is_recorded(hook_app, receiver, retries, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    def hangs(*_: Any, **__: Any) -> int:
        raise SoftTimeLimitExceeded()

    made = register(hook_app.test_client(), admin_key(hook_app), receiver.url, "record.created")
    delivery_id = a_delivery(hook_app, made["id"])
    monkeypatch.setattr(webhooks, "post", hangs)
    assert webhooks.deliver(hook_app, delivery_id) == "retry"
    delivery = the_delivery(hook_app, delivery_id)
    assert "time limit" in delivery.attempts[0]["error"] and delivery.claimed_until is None
    assert_retry_scheduled(delivery, 1)


def test_an_attempt_whose_worker_is_killed_counts_and_the_retry_is_scheduled(hook_app, receiver, retries,
                                                                             monkeypatch):
    """The attempt is written before it is made: a worker killed in the middle (its hard time limit)
    leaves it counted, with the next one scheduled once the hold runs out, not a delivery sent again
    and again; the last attempt, cut off, leaves the delivery failed."""
    def killed(*_: Any, **__: Any) -> int:
        raise SystemExit(9)

    made = register(hook_app.test_client(), admin_key(hook_app), receiver.url, "record.created")
    delivery_id = a_delivery(hook_app, made["id"])
    monkeypatch.setattr(webhooks, "post", killed)
    with pytest.raises(SystemExit):
        webhooks.deliver(hook_app, delivery_id)
    delivery = the_delivery(hook_app, delivery_id)
    assert delivery.attempts[0]["error"] == webhooks.CUT_OFF and delivery.attempts[0]["status_code"] is None
    assert_retry_scheduled(delivery, 1)
    assert delivery.claimed_until is not None and delivery.claimed_until > delivery.next_attempt_at  # held
    with hook_app.extensions["api.platform.db"].sessions() as session:  # the schedule's last attempt, cut off too
        row = session.get(WebhookDelivery, delivery_id)
        row.attempts = [delivery.attempts[0]] * (len(webhooks.SCHEDULE) - 1)
        row.claimed_until, row.next_attempt_at = None, datetime.now(UTC)
        session.commit()
    with pytest.raises(SystemExit):
        webhooks.deliver(hook_app, delivery_id)
    delivery = the_delivery(hook_app, delivery_id)
    assert delivery.status == "failed" and len(delivery.attempts) == len(webhooks.SCHEDULE)
    assert delivery.next_attempt_at is None
    assert retries == []


def test_the_prune_deletes_what_ended_past_the_keeping_time(hook_app, receiver, monkeypatch):
    """Deliveries that ended (delivered, failed, cancelled) older than WEBHOOK_KEEP_SECONDS go, a batch
    at a time, and then their messages once no delivery is left; a pending delivery and its message
    stay, and so does everything younger."""
    from sqlalchemy import select

    app = hook_app
    first = register(app.test_client(), admin_key(app), receiver.url, "record.created")["id"]
    second = register(app.test_client(), admin_key(app, "ops2"), receiver.url + "&two", "record.created")["id"]
    keep = app.config["WEBHOOK_KEEP_SECONDS"]
    old, young = datetime.now(UTC) - timedelta(seconds=keep + 3600), datetime.now(UTC) - timedelta(seconds=keep - 3600)
    gone = [a_delivery(app, first, old, status) for status in ("delivered", "failed", "cancelled", "delivered")]
    pending = a_delivery(app, first, old)
    shared = the_delivery(app, pending).message_id
    beside = a_delivery(app, second, old, "delivered", message=shared)  # goes; the message stays with the pending
    kept = [a_delivery(app, first, young, "delivered"), pending]
    monkeypatch.setattr(webhooks, "PRUNE_BATCH", 2)
    result = app.test_cli_runner().invoke(args=["webhooks", "prune"])
    assert result.exit_code == 0 and "5 delivery(ies) and 4 message(s) deleted" in result.output, result.output
    with app.extensions["api.platform.db"].sessions() as session:
        assert sorted(session.scalars(select(WebhookDelivery.id))) == sorted(kept)
        messages = set(session.scalars(select(webhooks.WebhookMessage.id)))
    assert messages == {the_delivery(app, delivery).message_id for delivery in kept}
    assert beside not in kept and gone
    with app.app_context():
        assert webhooks.prune(app) == {"deliveries": 0, "messages": 0}


def test_a_closed_challenge_is_announced_once_with_its_podium(hook_app, receiver):
    client, headers = hook_app.test_client(), admin_key(hook_app)
    made = register(client, headers, receiver.url, "challenge.closed")
    now = datetime.now(UTC)
    with hook_app.extensions["api.platform.db"].sessions() as session:
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
    with hook_app.extensions["api.platform.db"].sessions() as session:
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


def judged(client: Any, record: dict[str, Any]) -> dict[str, Any]:
    """The record once a worker has judged it (no longer flagged ``pending``)."""
    deadline = time.monotonic() + 4 * WAIT
    while any(found["flag"] == "pending" for found in record["flags"]):
        assert time.monotonic() < deadline, f"still waiting for its judgement: {record}"
        time.sleep(0.2)
        record = client.get(f"{API}/records/{record['id']}").get_json()
    return record


@pytest.mark.slow
def test_a_tarpit_receiver_holds_only_the_webhooks_worker_and_judging_goes_on(tier, tarpit, legal_log):
    """The production layout (a bulk worker that judges, a worker of the webhooks queue): while a
    receiver holds every delivery with a byte at a time, records go on being judged, and each
    attempt ends at its deadline, recorded, with its retry scheduled."""
    settings = {"WEBHOOK_ALLOW_PRIVATE": "1", "WEBHOOK_DEADLINE_SECONDS": "3"}
    app = tier.app(FAIRPLAY_JUDGE="worker", **settings)
    tier.worker(queues=["bulk"], **settings)
    tier.worker(queues=["webhooks"], **settings)
    client, headers = app.test_client(), admin_key(app)
    made = register(client, headers, tarpit.url, "record.created")
    first = judged(client, submit(client, legal_log, player="ann"))
    tarpit.wait(lambda pit: pit.open == 1)  # its record.created: the webhooks worker is held
    later = [judged(client, submit(client, legal_log, player=name, skip=n))
             for n, name in enumerate(("bob", "cy", "dee"), 1)]
    assert all("pending" not in [found["flag"] for found in record["flags"]] for record in [first, *later])

    deadline = time.monotonic() + 4 * WAIT
    while True:  # the first attempt ends at its deadline and is recorded
        items = client.get(f"{API}/webhooks/{made['id']}/deliveries", headers=headers).get_json()["items"]
        oldest = items[-1] if items else {"attempts": []}
        if oldest["attempts"] and oldest["attempts"][0]["error"] != webhooks.CUT_OFF:
            break
        assert time.monotonic() < deadline, f"no attempt recorded: {items}"
        time.sleep(0.2)
    attempt = oldest["attempts"][0]
    assert attempt["status_code"] is None and attempt["error"].startswith("DeadlineExceeded"), attempt
    assert oldest["status"] == "pending" and datetime.fromisoformat(oldest["next_attempt_at"]) >= \
        datetime.fromisoformat(attempt["at"]) + timedelta(seconds=webhooks.SCHEDULE[1])


def test_webhook_deliveries_have_a_queue_of_their_own():
    from api.platform.config import load_settings
    from api.tasks import DELIVER, QUEUE_ORDER, QUEUES, make_celery

    settings = load_settings("/nonexistent", {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
                                              "CELERY_QUEUE_PREFIX": "p", "WEBHOOK_DEADLINE_SECONDS": "7"})
    celery_app = make_celery(settings)
    assert celery_app.conf.task_routes[DELIVER] == {"queue": "p.webhooks"}
    assert [name for name, queue in QUEUES.items() if queue == "webhooks"] == [DELIVER]
    assert QUEUE_ORDER[-1] == "webhooks"  # a worker that takes every queue takes deliveries last
    task = celery_app.tasks[DELIVER]
    assert 7 < task.soft_time_limit < task.time_limit < 7 + webhooks.HOLD_MARGIN


def test_the_contract_lists_exactly_the_event_types_declared():
    from tests.api.test_api_contract import spec

    assert tuple(spec()["components"]["schemas"]["WebhookEvent"]["enum"]) == webhooks.EVENTS


def test_the_beats_sweep_sends_again_only_what_was_due_a_minute_ago(hook_app, receiver, monkeypatch):
    """A delivery due a moment ago may be waiting in the queue: the beat's sweep leaves it; one due
    for a minute that no worker took was lost, and is sent again; the command line sends both."""
    made = register(hook_app.test_client(), admin_key(hook_app), receiver.url, "record.created")
    waiting, lost = a_delivery(hook_app, made["id"]), a_delivery(hook_app, made["id"])
    with hook_app.extensions["api.platform.db"].sessions() as session:
        overdue = datetime.now(UTC) - timedelta(seconds=WEBHOOK_SWEEP_AFTER + 1)
        session.get(WebhookDelivery, lost).next_attempt_at = overdue
        session.commit()
    sent: list[int] = []
    monkeypatch.setattr(webhooks, "dispatch", lambda app, ids, delay=0.0: sent.extend(ids))
    assert webhooks.sweep(hook_app, lost_after=timedelta(seconds=WEBHOOK_SWEEP_AFTER))["sent"] == 1
    assert sent == [lost]
    sent.clear()
    assert webhooks.sweep(hook_app)["sent"] == 2 and sorted(sent) == sorted([waiting, lost])
