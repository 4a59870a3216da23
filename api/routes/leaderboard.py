"""``GET /leaderboard``: each player's best record for a variant, ranked.

Best means: won first, then the higher score, then the lower move counter, then
the earlier submission. Records equal in won, score and moves share a rank
(1, 2, 2, 4). Window functions do both steps on SQLite (3.25+) and PostgreSQL.
Only records that count for boards take part (``api.fairplay.counts_for_boards``:
visible and ranked).
"""

from __future__ import annotations

from flask import Blueprint
from sqlalchemy import func, select

from .. import db
from ..fairplay import counts_for_boards
from ..models import Record
from ..problems import invalid_field
from ..schemas import LeaderboardQuerySchema, LeaderboardSchema
from . import parse_code, query

bp = Blueprint("leaderboard", __name__)

#: what makes a record better, and what ties share a rank
RANKING = (Record.won.desc(), Record.score.desc(), Record.moves.asc())
#: … then the earlier submission, then the lower id, so that the order is total
BEST_FIRST = (*RANKING, Record.received_at.asc(), Record.id.asc())
#: the columns an entry shows
ENTRY_COLUMNS = (Record.id, Record.player, Record.code, Record.won, Record.score, Record.moves, Record.takebacks,
                 Record.undos, Record.elapsed_ms, Record.received_at)


@bp.get("/leaderboard")
def leaderboard() -> dict:
    args = query(LeaderboardQuerySchema())
    variant = args["variant"]
    filters = [Record.variant == variant, counts_for_boards()]  # hidden, in review or unranked: never on a board
    code = None
    if "code" in args:
        code = parse_code(args["code"])
        if code.variant != variant:
            raise invalid_field("code", f"{code} is a {code.variant} deal, not {variant}")
        filters.append(Record.code == str(code))
    if args["no_takebacks"]:
        filters.append(Record.takebacks == 0)

    per_player = (select(Record.id, func.row_number().over(partition_by=Record.player, order_by=BEST_FIRST)
                         .label("place"))
                  .where(*filters).subquery())
    rank = func.rank().over(order_by=RANKING).label("rank")
    entries = db.session().execute(
        select(rank, *ENTRY_COLUMNS).join(per_player, per_player.c.id == Record.id).where(per_player.c.place == 1)
        .order_by(*BEST_FIRST).limit(args["limit"])).all()
    filters_applied = {"code": None if code is None else str(code), "no_takebacks": args["no_takebacks"],
                       "limit": args["limit"]}
    return LeaderboardSchema().dump({"variant": variant, "filters": filters_applied, "entries": entries})
