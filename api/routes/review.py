"""``GET /review`` (admin keys): the records waiting for a decision, oldest first, with their
flags and evidence. Deciding is ``POST /records/{id}/status`` (``api.routes.records``).
``GET /review/players``: players whose names were flagged (look-alikes kept by migration 0009)."""

from __future__ import annotations

from flask import Blueprint

from .. import db
from ..auth import authenticate
from ..fairplay import review_queue
from ..players import names_for_review
from ..schemas import PlayerReviewPageSchema, ReviewPageSchema, ReviewQuerySchema
from . import query

bp = Blueprint("review", __name__)
QUERY, PAGE, PLAYERS_PAGE = ReviewQuerySchema(), ReviewPageSchema(), PlayerReviewPageSchema()


@bp.get("/review")
def list_review() -> dict:
    session = db.session()
    authenticate(session, required=True, admin=True)
    args = query(QUERY)
    items, after = review_queue(session, args["after"], args["limit"])
    return PAGE.dump({"items": items, "next": after})


@bp.get("/review/players")
def list_players_for_review() -> dict:
    session = db.session()
    authenticate(session, required=True, admin=True)
    args = query(QUERY)
    items, after = names_for_review(session, args["after"], args["limit"])
    return PLAYERS_PAGE.dump({"items": items, "next": after})
