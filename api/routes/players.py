"""``/players``: register a name (the answer holds the player's token, shown once) and read a profile."""

from __future__ import annotations

from flask import Blueprint, url_for
from sqlalchemy.exc import IntegrityError

from .. import db
from ..players import BadName, NameTaken, find_player, register
from ..problems import Problem, invalid_field
from ..schemas import NewPlayerSchema, PlayerRequestSchema, PlayerSchema
from . import json_body, load

bp = Blueprint("players", __name__)
REQUEST, NEW_PLAYER, PLAYER = PlayerRequestSchema(), NewPlayerSchema(), PlayerSchema()  # no per-request state


def name_taken(error: NameTaken) -> Problem:
    return Problem(409, f"the name reads as {error.player.name!r}, an existing player's: choose another",
                   "name-taken", player=error.player.name)


@bp.post("/players")
def create_player() -> tuple[dict, int, dict[str, str]]:
    body = load(REQUEST, json_body())
    session = db.session()
    try:
        player, token = register(session, body["name"])
        session.commit()
    except BadName as error:
        raise invalid_field("name", str(error)) from None
    except NameTaken as error:
        raise name_taken(error) from None
    except IntegrityError:  # registered a moment ago by a concurrent request
        session.rollback()
        existing = find_player(session, body["name"])
        if existing is None:
            raise
        raise name_taken(NameTaken(existing)) from None
    answer = NEW_PLAYER.dump({"id": player.id, "name": player.name, "token": token})
    return answer, 201, {"Location": url_for("players.get_player", name=player.name)}


@bp.get("/players/<name>")
def get_player(name: str) -> dict:
    """The player whose name reads as ``name`` (look-alike spellings find the same player)."""
    player = find_player(db.session(), name) if len(name) <= 256 else None
    if player is None:
        raise Problem(404, f"there is no player {name!r}")
    return PLAYER.dump(player)
