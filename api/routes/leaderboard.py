"""``GET /leaderboard`` and ``GET /standings``: boards read from the tables that
``api/boards/reads.py`` keeps up to date on every write, a page at a time.

``/leaderboard`` ranks each player's best record, on one deal (``code``) or across
a variant (deals unlike each other). Best means the record kinds' rank chain
(``api.boards.kinds.RECORD_CHAIN``): won first, then more earned points (``verifier.earned``),
then fewer take-backs, then the lower move counter, then the earlier submission.
Records equal in all four share a rank (1, 2, 2, 4). ``/standings`` is the
like-for-like variant board: challenge points. Records that are not eligible
(``api.boards.kinds.eligible``: visible and ranked) take no part.

Every board answers with an ``ETag`` and ``304`` to a matching ``If-None-Match``;
pages go on with ``cursor`` (keyset: no page counts the rows before it);
``around=<player>`` answers the window of ranks around that player, and
``player=<name>`` adds that player's rank and percentile.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

from flask import Blueprint, Response, g, jsonify, request
from sqlalchemy import select

from api.boards import reads as boards
from api.challenges import windows as challenges
from api.platform import db
from api.platform.models import Record
from api.platform.problems import Problem, invalid_field
from api.routes import parse_code, query
from api.schemas import BoardQuerySchema, LeaderboardQuerySchema, LeaderboardSchema, StandingsSchema

bp = Blueprint("leaderboard", __name__)
LEADERBOARD, STANDINGS = LeaderboardSchema(), StandingsSchema()


def conditional(body: dict[str, Any]) -> Response:
    """``body`` as JSON with a strong ETag (a hash of the body); ``304`` when the client has it."""
    response = jsonify(body)
    response.add_etag()
    response.headers["Cache-Control"] = "no-cache"  # cache, but ask each time (a 304 is cheap to send)
    response.make_conditional(request)  # changes the response itself
    return response


def read_board(board: boards.Board, args: dict[str, Any]) -> dict[str, Any]:
    """The page a board query asks for: from the top, after ``cursor``, or ``around`` a player;
    with ``player``'s (or the ``around`` player's) rank and percentile."""
    connection = db.session().connection()
    limit = args["limit"]
    if "around" in args:
        if "cursor" in args:
            raise invalid_field("around", "give either around or cursor, not both")
        found = boards.around(connection, board, args["around"], limit)
        if found is None:
            raise Problem(404, f"{args['around']} has no entry on this board")
    else:
        try:
            found = boards.page(connection, board, limit, args.get("cursor"))
        except boards.BadCursor as error:
            raise invalid_field("cursor", str(error)) from None
    who = args.get("player", args.get("around"))
    if who is None:
        found["player"] = None
    elif who != args.get("around"):  # (around answers its player's standing itself)
        found["player"] = boards.standing(connection, board, who)
    return found


def withheld_codes() -> frozenset[str]:
    """The deals of the challenges running now or prepared ahead (``api.challenges.windows.secret_codes``), read once
    per request."""
    if "withheld_codes" not in g:
        g.withheld_codes = challenges.secret_codes(db.session(), datetime.now(UTC))
    return cast(frozenset[str], g.withheld_codes)


def with_records(ranked: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """Board entries with the columns of their records that the board does not keep (the code
    is None while it is a running challenge's deal)."""
    ids = [row.record_id for _, row in ranked]
    extra = {row.id: row for row in db.session().execute(
        select(Record.id, Record.code, Record.undos, Record.elapsed_ms, Record.server_elapsed_ms)
        .where(Record.id.in_(ids)))} if ids else {}
    withheld = withheld_codes() if ids else frozenset()
    return [{"rank": rank, "id": row.record_id, "player": row.player,
             "code": None if extra[row.record_id].code in withheld else extra[row.record_id].code,
             "won": row.won, "earned": row.earned, "score": row.score, "moves": row.moves, "takebacks": row.takebacks,
             "undos": extra[row.record_id].undos, "elapsed_ms": extra[row.record_id].elapsed_ms,
             "server_elapsed_ms": extra[row.record_id].server_elapsed_ms,
             "received_at": row.received_at} for rank, row in ranked]


def board_body(found: dict[str, Any], entries: Callable[[list[tuple[int, Any]]], list[dict[str, Any]]]
               ) -> dict[str, Any]:
    return {"entries": entries(found["ranked"]), "has_more": found["has_more"], "next_cursor": found["next_cursor"],
            "player": found["player"]}


@bp.get("/leaderboard")
def leaderboard() -> Response:
    args = query(LeaderboardQuerySchema())
    variant = args["variant"]
    code = None
    if "code" in args:
        code = parse_code(args["code"])
        if code.variant != variant:
            raise invalid_field("code", f"{code} is a {code.variant} deal, not {variant}")
    kind = ("deal" if code else "variant") + ("-nt" if args["no_takebacks"] else "")
    found = read_board(boards.board(kind, code or variant), args)
    filters = {"code": None if code is None else str(code), "no_takebacks": args["no_takebacks"],
               "limit": args["limit"]}
    return conditional(LEADERBOARD.dump({"variant": variant, "filters": filters, **board_body(found, with_records)}))


def standing_entries(ranked: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    return [{"rank": rank, "player": row.player, "points": row.points, "challenges_won": row.challenges_won,
             "challenges_played": row.challenges_played, "updated_at": row.updated_at} for rank, row in ranked]


@bp.get("/standings")
def standings() -> Response:
    args = query(BoardQuerySchema())
    variant = args["variant"]
    found = read_board(boards.board("standings", variant), args)
    return conditional(STANDINGS.dump({"variant": variant, "limit": args["limit"],
                                       **board_body(found, standing_entries)}))
