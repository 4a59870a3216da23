"""``POST /verify``: replay a log without storing it; the answer is the verdict,
exactly as ``verifier replay --json`` prints it, legal or not."""

from __future__ import annotations

from flask import Blueprint

from api.pages.i18n import accepted_language, language_headers, localized_verdict
from api.platform import metrics
from api.routes import json_body, load, parse_code
from api.schemas import VerifyRequestSchema
from verifier import replay

bp = Blueprint("verify", __name__)
REQUEST = VerifyRequestSchema()  # schemas hold no per-request state: build them once


@bp.post("/verify")
def verify() -> tuple[dict, int, dict[str, str]]:
    body = load(REQUEST, json_body())
    lang = accepted_language()
    verdict = replay(parse_code(body["code"]), body["moves"], body.get("claimed"))
    metrics.verified(verdict)
    return localized_verdict(verdict, lang), 200, language_headers(lang)
