"""The blueprints, one per resource, all under ``/api/v1``, and the small
helpers they share to read a request (each failure is a :class:`Problem`, or a
domain error that :mod:`.errors` answers)."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask, request
from marshmallow import Schema, ValidationError
from sqlalchemy.orm import Session

from api.platform.auth import authenticate, bearer_token, keys_required
from api.platform.models import ApiKey, Player
from api.platform.problems import Problem, invalid_code, invalid_field, validation_problem
from api.players.accounts import is_player_token, token_owner, token_player
from api.routes import errors
from engine import GameCode, InvalidCodeError

PREFIX = "/api/v1"
#: no body of this API nests deeper than 4; a far deeper one is refused before anything recurses through it
MAX_DEPTH = 32


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: the body's parser: NaN and Infinity are not JSON
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def json_body() -> Any:
    """The request body as JSON: 415 unless it is declared JSON, 400 if it does not parse."""
    if not request.is_json:
        shown = request.mimetype or "none"
        raise Problem(415, f"the body must be JSON (Content-Type: application/json), not {shown}")
    raw = request.get_data(cache=True)  # 413 past MAX_CONTENT_LENGTH
    if not raw or raw.isspace():
        raise Problem(400, "the body is empty: expected a JSON object", "malformed-json")
    try:
        # (json.loads, with its detection of UTF-8, -16 or -32, without building a decoder each time)
        data = _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except RecursionError:
        raise _too_deep() from None
    except json.JSONDecodeError as exc:
        raise Problem(400, f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                      "malformed-json") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise Problem(400, f"the body is not valid JSON: {exc}", "malformed-json") from None
    # (nesting needs an opening bracket a level: few brackets in the body, no walk through it)
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise _too_deep()
    return data


def _too_deep() -> Problem:
    return invalid_field("body", f"JSON nested more than {MAX_DEPTH} levels deep")


def _depth(value: Any) -> int:
    """How deep arrays and objects nest (without recursion); stops counting past :data:`MAX_DEPTH`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def load(schema: Schema, data: Any, root: str = "body") -> dict[str, Any]:
    """Validate ``data`` with ``schema``; 422 naming every wrong field."""
    try:
        return schema.load(data)
    except ValidationError as error:
        raise validation_problem(error, root) from None


def query(schema: Schema) -> dict[str, Any]:
    return load(schema, request.args.to_dict(), root="query")


def parse_code(text: str, field: str = "code") -> GameCode:
    """A game code, or 422 naming the part and position that are wrong."""
    try:
        return GameCode.from_text(text)
    except InvalidCodeError as error:
        raise invalid_code(error, field) from None


def request_player(session: Session, what: str, doing: str) -> Player:
    """The player of the request's player token, for ``what`` needs one ("a hint"): 401 without
    one or with one no player holds, 403 with an API key (which cannot be ``doing`` it: "ask
    for hints"), once the key is checked (an unknown key is 401 as anywhere else)."""
    token = bearer_token()
    if token is not None and not is_player_token(token):
        authenticate(session, required=True)
    return token_player(session, token, what, doing)


def credentials(session: Session) -> Player | ApiKey | None:
    """Who sends a record: the player of a player token, else the API key (checked as
    :func:`api.platform.auth.authenticate` does; ``None`` without one where keys are optional)."""
    token = bearer_token()
    if token is not None and is_player_token(token):
        return token_owner(session, token)
    return authenticate(session, required=keys_required())


def init_app(app: Flask) -> None:
    errors.init_app(app)
    # (a real cycle: each view module imports this package's request helpers)
    from api.routes import (
        challenges,
        deals,
        health,
        leaderboard,
        openapi,
        player_stats,
        players,
        records,
        review,
        solver,
        verify,
        webhooks,
    )

    for module in (deals, verify, records, leaderboard, challenges, player_stats, solver, health, openapi, players,
                   review, webhooks):
        app.register_blueprint(module.bp, url_prefix=PREFIX)
