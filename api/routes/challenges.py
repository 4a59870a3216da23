"""``/challenges``: the daily and weekly challenge of a variant, the archive of past
ones with their final boards, each challenge's board, and a player's attempt at one.
Nothing here searches: a window whose challenge the worker tier has not proved yet
is answered 503, and the worker tier is asked to prepare it (once; embedded, it is
prepared in the request). A challenge's code and candidate are null until its window
closes: a player gets the code by starting an attempt. A challenge prepared ahead is not
public before its window opens: 404, as if there were none."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, current_app
from sqlalchemy import select

from api import tasks
from api.boards import kinds
from api.boards import reads as boards
from api.challenges import windows as challenges
from api.platform import db
from api.platform.models import Challenge
from api.platform.problems import Problem, invalid_field
from api.routes import query, request_player
from api.routes.leaderboard import board_body, conditional, read_board, with_records
from api.schemas import (
    AttemptSchema,
    BoardPagingSchema,
    ChallengeBoardSchema,
    ChallengeListQuerySchema,
    ChallengeListSchema,
    ChallengeQuerySchema,
    ChallengeSchema,
    NoQuerySchema,
)

bp = Blueprint("challenges", __name__)
CHALLENGE, CHALLENGE_LIST, CHALLENGE_BOARD = ChallengeSchema(), ChallengeListSchema(), ChallengeBoardSchema()
ATTEMPT = AttemptSchema()
#: seconds a client should wait before asking again for a challenge not prepared yet
RETRY_AFTER = 15
#: entries of each past challenge's final board shown in the archive
PODIUM = 3


def _json(challenge: Challenge, moment: datetime, podium: bool = False) -> dict[str, Any]:
    body = {"id": challenge.id, "variant": challenge.variant, "kind": challenge.kind,
            "code": challenges.public_code(challenge, moment),
            "starts_at": challenge.starts_at, "ends_at": challenge.ends_at, "next_reset": challenge.ends_at,
            "par": challenge.par, "candidate": challenges.public_candidate(challenge, moment),
            "final": challenge.ends_at <= moment}
    if podium:
        top = boards.page(db.session().connection(), boards.board(kinds.CHALLENGE, challenge.id), PODIUM, None)
        body["podium"] = with_records(top["ranked"])
    return body


def current_or_prepare(variant: str, kind: str, moment: datetime) -> Challenge | None:
    """The window's challenge; if it is not proved yet, the worker tier is asked to prepare it
    (never waited for: ``None`` then), which the embedded mode does here and now."""
    challenge = challenges.current(db.session(), variant, kind, moment)
    if challenge is None:
        tasks.ask_to_prepare(current_app, variant, kind, moment.date())
        challenge = challenges.current(db.session(), variant, kind, moment)
    return challenge


@bp.get("/challenges/daily", defaults={"kind": "daily"})
@bp.get("/challenges/weekly", defaults={"kind": "weekly"})
def current_challenge(kind: str) -> Response:
    variant = query(ChallengeQuerySchema())["variant"]
    moment = datetime.now(UTC)
    challenge = current_or_prepare(variant, kind, moment)
    if challenge is None:
        raise Problem(503, f"the {kind} {variant} challenge of this window is not ready yet (its deal is still being "
                           f"proved winnable); ask again in {RETRY_AFTER} s", headers={"Retry-After": str(RETRY_AFTER)})
    return conditional(CHALLENGE.dump(_json(challenge, moment)))


@bp.get("/challenges")
def list_challenges() -> Response:
    args = query(ChallengeListQuerySchema())
    after = None
    if "cursor" in args:
        try:
            after = tuple(boards.decode_cursor(args["cursor"], (datetime, int)))
        except boards.BadCursor as error:
            raise invalid_field("cursor", str(error)) from None
    moment = datetime.now(UTC)
    limit = args["limit"]
    found = list(challenges.past(db.session(), args["variant"], args.get("kind"), moment, limit + 1, after))
    more = len(found) > limit
    found = found[:limit]
    next_cursor = boards.encode_cursor((found[-1].starts_at, found[-1].id)) if more else None
    return conditional(CHALLENGE_LIST.dump({"variant": args["variant"], "items": [
        _json(c, moment, podium=True) for c in found], "has_more": more, "next_cursor": next_cursor}))


def find_challenge(challenge_id: int) -> Challenge:
    """A challenge whose window has opened (one prepared ahead is not public: 404, like none)."""
    found = db.session().scalar(select(Challenge).where(Challenge.id == challenge_id)) \
        if 0 < challenge_id < 2 ** 63 else None
    if found is None or not challenges.is_public(found, datetime.now(UTC)):
        raise Problem(404, f"there is no challenge {challenge_id}")
    return found


@bp.get("/challenges/<int:challenge_id>")
def get_challenge(challenge_id: int) -> Response:
    query(NoQuerySchema())
    return conditional(CHALLENGE.dump(_json(find_challenge(challenge_id), datetime.now(UTC))))


@bp.get("/challenges/<int:challenge_id>/board")
def challenge_board(challenge_id: int) -> Response:
    args = query(BoardPagingSchema())
    challenge = find_challenge(challenge_id)
    found = read_board(boards.board(kinds.CHALLENGE, challenge.id), args)
    return conditional(CHALLENGE_BOARD.dump({
        "challenge": _json(challenge, datetime.now(UTC)), "limit": args["limit"],
        **board_body(found, with_records)}))


@bp.post("/challenges/<int:challenge_id>/attempts")
def start_attempt(challenge_id: int) -> tuple[dict, int]:
    """Start the player's one attempt at a running challenge: the answer holds the deal's code,
    and the server's clock (the board's time) starts now."""
    session = db.session()
    player = request_player(session, "an attempt", "start one")
    challenge = find_challenge(challenge_id)
    try:
        attempt = challenges.start_attempt(session, challenge, player, datetime.now(UTC))
    except challenges.AlreadyAttempted as error:
        raise Problem(409, str(error), "attempt-exists", attempt=error.attempt.id, code=challenge.code,
                      started_at=error.attempt.started_at) from None
    except challenges.NotRunning as error:
        raise Problem(409, str(error), "challenge-not-running") from None
    return ATTEMPT.dump({"id": attempt.id, "challenge_id": challenge.id, "code": challenge.code,
                         "started_at": attempt.started_at, "ends_at": challenge.ends_at}), 201
