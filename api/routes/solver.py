"""``GET /deals/{code}/solvability``: can the deal be won, ``POST /hint``: the next
action of a winning line after a log, and ``GET /hints/{id}``: a pending hint polled.

Solvability is public without the winning line itself, which only admin keys see
(``api.fairplay.judging``). All answer at once: a stored answer (200), or ``202`` while the
worker tier searches (``api/solver/queue.py``). A hint needs a player token, and every hint
handed over is logged for that player; its id is a random token, readable by that
player only (404 for anyone else). Besides the per-client limit every endpoint has,
each search they start counts against ``RATELIMIT_SOLVER`` per client IP and takes one
of the client's ``SOLVER_PENDING_PER_CLIENT`` places; stored answers and polling a
pending search do neither.
"""

from __future__ import annotations

import logging
import math
import time

from flask import Blueprint, current_app, url_for
from limits import parse_many
from sqlalchemy.orm import Session

from api.fairplay.judging import disclose, log_hint
from api.platform import db
from api.platform.auth import authenticate, bearer_token
from api.platform.limits import client_key, get_limiter, search_client
from api.platform.models import HintAnswer, HintRequest, Player
from api.platform.problems import Problem, rejected_log
from api.players.accounts import is_player_token
from api.routes import json_body, load, parse_code, query, request_player
from api.routes.schemas import HintRequestSchema, SolvabilityQuerySchema, SolvabilitySchema
from api.solver.queue import NoSuchHint, Solver
from api.solver.searches import PENDING, Query
from engine import Game
from verifier import play

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


def get_solver() -> Solver:
    """The app's solver (built by the app factory)."""
    return current_app.extensions["api.solver"]  # type: ignore[no-any-return]


def hint_player(session: Session) -> Player:
    """The player asking for a hint: a hint needs a player token (401 without one, 403 with an API key)."""
    return request_player(session, "a hint", "ask for hints")


def sees_solutions(session: Session) -> bool:
    """Whether the request comes with an admin key (a sent key is checked; a player token never is one)."""
    token = bearer_token()
    if token is None or is_player_token(token):
        return False
    key = authenticate(session, required=False)
    return key is not None and key.admin


@bp.get("/deals/<code>/solvability")
def get_solvability(code: str) -> tuple[dict, int, dict[str, str]]:
    query(QUERY)
    admin = sees_solutions(db.session())  # the winning line itself is for admin keys only
    solver = get_solver()
    row = solver.request(db.session(), solver.deals, Query(parse_code(code)), client=search_client,
                         charge=charge_search)
    if row.status == PENDING:
        return disclose(ANSWER.dump(row), admin), 202, {"Retry-After": str(solver.deals.retry_after)}
    return disclose(ANSWER.dump(row), admin), 200, {}


def hint_answer(row: HintAnswer, player: Player, game: Game | None,
                token: str | None = None) -> tuple[dict, int, dict[str, str]]:
    """A hint row as ``player`` sees it: the hint (200), logged as handed to them at the
    position of ``game`` (replayed from the row's log when not given), or pending (202) with
    where to poll; either way under the player's own ``token`` (made now when not given)."""
    solver = get_solver()
    code, status, answer, after_actions, reason = row.code, row.status, row.answer, row.after_actions, row.reason
    log_text = row.log
    if token is None:
        token = solver.hand_out(db.session(), player.id, row)
    poll = url_for("solver.get_hint", hint_id=token)
    if status == PENDING or answer is None:
        body = {"code": code, "status": PENDING, "hint": None, "reason": reason, "line_length": None,
                "after_actions": after_actions, "continued": False, "search": None, "coverage": None}
        return {**body, "id": token, "poll": poll}, 202, {
            "Retry-After": str(solver.hints.retry_after), "Location": poll}
    if game is None:
        game = play(parse_code(code), log_text).game
    log_hint(db.session(), player, code, after_actions, game, answer.get("hint"))
    return {"continued": False, **answer, "id": token, "poll": poll}, 200, {}  # (answers kept from before: a search)


@bp.post("/hint")
def hint() -> tuple[dict, int, dict[str, str]]:
    player = hint_player(db.session())  # a hint needs a player token
    solver = get_solver()
    body = load(REQUEST, json_body())
    code = parse_code(body["code"])
    played = play(code, body["moves"])  # (the log's one replay: the hint's lines are tried after its game)
    verdict = played.verdict
    if not verdict.legal:
        raise rejected_log(verdict)
    made: list[str] = []  # the token stored with a new row, in the request's one commit

    def token_for(row: HintAnswer) -> list[HintRequest]:
        handed = solver.hint_token(player.id, row)
        made[:] = [handed.token]
        return [handed]

    row = solver.hint(db.session(), Query(code, verdict.canonical_text, verdict.actions), played,
                      client=search_client, charge=charge_search, with_new_row=token_for)
    return hint_answer(row, player, played.game, made[0] if made else None)


@bp.get("/hints/<hint_id>")
def get_hint(hint_id: str) -> tuple[dict, int, dict[str, str]]:
    solver = get_solver()
    if not is_player_token(bearer_token()):  # anonymous, or an API key: not the player it was handed to
        raise NoSuchHint(solver.hints.kept.total_seconds())
    player = hint_player(db.session())  # polling hands the hint over too: the same token, the same log
    row = solver.handed(db.session(), hint_id, player.id)  # someone else's hint: 404
    return hint_answer(row, player, None, hint_id)
