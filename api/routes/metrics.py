"""``GET /metrics`` (the families of :mod:`api.platform.metrics`, to loopback and the networks of
``METRICS_ALLOW``) and the HTTP side's instrumentation: each request's duration and status, and
the database pool's connections."""

from __future__ import annotations

import time

from flask import Blueprint, Flask, Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.platform.metrics import (
    METHODS,
    OTHER_METHOD,
    REQUEST_DURATION,
    REQUESTS,
    UNMATCHED,
    QueueDepth,
    allowed,
    registry,
    watch_pool,
)
from api.platform.problems import Problem

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    if not allowed(request.remote_addr, current_app.config["METRICS_ALLOW"]):
        raise Problem(403, "the metrics are served to loopback and to the networks of METRICS_ALLOW only")
    extra = [QueueDepth(current_app.extensions["api.celery"])] if current_app.config["CELERY_BROKER_URL"] else []
    return Response(generate_latest(registry(extra)), mimetype=CONTENT_TYPE_LATEST)


def _observe(response: Response) -> Response:
    started = g.get("request_started")
    if started is not None:
        rule = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        method = request.method if request.method in METHODS else OTHER_METHOD
        status = str(response.status_code)
        REQUEST_DURATION.labels(method, rule, status).observe(time.perf_counter() - started)
        REQUESTS.labels(method, status).inc()
    return response


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    app.after_request(_observe)
    watch_pool(app.extensions["api.platform.db"].engine)
