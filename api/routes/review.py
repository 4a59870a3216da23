"""``GET /review`` (admin keys): the records waiting for a decision, oldest first, with their
flags and evidence. Deciding is ``POST /records/{id}/status`` (``api.routes.records``)."""

from __future__ import annotations

from flask import Blueprint

from .. import db
from ..auth import authenticate
from ..fairplay import review_queue
from ..schemas import ReviewPageSchema, ReviewQuerySchema
from . import query

bp = Blueprint("review", __name__)
QUERY, PAGE = ReviewQuerySchema(), ReviewPageSchema()


@bp.get("/review")
def list_review() -> dict:
    session = db.session()
    authenticate(session, required=True, admin=True)
    args = query(QUERY)
    items, after = review_queue(session, args["after"], args["limit"])
    return PAGE.dump({"items": items, "next": after})
