"""The webhook event types, declared once (``api.webhooks.delivery`` sends them; the API's enum, the
CLI's choices and the docs come from here). A module of its own so that the schemas can
read it without importing the sender."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventType:
    """One kind of event: its name (the payload's ``type``) and what it means."""

    name: str
    meaning: str


#: every event type, declared once: the API's enum, the CLI's choices and the docs come from here
EVENT_TYPES: tuple[EventType, ...] = (
    EventType("record.created", "a record was stored; `data` is the record as `GET /records/{id}` returns it, "
                                "with `ranked` and `flags`"),
    EventType("record.ranked_changed", "a record's status or ranking changed (a review decision, an admin's "
                                       "status change, or evidence re-evaluated); `data` is the record"),
    EventType("challenge.closed", "a challenge's window closed; `data` is the challenge with its final podium "
                                  "(every player ranked 1 to 3, ties included)"),
)
EVENTS = tuple(kind.name for kind in EVENT_TYPES)
#: the worker tier's task that makes one attempt at a delivery (registered by ``api.tasks``)
DELIVER_TASK = "api.deliver_webhook"
