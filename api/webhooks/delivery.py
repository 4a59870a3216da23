"""Webhooks for game backends, as Standard Webhooks (v1) has them.

An admin registers an endpoint (a URL and the event types it wants) and gets its
secret once. Each event becomes one :class:`~api.platform.models.WebhookMessage` (its id is
the ``webhook-id`` header, the same on every retry) and one
:class:`~api.platform.models.WebhookDelivery` per endpoint that wants it, written in the
transaction of the change itself (an outbox: no event is sent for a change that
was rolled back, and none is lost for one that was committed).

Deliveries go out from the worker tier, never from a request: after the commit a
task is sent for each (``api.deliver_webhook`` on a queue of its own,
``<prefix>.webhooks``, so that a slow receiver holds no process that judges records
or prepares challenges); the beat's sweep sends again any that are due for a minute and not
held (a lost task, a broker that was down), and announces the challenges whose window
closed; its prune deletes what ended after ``WEBHOOK_KEEP_SECONDS``. In the
embedded mode (no broker) a background thread of the web process delivers instead.

A delivery is signed with HMAC-SHA256 over ``id.timestamp.body`` (the
``standardwebhooks`` package) and retried on the spec's schedule: at once, then
after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. A 2xx answer ends it; 410 Gone
disables the endpoint. An attempt has ``WEBHOOK_DEADLINE_SECONDS`` as a whole
(connecting, sending, the answer's status line, headers and first bytes: a
receiver that answers a byte at a time gains nothing), and is recorded however it
ends: it is written, as cut off and with the next one scheduled, before it is made.
Targets that resolve to loopback, private, link-local or other non-global addresses
(and IPv6 addresses that carry one: 6to4, Teredo, NAT64, IPv4-mapped) are refused
when registered and again when connected to, unless ``WEBHOOK_ALLOW_PRIVATE`` is set
(``api/webhooks/targets.py``). Endpoints and their secrets: ``api/webhooks/endpoints.py``.
"""

from __future__ import annotations

import http.client
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import delete, event, exists, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import Webhook

from api.boards import kinds
from api.boards import reads as boards
from api.platform import events
from api.platform.models import Challenge, WebhookDelivery, WebhookEndpoint, WebhookMessage
from api.webhooks.events import DELIVER_TASK, EVENTS
from api.webhooks.targets import Deadline, WebhookError, post

log = logging.getLogger(__name__)


class App(Protocol):
    """What delivering reads of the app it runs for: its settings (``WEBHOOK_*``,
    ``CELERY_BROKER_URL``), its database and Celery app (``extensions``), and, for the embedded
    mode's thread, its context."""

    @property
    def config(self) -> Mapping[str, Any]: ...

    @property
    def extensions(self) -> Mapping[str, Any]: ...

    def app_context(self) -> AbstractContextManager[Any]: ...

#: seconds to wait before each attempt (Standard Webhooks' schedule); its length is the attempts made
SCHEDULE = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
#: a worker holds a delivery it is sending for the attempt's deadline and this much more (past the task's limits)
HOLD_MARGIN = 60.0
#: the error of an attempt recorded before it is made, left if its worker never came back
CUT_OFF = "cut off: the worker stopped before the attempt ended"
#: how long a web process trusts its list of the event types someone wants
SUBSCRIBED_TTL = 5.0
USER_AGENT = "solitaire-verifier-webhooks/1"


# -- events: written with the change, sent after its commit ------------------------

_subscribed: tuple[float, frozenset[str]] | None = None
_subscribed_lock = threading.Lock()


def forget_subscriptions() -> None:
    global _subscribed
    _subscribed = None


def subscribed(session: Session) -> frozenset[str]:
    """The event types some enabled endpoint wants, read at most every :data:`SUBSCRIBED_TTL`
    seconds per process: a service without endpoints pays no statement per event."""
    global _subscribed
    with _subscribed_lock:
        cached = _subscribed
        if cached is not None and time.monotonic() - cached[0] < SUBSCRIBED_TTL:
            return cached[1]
    rows = session.execute(select(WebhookEndpoint.events).where(WebhookEndpoint.disabled_at.is_(None))).scalars()
    wanted = frozenset(name for events in rows for name in events)
    with _subscribed_lock:
        _subscribed = (time.monotonic(), wanted)
    return wanted


def message_id() -> str:
    return f"msg_{secrets.token_hex(16)}"


def emit(session: Session, type_: str, data: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
         key: str | None = None) -> int:
    """Write an event of ``type_`` with ``data`` for every endpoint that wants it, in the
    session's transaction; its deliveries are sent once that commits. ``data`` may be a
    function that makes it, called only if an endpoint wants the event. ``key`` makes the
    event once-only (a second emit of the same key does nothing). Returns the deliveries made."""
    assert type_ in EVENTS, type_
    if type_ not in subscribed(session):
        return 0
    # (at most MAX_ENDPOINTS rows: which want the event is decided here, alike on every database)
    endpoints = [row.id for row in session.execute(select(WebhookEndpoint.id, WebhookEndpoint.events)
                                                   .where(WebhookEndpoint.disabled_at.is_(None)))
                 if type_ in row.events]
    if not endpoints:
        return 0
    now = datetime.now(UTC)
    if callable(data):
        data = data()
    payload = json.dumps({"type": type_, "timestamp": now.isoformat().replace("+00:00", "Z"), "data": data},
                         separators=(",", ":"), ensure_ascii=False, default=_json_default)
    message = WebhookMessage(id=message_id(), type=type_, key=key, payload=payload, created_at=now)
    if key is not None:
        try:
            with session.begin_nested():
                session.add(message)
        except IntegrityError:  # sent already (or being sent by another process)
            return 0
    else:
        session.add(message)
    rows = [WebhookDelivery(message_id=message.id, endpoint_id=endpoint, status="pending", next_attempt_at=now,
                            attempts=[], created_at=now) for endpoint in endpoints]
    session.add_all(rows)
    session.flush()
    session.info.setdefault("api.webhook_deliveries", []).extend(row.id for row in rows)
    return len(rows)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    raise TypeError(f"{type(value).__name__} is not JSON")


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    waiting = session.info.pop("api.webhook_deliveries", None)
    if waiting:  # (the app factory connects who sends them: api.tasks.webhooks.dispatch_written)
        events.deliveries_written.send(session, ids=waiting)


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop("api.webhook_deliveries", None)


def dispatch(app: App, delivery_ids: Iterable[int], delay: float = 0.0) -> None:
    """Have the deliveries sent: by a task on the worker tier, or (embedded) by a thread here.
    A send that fails is left to the sweep."""
    for delivery_id in delivery_ids:
        if app.config["CELERY_BROKER_URL"] is None:
            timer = threading.Timer(delay, _deliver_in_thread, args=(app, delivery_id))
            timer.daemon = True
            timer.start()
            continue
        try:
            app.extensions["api.celery"].tasks[DELIVER_TASK].apply_async(args=(delivery_id,), countdown=delay or None)
        except Exception:
            log.exception("webhook delivery %s could not be sent to the worker tier; the sweep will", delivery_id)


def _deliver_in_thread(app: App, delivery_id: int) -> None:
    with app.app_context():
        try:
            deliver(app, delivery_id)
        except Exception:
            log.exception("webhook delivery %s failed", delivery_id)


# -- delivering ------------------------------------------------------------------

def signature(endpoint: WebhookEndpoint, msg_id: str, at: datetime, body: str) -> str:
    """The ``webhook-signature`` header: ``v1,<base64>`` by the secret, and by the one before while it overlaps."""
    secrets_now = [endpoint.secret]
    if endpoint.previous_secret and endpoint.previous_expires_at and endpoint.previous_expires_at > at:
        secrets_now.append(endpoint.previous_secret)
    return " ".join(Webhook(secret).sign(msg_id, at, body) for secret in secrets_now)


def hold(app: App) -> timedelta:
    """How long a worker holds a delivery it is sending: longer than an attempt and the task's time limits."""
    return timedelta(seconds=app.config["WEBHOOK_DEADLINE_SECONDS"] + HOLD_MARGIN)


def _claim(session: Session, delivery_id: int, now: datetime, held: timedelta) -> bool:
    """Hold a due delivery for this worker: one statement, so two workers never both send it
    (the caller commits: the row stays locked until then)."""
    claimed = session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id == delivery_id, WebhookDelivery.status == "pending",
               WebhookDelivery.next_attempt_at <= now + timedelta(seconds=1),
               (WebhookDelivery.claimed_until.is_(None)) | (WebhookDelivery.claimed_until < now))
        .values(claimed_until=now + held))
    return claimed.rowcount == 1  # type: ignore[attr-defined]


def _attempt(at: datetime, code: int | None, error: str | None, ms: int) -> dict[str, Any]:
    return {"at": at.isoformat().replace("+00:00", "Z"), "status_code": code, "error": error, "ms": ms}


def _begin(session: Session, app: App, delivery_id: int, now: datetime
           ) -> tuple[WebhookDelivery, WebhookEndpoint] | str:
    """Claim the delivery and record its attempt before it is made, as cut off, with the
    schedule applied: a worker killed in the middle (its hard time limit, a crash) leaves
    an attempt counted and the next one scheduled, never a delivery sent again and again.
    The delivery and its endpoint, or what became of it (``skipped``, ``cancelled``)."""
    if not _claim(session, delivery_id, now, hold(app)):
        session.rollback()
        return "skipped"
    delivery = session.get(WebhookDelivery, delivery_id)
    assert delivery is not None
    endpoint = session.get(WebhookEndpoint, delivery.endpoint_id)
    if endpoint is None or endpoint.disabled_at is not None:
        delivery.status, delivery.next_attempt_at, delivery.claimed_until = "cancelled", None, None
        session.commit()
        return "cancelled"
    delivery.attempts = [*delivery.attempts, _attempt(now, None, CUT_OFF, 0)]
    _settle(delivery, endpoint, None, now)  # (a last attempt is ``failed`` until its outcome says otherwise)
    session.commit()
    return delivery, endpoint


def _send(app: App, endpoint: WebhookEndpoint, delivery: WebhookDelivery, now: datetime
          ) -> tuple[int | None, str | None]:
    """Make the attempt: the answer's code, or why none came (a timeout among them)."""
    body = delivery.message.payload
    headers = {"content-type": "application/json", "user-agent": USER_AGENT, "webhook-id": delivery.message_id,
               "webhook-timestamp": str(int(now.timestamp())),
               "webhook-signature": signature(endpoint, delivery.message_id, now, body)}
    try:
        return post(endpoint.url, headers, body.encode(), app.config["WEBHOOK_ALLOW_PRIVATE"],
                    Deadline(app.config["WEBHOOK_DEADLINE_SECONDS"])), None
    except (OSError, http.client.HTTPException, WebhookError) as failure:
        return None, f"{type(failure).__name__}: {failure}"[:200]
    except SoftTimeLimitExceeded:  # (the task's soft limit: past the deadline, something else hung)
        return None, "SoftTimeLimitExceeded: the delivery task's time limit passed"


def deliver(app: App, delivery_id: int) -> str:
    """One attempt at a delivery, if it is due and no one else holds it: what became of it.
    The attempt is recorded however it ends (an answer, an error, its deadline, the task's
    time limit), and the retry schedule applied."""
    database = app.extensions["api.platform.db"]
    with database.sessions() as session:
        now = datetime.now(UTC)
        begun = _begin(session, app, delivery_id, now)
        if isinstance(begun, str):
            return begun
        delivery, endpoint = begun
        started = time.monotonic()
        code, error = _send(app, endpoint, delivery, now)
        delivery.attempts = [*delivery.attempts[:-1], _attempt(now, code, error,
                                                               round((time.monotonic() - started) * 1000))]
        delivery.claimed_until = None
        outcome = _settle(delivery, endpoint, code, now)
        session.commit()
        if outcome == "retry" and delivery.next_attempt_at is not None:
            dispatch(app, [delivery_id], max(0.0, (delivery.next_attempt_at - now).total_seconds()))
        log.info("webhook delivery", extra={"delivery": delivery_id, "endpoint": endpoint.id,
                                            "status_code": code, "outcome": outcome})
        return outcome


def _settle(delivery: WebhookDelivery, endpoint: WebhookEndpoint, code: int | None, now: datetime) -> str:
    """The delivery's state after an attempt that got ``code`` (``None``: no answer)."""
    if code is not None and 200 <= code < 300:
        delivery.status, delivery.next_attempt_at = "delivered", None
        return "delivered"
    if code == 410:  # the receiver unsubscribed
        endpoint.disabled_at, endpoint.disabled_reason = now, "the receiver answered 410 Gone"
        delivery.status, delivery.next_attempt_at = "cancelled", None
        forget_subscriptions()
        return "disabled"
    made = len(delivery.attempts)
    if made >= len(SCHEDULE):
        delivery.status, delivery.next_attempt_at = "failed", None
        return "failed"
    delivery.next_attempt_at = now + timedelta(seconds=SCHEDULE[made])
    return "retry"


# -- the sweep (the beat): lost deliveries, closed challenges -----------------------

#: deliveries the sweep sends at most per run
SWEEP_BATCH = 500
#: challenges that closed longer ago than this are not announced (a fresh deployment's history)
ANNOUNCE_WITHIN = timedelta(days=2)


def sweep(app: App, lost_after: timedelta = timedelta(0)) -> dict[str, int]:
    """Announce closed challenges, and send the deliveries due for ``lost_after`` or longer that
    no worker holds (the beat's sweep waits a while: a delivery due a moment ago may be in the
    queue; ``webhooks sweep`` on the command line sends everything due)."""
    database = app.extensions["api.platform.db"]
    now = datetime.now(UTC)
    with database.sessions() as session:
        announced = announce_closed_challenges(session, now)
        session.commit()
        due = session.scalars(
            select(WebhookDelivery.id)
            .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now - lost_after,
                   (WebhookDelivery.claimed_until.is_(None)) | (WebhookDelivery.claimed_until < now))
            .order_by(WebhookDelivery.next_attempt_at).limit(SWEEP_BATCH)).all()
    dispatch(app, due)
    return {"announced": announced, "sent": len(due)}


def announce_closed_challenges(session: Session, now: datetime) -> int:
    """A ``challenge.closed`` event for each challenge whose window closed lately (once each)."""
    if "challenge.closed" not in subscribed(session):
        return 0
    closed = session.scalars(select(Challenge).where(Challenge.ends_at <= now,
                                                     Challenge.ends_at > now - ANNOUNCE_WITHIN)).all()
    return sum(emit(session, "challenge.closed", challenge_data(session, challenge),
                    key=f"challenge.closed:{challenge.id}") > 0 for challenge in closed)


def challenge_data(session: Session, challenge: Challenge) -> dict[str, Any]:
    """A closed challenge and its podium: every entry ranked 1 to 3 on its board."""
    page = boards.page(session.connection(), boards.board(kinds.CHALLENGE, challenge.id), 10, None)
    podium = [{"rank": rank, "player": row.player, "record_id": row.record_id, "won": row.won, "score": row.score,
               "moves": row.moves} for rank, row in page["ranked"] if rank <= 3]
    return {"id": challenge.id, "variant": challenge.variant, "kind": challenge.kind, "code": challenge.code,
            "starts_at": challenge.starts_at, "ends_at": challenge.ends_at, "par": challenge.par, "podium": podium}


# -- pruning (the beat): the outbox keeps what ended for WEBHOOK_KEEP_SECONDS --------

#: rows the prune deletes per statement (each a short transaction)
PRUNE_BATCH = 1000


def prune(app: App, now: datetime | None = None, until: float | None = None) -> dict[str, int]:
    """Delete the deliveries that ended (delivered, failed, cancelled) and were made more than
    ``WEBHOOK_KEEP_SECONDS`` ago, oldest first, then the messages left without a delivery
    (kept at least :data:`ANNOUNCE_WITHIN`, so that a closed challenge's once-only key still
    stops a second announcement); pending deliveries and their messages stay. Stops at
    ``until`` (``time.monotonic()``), if given; the next run goes on. How many of each went."""
    now = now or datetime.now(UTC)
    cutoff = now - timedelta(seconds=app.config["WEBHOOK_KEEP_SECONDS"])
    old_deliveries = (select(WebhookDelivery.id)
                      .where(WebhookDelivery.created_at < cutoff, WebhookDelivery.status != "pending")
                      .order_by(WebhookDelivery.created_at).limit(PRUNE_BATCH))
    old_messages = (select(WebhookMessage.id)
                    .where(WebhookMessage.created_at < min(cutoff, now - ANNOUNCE_WITHIN),
                           ~exists().where(WebhookDelivery.message_id == WebhookMessage.id))
                    .order_by(WebhookMessage.created_at).limit(PRUNE_BATCH))
    with app.extensions["api.platform.db"].sessions() as session:
        return {"deliveries": _delete_all(session, WebhookDelivery, old_deliveries, until),
                "messages": _delete_all(session, WebhookMessage, old_messages, until)}


def _delete_all(session: Session, model: Any, batch: Any, until: float | None) -> int:
    """Delete the rows ``batch`` selects (their ids), a batch a transaction, until none is left."""
    deleted = 0
    while until is None or time.monotonic() < until:
        ids = session.scalars(batch).all()
        if ids:
            session.execute(delete(model).where(model.id.in_(ids)).execution_options(synchronize_session=False))
            session.commit()
            deleted += len(ids)
        if len(ids) < PRUNE_BATCH:
            break
    return deleted
