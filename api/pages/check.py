"""The log checker (part of the ``pages`` blueprint): ``/check``, a plain form that replays a
game code and a log and shows the verdict, and ``POST /frames.json``, the checker's replay
a window of positions at a time."""

from __future__ import annotations

from typing import Any

from flask import current_app, g, request, url_for

from api.pages.board import action_error, frames
from api.pages.views import EXAMPLE_CODE, bp, code_problem, render, requested_step, viewer_state
from api.pages.words import _
from api.platform import metrics
from api.platform.problems import Problem
from api.routes import json_body
from engine import GameCode, InvalidActionError, InvalidCodeError
from engine.actions import log_items
from verifier import replay


@bp.post("/frames.json")
def log_frames() -> dict[str, Any]:
    """The window of positions of a posted ``{"code", "moves", "step"}`` (the checker's replay)
    that holds ``step`` (0 when left out), for logs of at most ``FRAMES_MAX_ACTIONS`` actions:
    the log is replayed on every request, and one window of positions is made."""
    body = json_body()
    if not isinstance(body, dict) or not isinstance(body.get("code"), str) \
            or not isinstance(body.get("moves"), (str, list)):
        raise Problem(422, "body: expected {\"code\": a game code, \"moves\": a log as text or an array}",
                      "validation-error", errors=[{"field": "body", "message": "expected code and moves"}])
    step = body.get("step", 0)
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise Problem(422, "step: expected a whole number from 0", "validation-error",
                      errors=[{"field": "step", "message": "expected a whole number from 0"}])
    try:
        code = GameCode.from_text(body["code"])
    except InvalidCodeError as exc:
        raise Problem(422, f"code: {exc.message}", "invalid-code",
                      errors=[{"field": "code", "message": exc.message, "part": exc.part}]) from None
    try:
        return frames(code, body["moves"], current_app.config["FRAMES_MAX_ACTIONS"], step)
    except InvalidActionError as exc:  # an item that is neither text nor an action object
        raise Problem(422, f"moves: {exc.message}", "validation-error",
                      errors=[{"field": "moves", "message": exc.message}]) from None


class _FieldError(Exception):
    """A checker field that is missing or wrong, and why (in the page's language)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


@bp.route("/check", methods=["GET", "POST"])
def check() -> tuple[str, int]:
    """The checker: a plain form. With a code and a log (query or form fields) the page shows
    the verdict, the legal part's log and its last position, and the action that failed."""
    code_text = request.values.get("code", "").strip()
    moves = request.values.get("moves", "")
    context: dict[str, Any] = {"code": code_text, "moves": moves, "example": EXAMPLE_CODE, "verdict": None,
                               "field_error": None, "error_field": None}
    status = 200
    asked = "code" in request.values or "moves" in request.values
    if asked:
        try:
            context.update(check_log(code_text, moves))
        except _FieldError as exc:
            context.update(field_error=exc.message, error_field=exc.field)
            status = 422
    share = url_for("pages.check", code=code_text, moves=moves, _external=True,
                    **({"lang": g.explicit_lang} if g.explicit_lang else {})) if asked else request.url
    title = _("Check a log")
    if context["verdict"] is not None:
        title = _("Check of {code}", code=context["verdict"].code)
    return render("check.html", status, title=title, share_url=share,
                  page_scripts=["js/check.js"] if context["verdict"] is not None else [],
                  description=_("Paste a game code and a move log: the verifier replays it action by action."),
                  **context)


def check_log(code_text: str, moves: str) -> dict[str, Any]:
    """The checker's verdict on ``moves`` played on ``code_text``, and what the page shows of it."""
    if not code_text:
        raise _FieldError("code", _("Enter a game code such as {example}.", example=EXAMPLE_CODE))
    try:
        code = GameCode.from_text(code_text)
    except InvalidCodeError as exc:
        raise _FieldError("code", _("{code} is not a game code: {reason}", code=code_text,
                                    reason=code_problem(exc))) from None
    if not moves.strip():
        raise _FieldError("moves", _("Paste a move log."))
    limit = current_app.config["MAX_LOG_ACTIONS"]
    if len(log_items(moves)) > limit:
        raise _FieldError("moves", _("The log has more than {limit} actions.", limit=limit))
    verdict = replay(code, moves)
    metrics.verified(verdict)
    total = len(verdict.canonical)
    # the viewer opens at the last legal position (or the step asked for), with that page of the log
    return {"verdict": verdict, "failure": action_error(verdict.error) if verdict.error else None,
            "v": viewer_state(code, verdict.canonical, requested_step(total, total), None, total)}
