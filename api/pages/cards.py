"""The share images of a record and of a challenge day (part of the ``pages`` blueprint): the
result in large type (rank, moves against par, time, streak where known), the challenge's name
and date for a challenge's record, and a board that shows something.

**Which board.** A won game shows its opening (its final position is an empty tableau), any
other record its final position. A challenge's deal is secret while its window runs, so a record
of a running challenge, and a running challenge's day, have no board at all: only the result.
A closed challenge's day shows its opening.

Each image is cached under its words (:func:`pages.share_card`): a rank or a streak that changes,
or a window that closes, gives another image, never a stale one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import g
from flask.wrappers import Response

from api.boards import kinds
from api.boards import reads as boards
from api.challenges import days as challenge_days
from api.challenges import windows as challenges
from api.pages import sharecard
from api.pages.board import board_view, position_at
from api.pages.challenges import challenge_title, record_challenge, record_time, sealing_challenge, visitor
from api.pages.framecache import Picture
from api.pages.views import VARIANT_TITLES, bp, share_card
from api.pages.words import _
from api.platform import db
from api.platform.models import Challenge, Record
from api.platform.problems import Problem
from api.players.accounts import find_player
from api.players.stats import player_stats
from api.routes.leaderboard import withheld_codes
from engine import Game

#: what a card's board is: none, the deal's opening, or a record's final position
NO_BOARD, OPENING, FINAL = "none", "opening", "final"


def par_text(moves: int, par: int | None) -> str:
    """Moves against par: ``88 moves · par +2`` (``±0`` on par), or just the moves without a par."""
    if par is None:
        return _("{moves} moves", moves=moves)
    diff = format(moves - par, "+d") if moves != par else "±0"
    return _("{moves} moves · par {diff}", moves=moves, diff=diff)


def streak_text(player: str, variant: str) -> str | None:
    """The player's current streak of won daily challenges of ``variant`` (None: no streak)."""
    rows = player_stats(db.session(), player, variant)
    days = rows[0]["current_streak"] if rows else 0
    return _("Streak: {days} days", days=days) if days else None


def result_details(record: Record, par: int | None, variant: str) -> list[str]:
    """Moves (against par when there is one), time and streak of a record."""
    time = record_time(record)
    details = [par_text(record.moves, par) if record.won else _("not won · {moves} moves", moves=record.moves)]
    details += [_("Time {time}", time=time)] if time else []
    streak = streak_text(record.player, variant)
    return details + ([streak] if streak else [])


def ranked(player: str, place: dict[str, Any] | None) -> str:
    return _("{player}: rank {rank} of {entries}", player=player, rank=place["rank"], entries=place["entries"]) \
        if place else player


def challenge_record_card(found: Record, challenge: Challenge, place: dict[str, Any] | None,
                          board: str) -> tuple[sharecard.Card, str]:
    """A record of a challenge: the challenge's name and date, the player's rank, moves against par,
    time and streak."""
    title = f"{challenge_title(challenge)} · {_(VARIANT_TITLES[challenge.variant])}"
    card = sharecard.Card(title, ranked(found.player, place), _("Solitaire records"),
                          result_details(found, challenge.par if found.won else None, challenge.variant))
    return card, board


def won_or_final(found: Record) -> str:
    """A won game shows its opening (its end is an empty tableau), any other its final position."""
    return OPENING if found.won else FINAL


def record_card_of(found: Record) -> tuple[sharecard.Card, str]:
    """The card of a record, and which board it shows."""
    moment = datetime.now(UTC)
    if found.code in withheld_codes():  # a running challenge's deal: no board, only the result
        sealing = sealing_challenge(found, moment)
        if sealing is None:
            raise Problem(404, f"there is no record {found.id}")
        connection = db.session().connection()
        place = boards.standing(connection, boards.board(kinds.CHALLENGE, sealing.id), found.player)
        return challenge_record_card(found, sealing, place, NO_BOARD)
    of = record_challenge(found)
    if of is not None:
        public = challenges.public_code(of["challenge"], moment) is not None
        board = won_or_final(found) if of["final"] else OPENING if public else NO_BOARD
        return challenge_record_card(found, of["challenge"], of["place"] if of["this_record"] else None, board)
    time = record_time(found)
    result = (_("won in {time}", time=time) if time else _("won")) if found.won else _("not won")
    details = [_("{moves} moves", moves=found.moves), f"{_('Score')} {found.score}",
               _(VARIANT_TITLES.get(found.variant, found.variant))]
    return sharecard.Card(f"{found.player} · {found.code}", ("★ " if found.won else "") + result,
                          _("Solitaire records"), details), won_or_final(found)


def board_of(code: str, actions: list[str], which: str) -> dict[str, Any] | None:
    if which == NO_BOARD:
        return None
    if which == OPENING:
        return board_view(Game.from_code(code).position)
    return board_view(position_at(code, actions, len(actions)).position)


def card_response(kind: str, number: int, card: sharecard.Card, draw_board: Any) -> Response:
    """The image of ``card`` (its board drawn by ``draw_board()``), cached under all its words."""
    key = ("card", kind, number, g.lang, card.title, card.result, tuple(card.details), card.footer)

    def draw() -> Picture:  # (no deal to check when served: the card's words say which board it has)
        return Picture.of(sharecard.share_image(sharecard.Card(card.title, card.result, card.footer, card.details,
                                                               draw_board())))

    return share_card(key, draw)


@bp.get("/records/<int:record_id>/card.png")
def record_card(record_id: int) -> Response:
    """The record's share image (``og:image``): the player's result in large type and a board."""
    found = db.session().get(Record, record_id) if 0 < record_id < 2 ** 63 else None
    if found is None:
        raise Problem(404, f"there is no record {record_id}")
    card, which = record_card_of(found)
    return card_response(f"record-{which}", record_id, card,
                         lambda: board_of(found.code, found.canonical.split(), which))


def day_card_of(challenge: Challenge, moment: datetime) -> sharecard.Card:
    """A challenge day's card: the visitor's result (``?player=``) when they played, else its par and winners."""
    title = f"{challenge_title(challenge)} · {_(VARIANT_TITLES[challenge.variant])}"
    board = boards.board(kinds.CHALLENGE, challenge.id)
    connection = db.session().connection()
    name = visitor()
    found = find_player(db.session(), name) if name is not None else None
    name = found.name if found is not None else name
    entry = boards.find(connection, board, name) if name is not None else None
    if entry is not None and name is not None:
        best = db.session().get(Record, entry.record_id)
        if best is not None:
            return sharecard.Card(title, ranked(best.player, boards.standing(connection, board, name)),
                                  _("Solitaire records"),
                                  result_details(best, challenge.par if best.won else None, challenge.variant))
    won = [winner.player for winner in challenge_days.winners(db.session(), challenge)]
    final = challenge.ends_at <= moment
    details = [_("Winners: {names}", names=", ".join(won)) if won else
               _("Nobody won this challenge.") if final else _("Nobody has won this challenge yet.")]
    return sharecard.Card(title, _("Par: {par} moves", par=challenge.par), _("Solitaire records"), details)


@bp.get("/challenges/<int:challenge_id>/card.png")
def challenge_card(challenge_id: int) -> Response:
    """A challenge day's share image: its name and date, the visitor's result or its par and winners,
    and its opening once the deal is public (no board while it is secret)."""
    moment = datetime.now(UTC)
    challenge = db.session().get(Challenge, challenge_id) if 0 < challenge_id < 2 ** 63 else None
    if challenge is None or challenge.starts_at > moment:
        raise Problem(404, f"there is no challenge {challenge_id}")
    card = day_card_of(challenge, moment)
    code = challenges.public_code(challenge, moment)
    return card_response(f"day-{OPENING if code else NO_BOARD}", challenge_id, card,
                         lambda: board_view(Game.from_code(code).position) if code else None)
