"""A player's statistics per variant, from the running totals kept on write
(``player_stats``, see ``api/boards/reads.py``) and their daily challenge entries.

Each figure, over the player's eligible records of the variant (visible and ranked):

- ``games``: records; ``wins``: won records; ``win_rate``: wins / games;
- ``best_score``: the highest score of any record;
- ``average_moves_to_win``: the move counter of the won records, averaged (null without a win);
- ``takebacks``: take-backs (cards taken back from a foundation) used, over all records;
- ``best_streak``: the most consecutive UTC dates whose daily challenge the player won (a won
  record of the challenge's deal received inside its window); ``current_streak``: the run of such
  dates that ends today, or yesterday while today's challenge is still open (a day missed ends a run).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from api.boards import reads as boards
from api.challenges import windows as challenges
from api.platform.models import BoardEntry, Challenge, PlayerStats


def streaks(days: list[date], today: date) -> tuple[int, int]:
    """(current, best) runs of consecutive dates in ``days`` (sorted, distinct)."""
    best = run = 0
    previous: date | None = None
    for day in days:
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        best = max(best, run)
        previous = day
    current = run if previous is not None and today - previous <= timedelta(days=1) else 0
    return current, best


def player_stats(session: Session, player: str, variant: str | None = None,
                 moment: datetime | None = None) -> list[dict[str, Any]]:
    """The player's figures per variant (those where they have records or won a daily challenge)."""
    today = (moment or datetime.now(UTC)).astimezone(UTC).date()
    totals = session.scalars(select(PlayerStats).where(PlayerStats.player == player, *(
        () if variant is None else (PlayerStats.variant == variant,)))).all()
    won_days = session.execute(
        select(Challenge.variant, Challenge.starts_at).join(BoardEntry, BoardEntry.challenge_id == Challenge.id)
        .where(BoardEntry.player == player, BoardEntry.challenge_id.is_not(None), BoardEntry.won.is_(True),
               Challenge.kind == "daily",
               *(() if variant is None else (Challenge.variant == variant,)))
        .order_by(Challenge.starts_at)).all()
    days: dict[str, list[date]] = {}
    for won in won_days:
        days.setdefault(won.variant, []).append(won.starts_at.date())
    by_variant = {row.variant: row for row in totals}
    out = []
    for name in sorted(set(by_variant) | set(days)):
        row = by_variant.get(name)
        games, wins = (row.games, row.wins) if row else (0, 0)
        current, best = streaks(days.get(name, []), today)
        out.append({"variant": name, "games": games, "wins": wins,
                    "win_rate": round(wins / games, 4) if games else None,
                    "best_score": row.best_score if row else None,
                    "average_moves_to_win": round(row.won_moves / wins, 2) if row and wins else None,
                    "takebacks": row.takebacks if row else 0, "current_streak": current, "best_streak": best})
    return out


def challenge_ranks(session: Session, player: str, limit: int = 10) -> list[dict[str, Any]]:
    """The player's entries on their latest ``limit`` challenges, newest first, each with its
    rank on the challenge's board and the board's size (counts over one challenge's board)."""
    rows = session.execute(
        select(Challenge, BoardEntry).join(BoardEntry, BoardEntry.challenge_id == Challenge.id)
        .where(BoardEntry.player == player, BoardEntry.challenge_id.is_not(None))
        .order_by(Challenge.starts_at.desc(), Challenge.id.desc()).limit(limit)).all()
    out = []
    now = datetime.now(UTC)
    for challenge, entry in rows:
        place = boards.standing(session.connection(), boards.board_named(entry.board), player)
        code = challenges.public_code(challenge, now)  # a running challenge's deal is secret
        out.append({"challenge_id": challenge.id, "variant": challenge.variant, "kind": challenge.kind,
                    "code": code, "starts_at": challenge.starts_at, "won": entry.won, "score": entry.score,
                    "moves": entry.moves, "rank": place["rank"] if place else None,
                    "entries": place["entries"] if place else None})
    return out
