"""``POST /verify``: replay a log without storing it; the answer is the verdict,
exactly as ``verifier replay --json`` prints it, legal or not."""

from __future__ import annotations

from flask import Blueprint

from verifier import replay

from ..i18n import localized_verdict
from ..schemas import VerifyRequestSchema
from . import json_body, load, parse_code

bp = Blueprint("verify", __name__)


@bp.post("/verify")
def verify() -> dict:
    body = load(VerifyRequestSchema(), json_body())
    return localized_verdict(replay(parse_code(body["code"]), body["moves"], body.get("claimed")))
