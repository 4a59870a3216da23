"""``GET /players/{name}/stats``: a player's statistics per variant (``api/players/stats.py``),
keyed on the records' ``player`` name."""

from __future__ import annotations

from flask import Blueprint, Response

from api.platform import db
from api.platform.problems import Problem
from api.players.stats import player_stats
from api.routes import load, query
from api.routes.leaderboard import conditional
from api.schemas import PlayerPathSchema, PlayerStatsSchema, StatsQuerySchema

bp = Blueprint("player_stats", __name__)
STATS, PLAYER_PATH = PlayerStatsSchema(), PlayerPathSchema()


@bp.get("/players/<path:name>/stats")
def get_player_stats(name: str) -> Response:
    checked = load(PLAYER_PATH, {"name": name}, root="path")["name"]
    args = query(StatsQuerySchema())
    variants = player_stats(db.session(), checked, args.get("variant"))
    if not variants:
        raise Problem(404, f"{checked} has no records" + (f" of {args['variant']}" if "variant" in args else ""))
    return conditional(STATS.dump({"player": checked, "variants": variants}))
