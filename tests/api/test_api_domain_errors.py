"""The services' domain errors and the one table in routes/ that answers them (api.routes.errors)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import api.players.accounts
import api.solver.queue
from api.platform.models import Player
from api.platform.problems import TYPE_BASE, TYPES
from api.routes.errors import PROBLEMS

ROOT = Path(__file__).resolve().parents[2]


def domain_errors(module: object) -> list[type[Exception]]:
    return [c for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, Exception) and c.__module__ == module.__name__]  # type: ignore[attr-defined]


def answering(kind: type[Exception]) -> type[Exception] | None:
    """The class whose entry answers ``kind`` (the most specific listed, as Flask looks them up)."""
    return next((c for c in kind.__mro__ if c in PROBLEMS), None)


@pytest.mark.parametrize("module", [api.players.accounts, api.solver.queue], ids=lambda m: m.__name__)
def test_every_domain_error_of_players_and_the_solver_has_its_problem(module):
    errors = domain_errors(module)
    raised = [kind for kind in errors if not any(other is not kind and issubclass(other, kind) for other in errors)]
    assert raised  # (a base class of others is never raised itself)
    for kind in raised:
        assert answering(kind) not in (None, Exception, ValueError), kind


def test_the_players_service_speaks_no_http():
    tree = ast.parse((ROOT / "api" / "players" / "accounts.py").read_text(encoding="utf-8"))
    imported = {(node.module or "", alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    imported |= {(alias.name, "") for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {m for m, _ in imported if m.split(".")[0] in ("flask", "werkzeug") or m == "problems"}
    http = {"Problem", "invalid_field", "unauthorized", "authenticate", "bearer_token", "keys_required"}
    assert not {name for _, name in imported} & http


def answer(app, error: Exception) -> tuple[int, dict, dict]:
    with app.test_request_context("/api/v1/records"):
        response = PROBLEMS[answering(type(error))](error).response()
        return response.status_code, response.get_json(), dict(response.headers)


def test_the_players_refusals_are_answered_as_the_contract_says(app):
    ann = Player(id=7, name="ann")
    cases = [
        (api.players.accounts.TokenNeeded("a hint"), 401, "unauthorized",
         "a hint needs a player token: register with POST /api/v1/players and send 'Authorization: Bearer <token>'"),
        (api.players.accounts.KeyNotToken("a hint", "ask for hints"), 403, "forbidden",
         "a hint needs a player token; an API key cannot ask for hints"),
        (api.players.accounts.BadToken(), 401, "unauthorized", "the player token is not valid"),
        (api.players.accounts.WrongPlayer("not yours"), 403, "wrong-player", "not yours"),
        (api.players.accounts.BadClaim("Missing data for required field."), 422, "validation-error",
         "player: Missing data for required field."),
        (api.players.accounts.BadName("a name must contain a letter or a digit"), 422, "validation-error",
         "name: a name must contain a letter or a digit"),
        (api.players.accounts.NameTaken(ann), 409, "name-taken",
         "the name reads as 'ann', an existing player's: choose another"),
    ]
    for error, status, kind, detail in cases:
        code, body, headers = answer(app, error)
        assert (code, body["status"], body["type"], body["title"], body["detail"]) == (
            status, status, TYPE_BASE + kind, TYPES[kind], detail), error
        assert ("WWW-Authenticate" in headers) == (status == 401)
    assert answer(app, api.players.accounts.BadToken())[2]["WWW-Authenticate"].endswith('error="invalid_token"')
    assert "error=" not in answer(app, api.players.accounts.TokenNeeded("a hint"))[2]["WWW-Authenticate"]
    assert answer(app, api.players.accounts.NameTaken(ann))[1]["player"] == "ann"


def test_the_solvers_errors_keep_their_retry_after(app):
    assert answer(app, api.solver.queue.ClientBusy(2, 5))[2]["Retry-After"] == "5"
    assert answer(app, api.solver.queue.BrokerDown())[2]["Retry-After"] == "2"
    code, body, headers = answer(app, api.solver.queue.SolverOff())
    assert code == 503 and "SOLVER_ENABLED=0" in body["detail"] and "Retry-After" not in headers
