"""``GET /openapi.yaml``: the hand-written contract, served as it is."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, current_app
from flask.wrappers import Response

bp = Blueprint("openapi", __name__)


@bp.get("/openapi.yaml")
def openapi_spec() -> Response:
    return current_app.response_class(Path(current_app.config["OPENAPI_PATH"]).read_bytes(),
                                      mimetype="application/yaml")
