"""Webhook endpoints: registered by an admin (a URL, the event types it wants), their secrets
(shown once, rotated with an overlap) and their deliveries as an admin reads them."""


from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.platform.models import WebhookDelivery, WebhookEndpoint
from api.webhooks.delivery import forget_subscriptions
from api.webhooks.events import EVENTS
from api.webhooks.targets import WebhookError, check_target

#: how long the secret before a rotation still signs (receivers switch over within it)
ROTATION_OVERLAP = timedelta(hours=24)
#: endpoints at most (each is sent every event it wants)
MAX_ENDPOINTS = 100


class UnknownEndpoint(LookupError):
    """No endpoint with that id."""


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
    forget_subscriptions()
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
    forget_subscriptions()


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
