"""Challenges as days: the calendar of a variant's past challenges, one challenge's
day (its final board's winners, the solution once the window has closed, a player's
result), the challenges a deal was, and a player's streak calendar.

Every read here is bounded by the calendar, not by the data: a month is at most 31
daily and 6 weekly challenges, read by the ``(variant, kind, starts_at)`` index; a
board's winners are the rows tied first (:func:`api.boards.reads.leaders`); a player's
streak calendar reads the daily challenges of a few weeks and probes the player's
entry on each by primary key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.boards import kinds
from api.boards import reads as boards
from api.challenges.windows import KINDS, window
from api.platform.models import BoardEntry, Challenge
from engine.rules import RULE_SETS

#: the weeks a player's streak calendar shows (ending with the current week)
STREAK_WEEKS = 6


def month_start(day: date) -> date:
    return day.replace(day=1)


def next_month(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def previous_month(day: date) -> date:
    return (day.replace(day=1) - timedelta(days=1)).replace(day=1)


@dataclass(frozen=True)
class Week:
    """One row of the calendar: its Monday, its ISO week number, its weekly challenge
    (None: none, or not started yet) and its seven days (None: outside the month)."""

    monday: date
    number: int
    weekly: Challenge | None
    days: list[tuple[date, Challenge | None] | None]


def month(session: Session, variant: str, first: date, moment: datetime) -> list[Week]:
    """The weeks of the month starting on ``first``, Monday first, with the challenges that
    had started by ``moment`` (one query by the ``(variant, kind, starts_at)`` index)."""
    start = first - timedelta(days=first.weekday())
    end = next_month(first)
    rows = session.scalars(select(Challenge).where(
        Challenge.variant == variant, Challenge.kind.in_(KINDS),
        Challenge.starts_at >= datetime.combine(start, time(0), UTC),
        Challenge.starts_at < datetime.combine(end, time(0), UTC), Challenge.starts_at <= moment)).all()
    found = {(row.kind, row.starts_at.date()): row for row in rows}
    weeks = []
    monday = start
    while monday < end:
        days = [(day, found.get(("daily", day))) if day.month == first.month else None
                for day in (monday + timedelta(days=offset) for offset in range(7))]
        weeks.append(Week(monday, monday.isocalendar().week, found.get(("weekly", monday)), days))
        monday += timedelta(days=7)
    return weeks


def find(session: Session, variant: str, kind: str, day: date) -> Challenge | None:
    """The ``kind`` challenge of ``variant`` whose window starts on ``day``."""
    start, _ = window(kind, datetime.combine(day, time(12), UTC))
    return session.scalars(select(Challenge).where(Challenge.variant == variant, Challenge.kind == kind,
                                                   Challenge.starts_at == start)).first()


def winners(session: Session, challenge: Challenge) -> list[Any]:
    """The entries ranked first on a challenge's board that won the game: all players tied
    first, and nobody on a day nobody won (a top row that did not win is no winner)."""
    top = boards.leaders(session.connection(), boards.board(kinds.CHALLENGE, challenge.id))
    return [row for row in top if row.won]


def of_deal(session: Session, code: str, moment: datetime) -> list[Challenge]:
    """The challenges (started by ``moment``) whose deal is ``code``, newest first (by the
    ``(code, starts_at)`` index)."""
    return list(session.scalars(select(Challenge).where(Challenge.code == code, Challenge.starts_at <= moment)
                                .order_by(Challenge.starts_at.desc()).limit(10)))


def of_record(session: Session, code: str, received_at: datetime) -> Challenge | None:
    """The challenge whose window a record of ``code`` received at ``received_at`` counts in
    (a daily one before a weekly one: the shorter window)."""
    rows = session.scalars(select(Challenge).where(Challenge.code == code, Challenge.starts_at <= received_at,
                                                   Challenge.ends_at > received_at)).all()
    return min(rows, key=lambda row: row.ends_at - row.starts_at, default=None)


def streak_calendar(session: Session, player: str, moment: datetime, weeks: int = STREAK_WEEKS
                    ) -> dict[str, list[list[tuple[date, str]]]]:
    """Per variant the player played a daily challenge in, the last ``weeks`` weeks (Monday
    first), each day ``won``, ``played`` (not won), ``missed`` (a challenge they did not
    play), ``none`` (no challenge that day) or ``future`` (today, not played yet: still open)."""
    today = moment.astimezone(UTC).date()
    first = today - timedelta(days=today.weekday() + 7 * (weeks - 1))
    since = datetime.combine(first, time(0), UTC)
    daily = session.execute(select(Challenge.id, Challenge.variant, Challenge.starts_at).where(
        Challenge.variant.in_([rule_set.variant for rule_set in RULE_SETS]), Challenge.kind == "daily",
        Challenge.starts_at >= since, Challenge.starts_at <= moment)).all()  # by the (variant, kind, starts_at) key
    held = {row.id: (row.variant, row.starts_at.date()) for row in daily}
    names = [kinds.CHALLENGE.name(challenge_id) for challenge_id in held]
    played = session.execute(select(BoardEntry.challenge_id, BoardEntry.won).where(
        BoardEntry.board.in_(names), BoardEntry.player == player)).all() if names else []  # primary key probes
    states = {held[row.challenge_id]: "won" if row.won else "played" for row in played}
    days = set(held.values())
    out = {}
    for variant in sorted({variant for variant, _ in states}):
        grid = []
        for week in range(weeks):
            row = []
            for offset in range(7):
                day = first + timedelta(days=7 * week + offset)
                state = states.get((variant, day)) or (
                    "future" if day >= today else "missed" if (variant, day) in days else "none")
                row.append((day, state))
            grid.append(row)
        out[variant] = grid
    return out
