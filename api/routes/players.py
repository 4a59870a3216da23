"""``/players``: register a name (the answer holds the player's token, shown once) and read a profile."""

from __future__ import annotations

from flask import Blueprint, url_for
from sqlalchemy.exc import IntegrityError

from api.platform import db
from api.platform.problems import Problem
from api.players.accounts import NameTaken, find_player, register
from api.routes import json_body, load
from api.schemas import NewPlayerSchema, PlayerRequestSchema, PlayerSchema

bp = Blueprint("players", __name__)
REQUEST, NEW_PLAYER, PLAYER = PlayerRequestSchema(), NewPlayerSchema(), PlayerSchema()  # no per-request state


@bp.post("/players")
def create_player() -> tuple[dict, int, dict[str, str]]:
    """Register a name (a name that cannot be one, or one taken, is refused: ``api.routes.errors``)."""
    body = load(REQUEST, json_body())
    session = db.session()
    try:
        player, token = register(session, body["name"])
        session.commit()
    except IntegrityError:  # registered a moment ago by a concurrent request
        session.rollback()
        existing = find_player(session, body["name"])
        if existing is None:
            raise
        raise NameTaken(existing) from None
    answer = NEW_PLAYER.dump({"id": player.id, "name": player.name, "token": token})
    return answer, 201, {"Location": url_for("players.get_player", name=player.name)}


@bp.get("/players/<name>")
def get_player(name: str) -> dict:
    """The player whose name reads as ``name`` (look-alike spellings find the same player)."""
    player = find_player(db.session(), name) if len(name) <= 256 else None
    if player is None:
        raise Problem(404, f"there is no player {name!r}")
    return PLAYER.dump(player)
