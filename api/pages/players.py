"""A player's page (part of the ``pages`` blueprint), and the decisions on a record as
its page shows them.

The player page: statistics (averages rounded), personal bests per variant (their
entry on the variant's board, with its rank), the daily-challenge streak calendar,
their rank on recent challenges, then their records a page at a time, newest first
(keyset: ``?before=<record id>``, by the ``(player_id, id)`` index), with dates and
the flags in force; the fair-play text comes last.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from babel.dates import format_date, format_datetime
from flask import g, request
from sqlalchemy import select

from api.boards import reads as boards
from api.challenges import days as challenge_days
from api.fairplay.flags import page_values
from api.pages.views import FLAG_TEXTS, VARIANTS, bp, error_page, render
from api.pages.words import _
from api.platform import db
from api.platform.models import Record
from api.players import stats
from api.players.accounts import find_player
from api.routes.leaderboard import withheld_codes

#: records per page of a player's list
PLAYER_RECORDS = 20


def flag_states(record: Record) -> list[dict[str, Any]]:
    """Each flag of a record with its text and whether it is still in force: a flag that
    sent the record to review is cleared once an admin made the record visible again
    (``api.fairplay.judging.decide``), or when the flag itself says it was cleared."""
    reviewed_visible = record.status == "visible" and any(entry.status == "visible" for entry in record.history)
    out = []
    for flag in record.flags or []:
        name = flag.get("flag")
        text = _(FLAG_TEXTS[name], **page_values(flag, record.copy_of)) if name in FLAG_TEXTS else str(name)
        cleared = bool(flag.get("cleared")) or (bool(flag.get("review")) and reviewed_visible)
        out.append({"flag": name, "text": text, "cleared": cleared})
    return out


def when(moment: datetime) -> str:
    return format_datetime(moment.astimezone(UTC), "medium", tzinfo=UTC, locale=g.lang)


def record_decisions(record: Record) -> dict[str, Any]:
    """What the record page's decisions block shows: the status, every history entry (who,
    when, why: oldest first) and the flags, those in force apart from the cleared ones."""
    flags = flag_states(record)
    return {"status": record.status, "ranked": record.ranked,
            "history": [{"status": entry.status, "actor": entry.actor, "at": entry.at, "when": when(entry.at),
                         "reason": entry.reason} for entry in record.history],
            "in_force": [flag for flag in flags if not flag["cleared"]],
            "cleared": [flag for flag in flags if flag["cleared"]]}


@bp.context_processor
def _player_helpers() -> dict[str, Any]:
    return {"record_decisions": record_decisions}


def requested_before() -> int | None:
    """The ``before`` query parameter: a record id (a bad one: the first page)."""
    try:
        before = int(request.args.get("before", ""))
    except ValueError:
        return None
    return before if 0 < before < 2 ** 63 else None


def personal_bests(player: str) -> list[dict[str, Any]]:
    """The player's best record of each variant (their entry on its ``variant`` board, by
    primary key) with its rank there."""
    connection = db.session().connection()
    out = []
    for variant, _title in VARIANTS:
        board = boards.board("variant", variant)
        entry = boards.find(connection, board, player)
        if entry is not None:
            place = boards.standing(connection, board, player)
            out.append({"variant": variant, "entry": entry, "place": place})
    return out


@bp.get("/players/<path:name>")
def player(name: str) -> Any:
    """A player's profile and their records, newest first, with their flags (so that a flagged
    player sees why, and can appeal: docs/fair-play.md)."""
    found = find_player(db.session(), name) if len(name) <= 256 else None
    if found is None:
        return error_page(404, _("No such player"), _("There is no player {name}.", name=name))
    session, moment = db.session(), datetime.now(UTC)
    before = requested_before()
    withheld = withheld_codes()  # records of running challenges' deals: listed once their windows close
    statement = select(Record).where(Record.player_id == found.id,
                                     *((Record.code.not_in(withheld),) if withheld else ()))
    if before is not None:
        statement = statement.where(Record.id < before)
    stored = session.scalars(statement.order_by(Record.id.desc()).limit(PLAYER_RECORDS + 1)).all()
    more = len(stored) > PLAYER_RECORDS
    stored = stored[:PLAYER_RECORDS]
    return render("player.html", title=_("Player {name}", name=found.name), player=found,
                  description=_("The records, statistics and challenge ranks of {name}.", name=found.name),
                  records=[(record, [flag for flag in flag_states(record) if not flag["cleared"]],
                            format_date(record.received_at.astimezone(UTC), "medium", locale=g.lang))
                           for record in stored],
                  next_before=stored[-1].id if more else None, first_page=before is None,
                  stats=stats.player_stats(session, found.name), bests=personal_bests(found.name),
                  streaks=challenge_days.streak_calendar(session, found.name, moment),
                  challenge_ranks=stats.challenge_ranks(session, found.name))
