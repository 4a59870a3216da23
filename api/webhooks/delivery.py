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
or prepares challenges); the beat's sweep sends again any that are due and not held
(a lost task, a broker that was down), and announces the challenges whose window
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
when registered and again when connected to, unless ``WEBHOOK_ALLOW_PRIVATE`` is set.
"""

from __future__ import annotations

import base64
import http.client
import io
import ipaddress
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from celery.exceptions import SoftTimeLimitExceeded
from flask import Flask, current_app, has_app_context
from sqlalchemy import delete, event, exists, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import Webhook

from api.platform.models import Challenge, WebhookDelivery, WebhookEndpoint, WebhookMessage
from api.webhooks.events import DELIVER_TASK, EVENT_TYPES, EVENTS  # noqa: F401 (the declaration, re-exported)

log = logging.getLogger(__name__)


#: seconds to wait before each attempt (Standard Webhooks' schedule); its length is the attempts made
SCHEDULE = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
#: how long the secret before a rotation still signs (receivers switch over within it)
ROTATION_OVERLAP = timedelta(hours=24)
#: a worker holds a delivery it is sending for the attempt's deadline and this much more (past the task's limits)
HOLD_MARGIN = 60.0
#: the error of an attempt recorded before it is made, left if its worker never came back
CUT_OFF = "cut off: the worker stopped before the attempt ended"
#: endpoints at most (each is sent every event it wants)
MAX_ENDPOINTS = 100
#: how long a web process trusts its list of the event types someone wants
SUBSCRIBED_TTL = 5.0
#: a receiver's answer is read up to this many bytes (it is only recorded, and briefly)
ANSWER_BYTES = 200
USER_AGENT = "solitaire-verifier-webhooks/1"


class WebhookError(ValueError):
    """A webhook request that cannot be done; ``field`` names the input at fault (if any)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UnknownEndpoint(LookupError):
    """No endpoint with that id."""


# -- targets: no request forgery into the service's own network ---------------------

#: NAT64's prefixes (RFC 6052, RFC 8215): the last 32 bits are an IPv4 address
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
#: IPv4-compatible addresses (RFC 4291, deprecated): ``::a.b.c.d``
_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, each with its form's name: IPv4-mapped,
    6to4 (2002::/16), Teredo (2001::/32: its server and client), NAT64, IPv4-compatible."""
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    found = [("IPv4-mapped", ip.ipv4_mapped), ("6to4", ip.sixtofour),
             *(("Teredo", part) for part in ip.teredo or ()),
             *(("NAT64", low32) for network in _NAT64 if ip in network),
             ("IPv4-compatible", low32 if ip in _COMPATIBLE and int(ip) > 1 else None)]
    return [(form, address) for form, address in found if address is not None]


def _refused_address(address: str) -> str | None:
    """Why ``address`` may not be a webhook's target (``None``: it may). An IPv6 address that
    carries an IPv4 one (6to4, Teredo, NAT64, IPv4-mapped or -compatible) is refused when that is."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        for form, inner in _embedded_ipv4(ip):
            reason = _refused_address(str(inner))
            if reason:
                return f"{address} ({form}) carries {reason.removeprefix(str(inner) + ' is ')}: {inner}"
    for test, what in ((ip.is_loopback, "loopback"), (ip.is_link_local, "link-local (cloud metadata)"),
                       (ip.is_private, "private"), (ip.is_multicast, "multicast"), (ip.is_reserved, "reserved"),
                       (ip.is_unspecified, "unspecified"), (not ip.is_global, "not globally routable")):
        if test:
            return f"{address} is a {what} address"
    return None


def check_url(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a webhook URL, or :class:`WebhookError` saying what is wrong."""
    if len(url) > 2000:
        raise WebhookError("the URL is longer than 2,000 characters", "url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise WebhookError(f"the URL does not parse: {error}", "url") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookError("the URL must start with https:// (or http://)", "url")
    if not parts.hostname:
        raise WebhookError("the URL names no host", "url")
    if parts.username is not None or parts.password is not None:
        raise WebhookError("the URL may not carry a user name or password: receivers check the signature", "url")
    if parts.fragment:
        raise WebhookError("the URL may not have a #fragment", "url")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _resolve(host: str, port: int) -> list[tuple[Any, ...]]:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookError(f"the host {host!r} does not resolve ({error})", "url") from None


def _refusal(host: str, reason: str) -> str:
    return (f"the host {host!r} resolves to {reason}; webhooks go to public addresses only "
            f"(WEBHOOK_ALLOW_PRIVATE lifts this for private networks)")


def check_target(url: str, allow_private: bool) -> None:
    """Refuse a URL whose host resolves to an address the service must not send to."""
    _, host, port = check_url(url)
    if allow_private:
        return
    for *_, address in _resolve(host, port):
        reason = _refused_address(str(address[0]))
        if reason:
            raise WebhookError(_refusal(host, reason), "url")


class DeadlineExceeded(TimeoutError):
    """An attempt that did not end within its deadline (``WEBHOOK_DEADLINE_SECONDS``)."""


class Deadline:
    """The end of one whole attempt: every step (connecting, the TLS handshake, each send and
    each read of the answer) may take only what is left of it, so a receiver that answers
    a byte at a time cannot make the attempt last longer."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(f"no whole answer within the attempt's {self.seconds:g} s")
        return left

    def arm(self, sock: socket.socket) -> None:
        sock.settimeout(self.left())


def connect(host: str, port: int, deadline: Deadline, allow_private: bool) -> socket.socket:
    """A TCP connection to ``host``, to the first of its addresses that answers, each checked
    before it is connected to (the name may resolve elsewhere than when it was registered)."""
    failure: OSError | None = None
    for family, kind, protocol, _, address in _resolve(host, port):
        reason = None if allow_private else _refused_address(str(address[0]))
        if reason:
            failure = ConnectionRefusedError(f"refused: {_refusal(host, reason)}")
            continue
        sock = socket.socket(family, kind, protocol)
        try:
            deadline.arm(sock)
            sock.connect(address)
        except OSError as error:
            sock.close()
            if isinstance(error, TimeoutError):
                deadline.left()  # (the deadline's own error once it has passed)
            failure = error
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    raise failure or ConnectionError(f"the host {host!r} has no address")


class _Timed(io.RawIOBase):
    """A socket's reading side whose every read is given what is left of the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.deadline.arm(self.sock)
        try:
            return self.sock.recv_into(buffer)
        except TimeoutError:
            self.deadline.left()
            raise


class _TimedSocket:
    """What ``http.client`` uses of a socket (send, read, close), each step within the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self.sock, self.deadline = sock, deadline

    def sendall(self, data: bytes) -> None:
        self.deadline.arm(self.sock)
        try:
            self.sock.sendall(data)
        except TimeoutError:
            self.deadline.left()
            raise

    def makefile(self, mode: str) -> io.BufferedReader:
        assert mode == "rb", mode
        return io.BufferedReader(_Timed(self.sock, self.deadline))

    def close(self) -> None:
        self.sock.close()


class _HTTP(http.client.HTTPConnection):
    """A connection whose every step (connecting, sending, each read of the answer) is within one deadline."""

    deadline: Deadline
    allow_private = False

    def _tcp(self) -> socket.socket:
        return connect(self.host, self.port, self.deadline, self.allow_private)

    def connect(self) -> None:
        self.sock = _TimedSocket(self._tcp(), self.deadline)


class _HTTPS(_HTTP, http.client.HTTPSConnection):
    def connect(self) -> None:
        sock = self._tcp()  # checked before any TLS
        self.deadline.arm(sock)  # (the handshake as a whole: CPython gives it the socket's timeout)
        try:
            tls = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]
        except BaseException as error:
            sock.close()
            if isinstance(error, TimeoutError):
                self.deadline.left()
            raise
        self.sock = _TimedSocket(tls, self.deadline)


# -- endpoints ---------------------------------------------------------------------

def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def create_endpoint(session: Session, url: str, events: Iterable[str], created_by: str,
                    allow_private: bool) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its secret (shown this once). The caller commits."""
    wanted = list(dict.fromkeys(events))
    unknown = [name for name in wanted if name not in EVENTS]
    if unknown or not wanted:
        raise WebhookError(f"unknown event type {unknown[0]!r}; known: {', '.join(EVENTS)}" if unknown
                           else "name at least one event type", "events")
    check_target(url, allow_private)
    if len(session.scalars(select(WebhookEndpoint.id).limit(MAX_ENDPOINTS)).all()) >= MAX_ENDPOINTS:
        raise WebhookError(f"there are {MAX_ENDPOINTS} endpoints already; delete one first")
    secret = new_secret()
    endpoint = WebhookEndpoint(url=url, events=wanted, secret=secret, created_by=created_by,
                               created_at=datetime.now(UTC))
    session.add(endpoint)
    session.flush()
    _forget_subscriptions()
    return endpoint, secret


def get_endpoint(session: Session, endpoint_id: int) -> WebhookEndpoint:
    endpoint = session.get(WebhookEndpoint, endpoint_id) if 0 < endpoint_id < 2 ** 63 else None
    if endpoint is None:
        raise UnknownEndpoint(f"there is no webhook endpoint {endpoint_id}")
    return endpoint


def list_endpoints(session: Session) -> list[WebhookEndpoint]:
    return list(session.scalars(select(WebhookEndpoint).order_by(WebhookEndpoint.id)))


def delete_endpoint(session: Session, endpoint_id: int) -> None:
    """Delete an endpoint and its deliveries (nothing more is sent to it). The caller commits."""
    session.delete(get_endpoint(session, endpoint_id))
    _forget_subscriptions()


def rotate_secret(session: Session, endpoint_id: int) -> tuple[WebhookEndpoint, str]:
    """A new secret; the one before still signs (beside it) for :data:`ROTATION_OVERLAP`. The caller commits."""
    endpoint = get_endpoint(session, endpoint_id)
    secret = new_secret()
    endpoint.previous_secret, endpoint.secret = endpoint.secret, secret
    endpoint.previous_expires_at = datetime.now(UTC) + ROTATION_OVERLAP
    return endpoint, secret


def deliveries(session: Session, endpoint_id: int, before: int | None, limit: int
               ) -> tuple[list[WebhookDelivery], bool]:
    """An endpoint's deliveries, newest first, below the id ``before``; and whether there are more."""
    get_endpoint(session, endpoint_id)
    statement = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint_id)
    if before is not None:
        statement = statement.where(WebhookDelivery.id < before)
    rows = list(session.scalars(statement.order_by(WebhookDelivery.id.desc()).limit(limit + 1)))
    return rows[:limit], len(rows) > limit


# -- events: written with the change, sent after its commit ------------------------

_subscribed: tuple[float, frozenset[str]] | None = None
_subscribed_lock = threading.Lock()


def _forget_subscriptions() -> None:
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
    if waiting and has_app_context():
        dispatch(current_app._get_current_object(), waiting)  # type: ignore[attr-defined]


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop("api.webhook_deliveries", None)


def dispatch(app: Flask, delivery_ids: Iterable[int], delay: float = 0.0) -> None:
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


def _deliver_in_thread(app: Flask, delivery_id: int) -> None:
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


def hold(app: Flask) -> timedelta:
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


def post(url: str, headers: Mapping[str, str], body: bytes, allow_private: bool, deadline: Deadline) -> int:
    """POST ``body`` to ``url``, the whole of it (connecting, sending, the answer's status line,
    headers and first bytes) within ``deadline``; the answer's status code (no answer: an
    ``OSError``, :class:`DeadlineExceeded` when the deadline passed)."""
    scheme, host, port = check_url(url)
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = (_HTTPS if scheme == "https" else _HTTP)(host, port)
    connection.deadline, connection.allow_private = deadline, allow_private
    try:
        connection.request("POST", target, body=body, headers=dict(headers))
        answer = connection.getresponse()
        answer.read(ANSWER_BYTES)
        return answer.status
    finally:
        connection.close()


def _attempt(at: datetime, code: int | None, error: str | None, ms: int) -> dict[str, Any]:
    return {"at": at.isoformat().replace("+00:00", "Z"), "status_code": code, "error": error, "ms": ms}


def _begin(session: Session, app: Flask, delivery_id: int, now: datetime
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


def _send(app: Flask, endpoint: WebhookEndpoint, delivery: WebhookDelivery, now: datetime
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


def deliver(app: Flask, delivery_id: int) -> str:
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
        _forget_subscriptions()
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


def sweep(app: Flask) -> dict[str, int]:
    """Announce closed challenges, and send the due deliveries no worker holds."""
    database = app.extensions["api.platform.db"]
    now = datetime.now(UTC)
    with database.sessions() as session:
        announced = announce_closed_challenges(session, now)
        session.commit()
        due = session.scalars(
            select(WebhookDelivery.id)
            .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now,
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
    from api.boards import kinds
    from api.boards import reads as boards

    page = boards.page(session.connection(), boards.board(kinds.CHALLENGE, challenge.id), 10, None)
    podium = [{"rank": rank, "player": row.player, "record_id": row.record_id, "won": row.won, "score": row.score,
               "moves": row.moves} for rank, row in page["ranked"] if rank <= 3]
    return {"id": challenge.id, "variant": challenge.variant, "kind": challenge.kind, "code": challenge.code,
            "starts_at": challenge.starts_at, "ends_at": challenge.ends_at, "par": challenge.par, "podium": podium}


# -- pruning (the beat): the outbox keeps what ended for WEBHOOK_KEEP_SECONDS --------

#: rows the prune deletes per statement (each a short transaction)
PRUNE_BATCH = 1000


def prune(app: Flask, now: datetime | None = None, until: float | None = None) -> dict[str, int]:
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
