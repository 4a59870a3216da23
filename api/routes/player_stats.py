"""``GET /players/{name}/stats``: a player's statistics per variant (``api/stats.py``),
keyed on the records' ``player`` name."""

from __future__ import annotations

from flask import Blueprint, Response

from .. import db
from ..problems import Problem
from ..schemas import PlayerPathSchema, PlayerStatsSchema, StatsQuerySchema
from ..stats import player_stats
from . import load, query
from .leaderboard import conditional

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
