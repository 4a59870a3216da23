"""``GET /review`` (admin keys): the records waiting for a decision, oldest first, with their
flags and evidence. Deciding is ``POST /records/{id}/status`` (``api.routes.records``).
``GET /review/players``: players whose names were flagged (look-alikes kept by migration 0009)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint
from marshmallow import Schema
from sqlalchemy.orm import Session

from api.fairplay.judging import review_queue
from api.platform import db
from api.platform.auth import authenticate
from api.players.accounts import names_for_review
from api.routes import query
from api.schemas import PlayerReviewPageSchema, ReviewPageSchema, ReviewQuerySchema

bp = Blueprint("review", __name__)
QUERY, PAGE, PLAYERS_PAGE = ReviewQuerySchema(), ReviewPageSchema(), PlayerReviewPageSchema()


def _page(read: Callable[[Session, int, int], tuple[list[Any], int | None]], schema: Schema) -> dict:
    """One page of a review list (admin keys): the items after ``after``, and the next page's ``after``."""
    session = db.session()
    authenticate(session, required=True, admin=True)
    args = query(QUERY)
    items, after = read(session, args["after"], args["limit"])
    return schema.dump({"items": items, "next": after})


@bp.get("/review")
def list_review() -> dict:
    return _page(review_queue, PAGE)


@bp.get("/review/players")
def list_players_for_review() -> dict:
    return _page(names_for_review, PLAYERS_PAGE)
