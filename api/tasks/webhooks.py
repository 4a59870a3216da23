"""Webhook deliveries, the sweep of what is due, and the outbox's prune."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from flask import current_app, has_app_context

from api.tasks.schedule import PRUNE_SOFT_LIMIT, SWEEP_SOFT_LIMIT, WEBHOOK_PRUNE, WEBHOOK_SWEEP_AFTER
from api.tasks.worker import flask_app
from api.webhooks import delivery as webhooks

log = logging.getLogger(__name__)


def deliver_webhook(delivery_id: int) -> str:
    """One attempt at a webhook delivery (``api.webhooks.delivery.deliver``); a retry is sent again by it."""
    app = flask_app()
    with app.app_context():
        return webhooks.deliver(app, delivery_id)


def webhook_sweep() -> dict[str, int]:
    """Announce closed challenges and send again the webhook deliveries due for
    :data:`WEBHOOK_SWEEP_AFTER` seconds that no worker holds (their tasks were lost)."""
    app = flask_app()
    with app.app_context():
        return webhooks.sweep(app, lost_after=timedelta(seconds=WEBHOOK_SWEEP_AFTER))


def webhook_prune() -> dict[str, int]:
    """Delete the webhook deliveries that ended and their messages, past ``WEBHOOK_KEEP_SECONDS``."""
    app = flask_app()
    with app.app_context():
        try:
            return webhooks.prune(app, until=time.monotonic() + PRUNE_SOFT_LIMIT - SWEEP_SOFT_LIMIT)
        except SoftTimeLimitExceeded:  # (the next run goes on)
            log.warning("%s stopped at its time limit (%d s)", WEBHOOK_PRUNE, PRUNE_SOFT_LIMIT)
            return {}


def dispatch_written(sender: Any, ids: list[int]) -> None:
    """The event of deliveries written with a change that committed: have them sent (within an
    app's context: the request's or the task's that committed it)."""
    if has_app_context():
        webhooks.dispatch(current_app._get_current_object(), ids)  # type: ignore[attr-defined]
