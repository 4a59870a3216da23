"""``GET /deals/{code}/solvability``: can the deal be won, ``POST /hint``: the next
action of a winning line after a log, and ``GET /hints/{id}``: a pending hint polled.

All public, and all answer at once: a stored answer (200), or ``202`` while the
worker tier searches (``api/solving.py``). Besides the per-client limit every
endpoint has, each search they start counts against ``RATELIMIT_SOLVER`` per
client IP and takes one of the client's ``SOLVER_PENDING_PER_CLIENT`` places;
stored answers and polling a pending search do neither.
"""

from __future__ import annotations

import logging
import math
import time

from flask import Blueprint, current_app, url_for
from limits import parse_many

from verifier import replay

from .. import db
from ..limits import client_key, get_limiter, search_client
from ..models import HintAnswer
from ..problems import Problem, rejected_log
from ..schemas import HintRequestSchema, SolvabilityQuerySchema, SolvabilitySchema
from ..solving import PENDING, get_solver
from . import json_body, load, parse_code, query

bp = Blueprint("solver", __name__)
log = logging.getLogger(__name__)
QUERY, REQUEST, ANSWER = SolvabilityQuerySchema(), HintRequestSchema(), SolvabilitySchema()  # no per-request state

#: the solver limit's scope in the rate-limit storage (one budget per client for both endpoints)
SCOPE = "solver"


def charge_search() -> None:
    """Count one search against ``RATELIMIT_SOLVER`` for this client; 429 past it.
    When the counters' storage fails, the search is allowed (as for the other limits)."""
    config = current_app.config
    if not config["RATELIMIT_ENABLED"]:
        return
    strategy = get_limiter().limiter
    identifiers = (config["RATELIMIT_KEY_PREFIX"], client_key(), SCOPE)
    for item in parse_many(config["RATELIMIT_SOLVER"]):
        try:
            allowed = strategy.hit(item, *identifiers)
            reset = strategy.get_window_stats(item, *identifiers).reset_time if not allowed else 0.0
        except Exception as error:  # the storage went away: do not refuse because of it
            log.warning("solver rate limit not checked: %s", error)
            return
        if not allowed:
            retry_after = max(1, math.ceil(reset - time.time()))
            raise Problem(429, f"too many searches: the solver's limit is {item} per client; try again in "
                               f"{retry_after} s", "rate-limited", headers={"Retry-After": str(retry_after)})


@bp.get("/deals/<code>/solvability")
def get_solvability(code: str) -> tuple[dict, int, dict[str, str]]:
    query(QUERY)
    solver = get_solver()
    row = solver.request(db.session(), parse_code(code), client=search_client, charge=charge_search)
    if row.status == PENDING:
        return ANSWER.dump(row), 202, {"Retry-After": str(solver.retry_after)}
    return ANSWER.dump(row), 200, {}


def hint_answer(row: HintAnswer) -> tuple[dict, int, dict[str, str]]:
    """A hint row as the client sees it: the hint (200), or pending (202) with where to poll."""
    poll = url_for("solver.get_hint", hint_id=row.id)
    if row.status == PENDING or row.answer is None:
        body = {"code": row.code, "status": PENDING, "hint": None, "reason": row.reason, "line_length": None,
                "after_actions": row.after_actions, "search": None, "coverage": None}
        return {**body, "id": row.id, "poll": poll}, 202, {
            "Retry-After": str(get_solver().hint_retry_after), "Location": poll}
    return {**row.answer, "id": row.id, "poll": poll}, 200, {}


@bp.post("/hint")
def hint() -> tuple[dict, int, dict[str, str]]:
    solver = get_solver()
    body = load(REQUEST, json_body())
    code = parse_code(body["code"])
    verdict = replay(code, body["moves"])
    if not verdict.legal:
        raise rejected_log(verdict)
    row = solver.request_hint(db.session(), code, verdict.canonical_text, verdict.actions, client=search_client,
                              charge=charge_search)
    return hint_answer(row)


@bp.get("/hints/<int:hint_id>")
def get_hint(hint_id: int) -> tuple[dict, int, dict[str, str]]:
    return hint_answer(get_solver().get_hint(db.session(), hint_id))
