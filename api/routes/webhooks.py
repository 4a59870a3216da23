"""``/webhooks`` (admin keys): the endpoints game backends receive events at
(Standard Webhooks), their secrets and their deliveries (``api.webhooks.delivery``)."""

from __future__ import annotations

from flask import Blueprint, current_app, url_for

from api.platform import db
from api.platform.auth import authenticate
from api.platform.problems import Problem, invalid_field
from api.routes import json_body, load, query
from api.schemas import (
    DeliveryPageSchema,
    DeliveryQuerySchema,
    WebhookListSchema,
    WebhookRequestSchema,
    WebhookSchema,
    WebhookSecretSchema,
)
from api.webhooks import delivery as webhooks

bp = Blueprint("webhooks", __name__)
REQUEST, ENDPOINT, WITH_SECRET, LIST = (WebhookRequestSchema(), WebhookSchema(), WebhookSecretSchema(),
                                        WebhookListSchema())
DELIVERY_QUERY, DELIVERY_PAGE = DeliveryQuerySchema(), DeliveryPageSchema()


def _admin() -> str:
    key = authenticate(db.session(), required=True, admin=True)
    assert key is not None
    return key.name


def _endpoint(webhook_id: int) -> webhooks.WebhookEndpoint:
    try:
        return webhooks.get_endpoint(db.session(), webhook_id)
    except webhooks.UnknownEndpoint as error:
        raise Problem(404, str(error)) from None


@bp.post("/webhooks")
def create_webhook() -> tuple[dict, int, dict[str, str]]:
    actor = _admin()
    body = load(REQUEST, json_body())
    session = db.session()
    try:
        endpoint, secret = webhooks.create_endpoint(session, body["url"], body["events"], actor,
                                                    current_app.config["WEBHOOK_ALLOW_PRIVATE"])
    except webhooks.WebhookError as error:
        if error.field:
            raise invalid_field(error.field, str(error)) from None
        raise Problem(409, str(error), "too-many-webhooks") from None
    session.commit()
    assert endpoint.secret == secret
    return WITH_SECRET.dump(endpoint), 201, {"Location": url_for("webhooks.get_webhook", webhook_id=endpoint.id)}


@bp.get("/webhooks")
def list_webhooks() -> dict:
    _admin()
    return LIST.dump({"items": webhooks.list_endpoints(db.session())})


@bp.get("/webhooks/<int:webhook_id>")
def get_webhook(webhook_id: int) -> dict:
    _admin()
    return ENDPOINT.dump(_endpoint(webhook_id))


@bp.delete("/webhooks/<int:webhook_id>")
def delete_webhook(webhook_id: int) -> tuple[str, int]:
    _admin()
    _endpoint(webhook_id)
    session = db.session()
    webhooks.delete_endpoint(session, webhook_id)
    session.commit()
    return "", 204


@bp.post("/webhooks/<int:webhook_id>/secret")
def rotate_webhook_secret(webhook_id: int) -> dict:
    """A new secret; the old one still signs beside it for a day."""
    _admin()
    _endpoint(webhook_id)
    session = db.session()
    endpoint, _ = webhooks.rotate_secret(session, webhook_id)
    session.commit()
    return WITH_SECRET.dump(endpoint)


@bp.get("/webhooks/<int:webhook_id>/deliveries")
def list_deliveries(webhook_id: int) -> dict:
    _admin()
    args = query(DELIVERY_QUERY)
    _endpoint(webhook_id)
    items, more = webhooks.deliveries(db.session(), webhook_id, args.get("before"), args["limit"])
    return DELIVERY_PAGE.dump({"items": items, "has_more": more, "next_before": items[-1].id if more else None})
