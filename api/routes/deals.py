"""``GET /deals/{code}``: the deal, exactly as ``verifier deal --json`` prints it."""

from __future__ import annotations

from flask import Blueprint

from verifier import deal_json

from ..schemas import DealQuerySchema
from . import parse_code, query

bp = Blueprint("deals", __name__)


@bp.get("/deals/<code>")
def get_deal(code: str) -> dict:
    args = query(DealQuerySchema())
    return deal_json(parse_code(code), reveal=args["reveal"])
