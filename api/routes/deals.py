"""``GET /deals/{code}``: the deal, exactly as ``verifier deal --json`` prints it;
``GET /deals/random``: a deal picked at random, or one proved winnable."""

from __future__ import annotations

import random

from flask import Blueprint, current_app

from api import tasks
from api.challenges import windows as challenges
from api.platform import db
from api.platform.problems import Problem
from api.routes import parse_code, query
from api.routes.leaderboard import withheld_codes
from api.schemas import DealQuerySchema, RandomDealQuerySchema
from engine import BY_VARIANT, GameCode
from verifier import deal_json

bp = Blueprint("deals", __name__)
#: seconds to wait before asking again while the winnable pool is empty
POOL_RETRY_AFTER = 60


@bp.get("/deals/<code>")
def get_deal(code: str) -> dict:
    args = query(DealQuerySchema())
    return deal_json(parse_code(code), reveal=args["reveal"])


@bp.get("/deals/random")
def random_deal() -> dict:
    """Any deal of the variant; with ``winnable=true`` one from the pool of deals the worker
    tier proved winnable, never a running or upcoming challenge's (503 with Retry-After while
    that pool is empty, and the worker tier is asked to refill it; embedded, a few deals are
    searched in the request)."""
    args = query(RandomDealQuerySchema())
    variant = args["variant"]
    if not args["winnable"]:
        rules = BY_VARIANT[variant]
        code = GameCode(rules.game, rules.letter, random.SystemRandom().randrange(challenges.DEAL_NUMBERS))
        return {"code": str(code), "variant": variant, "winnable": None}
    withheld = withheld_codes()  # the running and upcoming challenges' deals: never handed out
    picked = challenges.random_winnable(db.session(), variant, withheld)
    if picked is None:
        tasks.ask_to_refill(current_app, variant)
        picked = challenges.random_winnable(db.session(), variant, withheld)
    if picked is None:
        raise Problem(503, f"no {variant} deal is proved winnable yet: the pool is being filled; ask again in "
                           f"{POOL_RETRY_AFTER} s", headers={"Retry-After": str(POOL_RETRY_AFTER)})
    return {"code": picked, "variant": variant, "winnable": True}
