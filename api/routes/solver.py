"""``GET /deals/{code}/solvability``: can the deal be won (stored answers, searches in
worker processes) and ``POST /hint``: the next action of a winning line after a log.

Solvability is public without the winning line itself, which only admin keys see;
a hint needs a player token and is logged (``api.fairplay``). Besides the per-client
limit every endpoint has, each search they
start (a hint, or a deal the server has no answer for yet) counts against
``RATELIMIT_SOLVER`` per client IP; stored answers and polling a pending search
do not.
"""

from __future__ import annotations

import logging
import math
import time

from flask import Blueprint, current_app
from limits import parse_many

from verifier import replay
from verifier.solving import hint_code

from .. import db
from ..fairplay import disclose, hint_player, log_hint, sees_solutions
from ..limits import client_key, get_limiter
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
    admin = sees_solutions(db.session())  # the winning line itself is for admin keys only
    solver = get_solver()
    row = solver.request(db.session(), parse_code(code), charge=charge_search)
    if row.status == PENDING:
        return disclose(ANSWER.dump(row), admin), 202, {"Retry-After": str(solver.retry_after)}
    return disclose(ANSWER.dump(row), admin), 200, {}


@bp.post("/hint")
def hint() -> dict:
    player = hint_player(db.session())  # a hint needs a player token; every hint given is logged below
    solver = get_solver()
    body = load(REQUEST, json_body())
    code = parse_code(body["code"])
    verdict = replay(code, body["moves"])
    if not verdict.legal:
        raise rejected_log(verdict)
    solver.require_enabled()
    charge_search()
    budget = solver.hint_budget
    answer = hint_code(code, verdict.canonical, budget_seconds=budget.seconds, max_nodes=budget.nodes).to_json()
    log_hint(db.session(), player, str(code), verdict.actions, verdict.position)
    return answer
