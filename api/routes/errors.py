"""The services' domain errors as HTTP problems, in one table (:data:`PROBLEMS`): each
error class and the problem that answers it. The handlers are app-wide, so a view lets a
service's refusal through (from the solver's queue, or from :mod:`api.players.accounts`) and the
table answers it, with ``Retry-After`` where waiting helps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.wrappers import Response

from api.platform.auth import unauthorized
from api.platform.problems import Problem, invalid_field
from api.players.accounts import BadClaim, BadName, BadToken, KeyNotToken, NameTaken, TokenNeeded, WrongPlayer
from api.solver.queue import BrokerDown, ClientBusy, NoSuchHint, QueueFull, SolverError


def _retry(error: SolverError) -> dict[str, str] | None:
    """``Retry-After`` for a solver's error that says how long waiting takes."""
    return {"Retry-After": str(error.retry_after)} if error.retry_after else None


def _client_busy(error: ClientBusy) -> Problem:
    return Problem(429, f"too many searches at once: {error} (SOLVER_PENDING_PER_CLIENT); ask again in "
                        f"{error.retry_after} s", "rate-limited", headers=_retry(error))


def _queue_full(error: QueueFull) -> Problem:
    whose = "the places anonymous clients may hold (half of the queue; an API key is served ahead)" \
        if error.anonymous else "the places for searches"
    return Problem(503, f"the solver is busy: all {error.places} of {whose} are taken; ask again in "
                        f"{error.retry_after} s", headers=_retry(error))


def _broker_down(error: BrokerDown) -> Problem:
    return Problem(503, "the worker tier's broker did not take the search; ask again in a moment",
                   headers=_retry(error))


def _no_such_hint(error: NoSuchHint) -> Problem:
    return Problem(404, f"there is no such hint for this player: it was never handed to this player, or its "
                        f"answer expired (answers are kept {error.kept_seconds:g} s)", headers=_retry(error))


def _solver_off(error: SolverError) -> Problem:
    """``SolverOff``, and any other error of the solver's queue."""
    return Problem(503, "the solver is switched off on this server (SOLVER_ENABLED=0): only answers stored "
                        "earlier are served", headers=_retry(error))


def _token_needed(error: TokenNeeded) -> Problem:
    return unauthorized(f"{error.what} needs a player token: register with POST /api/v1/players and send "
                        "'Authorization: Bearer <token>'")


def _name_taken(error: NameTaken) -> Problem:
    return Problem(409, f"the name reads as {error.player.name!r}, an existing player's: choose another",
                   "name-taken", player=error.player.name)


#: each domain error class and the problem answering it (the most specific class listed wins)
PROBLEMS: dict[type[Exception], Callable[[Any], Problem]] = {
    # the solver's queue (api.solver.queue)
    ClientBusy: _client_busy,
    QueueFull: _queue_full,
    BrokerDown: _broker_down,
    NoSuchHint: _no_such_hint,
    SolverError: _solver_off,
    # players: who sends a request, and whom a record is for (api.players.accounts)
    TokenNeeded: _token_needed,
    KeyNotToken: lambda error: Problem(403, str(error), "forbidden"),
    BadToken: lambda error: unauthorized(str(error), "invalid_token"),
    WrongPlayer: lambda error: Problem(403, str(error), "wrong-player"),
    BadClaim: lambda error: invalid_field("player", str(error)),
    BadName: lambda error: invalid_field("name", str(error)),
    NameTaken: _name_taken,
}


def _handler(problem: Callable[[Any], Problem]) -> Callable[[Exception], Response]:
    return lambda error: problem(error).response()


def init_app(app: Flask) -> None:
    for kind, problem in PROBLEMS.items():
        app.register_error_handler(kind, _handler(problem))
