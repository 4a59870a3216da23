"""Daily and weekly challenges, and the pool of deals proved winnable.

**Windows.** A daily challenge runs from 00:00 UTC of its date to 00:00 UTC of
the next date; a weekly one from Monday 00:00 UTC (ISO weeks) to the next
Monday. ``next_reset`` is the window's end.

**Candidates.** The window's candidate deals, in order, are for i = 0, 1, 2, …::

    number_i = int.from_bytes(HMAC-SHA256(key, "<variant>/<kind>/<YYYY-MM-DD>/<i>")[:8], "big") mod 2^35

with the window's first date and the service's secret ``key`` (:func:`derivation_key`:
``CHALLENGE_KEY``, else a key generated once and kept in the ``service_keys`` table), so
the code of candidate ``i`` is ``GameCode(game, rules, number_i)`` (``candidates`` lists
them; the tests pin vectors for a test key). Without the key nobody can list a window's
candidates, so nobody can compute its deal or screen its candidates ahead. **The challenge
is the first candidate that the solver proved winnable** within the preparation budget
(``CHALLENGE_NODES`` positions, a node budget so that the answer does not depend on the
machine's speed) and that has no stored record (withholding a deal that had public records
would point at it); a candidate proved unwinnable, undecided within the budget, or played
before is passed over. If none of the first ``CHALLENGE_CANDIDATES`` is taken, the window
has no challenge (the endpoints answer 503) and the operator is told. A stored challenge
never changes: the key (and this rule) only decide the windows not prepared yet.

**Par.** The solver's winning line, shortened by the solver's own pass
(:func:`engine.solver.shorten`: detours that a few moves avoid are cut out, then
pairs of adjacent actions and single actions are dropped while the rest still
replays as a won game); the par is the move counter of that line.

**Attempts.** A running challenge's deal code is not public: a player gets it by
starting an attempt (:func:`start_attempt`, one per player and challenge), which
starts the server's clock. A record that names its attempt (:func:`attempt_values`)
carries the server's time, from the attempt's start to the record's arrival; the
challenge board counts only records of attempts, one per attempt, received inside
the window (challenges prepared before attempts existed keep counting every record
received in their window: ``Challenge.attempts_required``). Until the window
closes, :func:`secret_codes` lists the deals that every public read withholds; a
challenge prepared ahead (its window not open yet) is not public at all
(:func:`is_public`), and its deal is withheld too.

The searches are the work of the worker tier, never of a request (except in the
embedded mode): :func:`prepare_challenges` (``flask --app api challenges prepare``,
and the task ``api.prepare_challenges`` of ``api/tasks.py``, sent by the beat)
proves the current windows' challenges and the next day's and next week's ahead of
their openings (:func:`plan`: today's dailies first, the most awaited), and
:func:`refill_winnable_pool` (the task ``api.refill_winnable_pool``) keeps the pool
behind ``GET /deals/random?winnable=true`` filled. Both store each search's answer in
the ``solvability`` table, as ``api/solver/queue.py`` does.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import secrets
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import func, literal, select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import engine
from api.boards import upkeep
from api.platform.models import Challenge, ChallengeAttempt, Player, Record, ServiceKey, Solvability
from api.players.accounts import Submitter
from api.solver.queue import WINNABLE, Budget, DealSearch, Query, now
from engine import BY_VARIANT, GameCode
from engine.solver import shorten as solver_shorten
from verifier import replay

log = logging.getLogger(__name__)

KINDS = ("daily", "weekly")
#: the longest window (a week): a challenge running at a moment started at most this long before it
LONGEST_WINDOW = timedelta(days=7)
#: the ``service_keys`` row of the generated derivation key
KEY_NAME = "challenge"
DEAL_NUMBERS = 2 ** 35
#: the seconds a preparation search may take at most, besides its node budget (a safety net only)
SAFETY_SECONDS = 600.0


def screening_budget(config: Mapping[str, Any], nodes: str) -> Budget:
    """A screening search's budget: the positions the setting ``nodes`` names (``CHALLENGE_NODES``,
    ``WINNABLE_POOL_NODES``), with SAFETY_SECONDS as a safety net only."""
    return Budget(SAFETY_SECONDS, config[nodes])


def window(kind: str, moment: datetime) -> tuple[datetime, datetime]:
    """The window of the ``kind`` challenge running at ``moment``: (start, end), UTC."""
    day = moment.astimezone(UTC).date()
    if kind == "weekly":
        day -= timedelta(days=day.weekday())
    start = datetime.combine(day, time(0), UTC)
    return start, start + timedelta(days=1 if kind == "daily" else 7)


def derivation_key(session: Session, configured: str | None) -> bytes:
    """The key the candidates are derived with: ``configured`` (``CHALLENGE_KEY``), else the
    database's own, generated on first use (the first insert wins between processes). Commits."""
    if configured:
        return configured.encode()
    row = session.get(ServiceKey, KEY_NAME)
    if row is None:
        session.add(ServiceKey(name=KEY_NAME, secret=secrets.token_urlsafe(48), created_at=now()))
        try:
            session.commit()
        except IntegrityError:  # another process made it a moment ago: take that one
            session.rollback()
        row = session.get(ServiceKey, KEY_NAME)
        assert row is not None
    return row.secret.encode()


def candidate(variant: str, kind: str, first_day: date, index: int, key: bytes) -> GameCode:
    """Candidate ``index`` of the window starting on ``first_day`` (see the module's formula)."""
    rules = BY_VARIANT[variant]
    message = f"{variant}/{kind}/{first_day.isoformat()}/{index}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return GameCode(rules.game, rules.letter, int.from_bytes(digest[:8], "big") % DEAL_NUMBERS)


def candidates(variant: str, kind: str, first_day: date, count: int, key: bytes) -> list[GameCode]:
    return [candidate(variant, kind, first_day, index, key) for index in range(count)]


def shorten(code: GameCode | str, line: list[str]) -> list[str]:
    """A winning ``line`` of ``code``'s deal made as short as the solver's pass makes it
    (:func:`engine.solver.shorten`: detours cut out, actions that cancel dropped; the
    result replays as a won game)."""
    return list(solver_shorten(engine.Game.from_code(code).position, line))


# -- the solvability table ------------------------------------------------------

def proved_winnable(session: Session, code: GameCode) -> Solvability | None:
    """A stored, verified winning line for ``code`` by this engine (any budget)."""
    return session.scalars(select(Solvability).where(
        Solvability.code == str(code), Solvability.status == WINNABLE, Solvability.verified.is_(True),
        Solvability.engine_version == engine.__version__, Solvability.rules_version == engine.RULES_VERSION)
        .limit(1)).first()


def search(session: Session, code: GameCode, budget: Budget) -> Solvability:
    """``code``'s answer within ``budget``: the stored one, or a search run here (in the
    worker tier) and stored like the solver's own answers (:meth:`api.solver.queue.SearchKind.run_here`). Commits."""
    found = proved_winnable(session, code)
    if found is not None:
        return found
    screening = DealSearch(budget)
    screening.shorten_steps = 0  # the verdict only: prepare() shortens the chosen challenge's line
    return screening.run_here(session, Query(code))


# -- challenges -----------------------------------------------------------------

def played(session: Session, code: GameCode) -> bool:
    """Whether a record of ``code`` is stored (by the records' code index)."""
    return session.scalar(select(Record.id).where(Record.code == str(code)).limit(1)) is not None


def prepare(session: Session, variant: str, kind: str, moment: datetime, budget: Budget, count: int, key: bytes
            ) -> Challenge | None:
    """The ``kind`` challenge of ``variant`` for the window at ``moment``: the stored one, or
    the first of ``count`` candidates (derived with ``key``) proved winnable and never played,
    stored with its par. None if none is."""
    start, end = window(kind, moment)
    found = current(session, variant, kind, start)
    if found is not None:
        return found
    for index, code in enumerate(candidates(variant, kind, start.date(), count, key)):
        if played(session, code):
            continue
        answer = search(session, code, budget)
        if answer.status != WINNABLE:
            continue
        assert answer.solution is not None  # a winnable answer holds its line
        line = shorten(code, answer.solution.split())
        challenge = Challenge(variant=variant, kind=kind, starts_at=start, ends_at=end, code=str(code),
                              candidate=index, par=replay(code, line).moves, par_line=" ".join(line),
                              prepared_at=now())
        session.add(challenge)
        session.flush()
        upkeep.fill_challenge(session.connection(), challenge.id)
        session.commit()
        log.info("challenge %s %s from %s: prepared (candidate %d, par %d)", variant, kind, start.date(), index,
                 challenge.par)
        return challenge
    log.error("challenge %s %s from %s: none of the first %d candidates was proved winnable", variant, kind,
              start.date(), count)
    return None


def plan(day: date, ahead: int = 1, variant: str | None = None, kind: str | None = None,
         first: tuple[str, str] | None = None) -> list[tuple[str, str, datetime]]:
    """The windows a preparation run goes through, as ``(variant, kind, a moment inside)``, in
    the order players need them: ``first`` (a window a request waits for), then ``day``'s daily
    challenges, ``day``'s weekly ones, then the daily ones of the ``ahead`` days after it and,
    with ``ahead``, the weekly ones of the week after ``day``'s (so that the next day's and the
    next week's challenges exist before their windows open). Only ``variant``/``kind`` if given."""
    variants = [variant] if variant else list(BY_VARIANT)
    kinds = [kind] if kind else list(KINDS)
    noon = lambda offset: datetime.combine(day + timedelta(days=offset), time(12), UTC)
    by_day = [(offset, which) for offset in range(ahead + 1) for which in ("daily", "weekly")]
    wanted = [first] if first is not None else []
    wanted += [(name, which) for offset, which in by_day if offset == 0 for name in variants if which in kinds]
    timed = [(name, which, noon(0)) for name, which in wanted]
    timed += [(name, which, noon(offset)) for offset, which in by_day if offset > 0 and which in kinds
              for name in variants]
    if ahead and "weekly" in kinds:
        timed += [(name, "weekly", noon(7)) for name in variants]
    seen: set[tuple[str, str, datetime]] = set()
    out = []
    for name, which, moment in timed:
        key = (name, which, window(which, moment)[0])
        if key not in seen:
            seen.add(key)
            out.append((name, which, moment))
    return out


def prepare_challenges(session: Session, day: date, budget: Budget, count: int, key: bytes, ahead: int = 1
                       ) -> list[Challenge | None]:
    """Every variant's daily and weekly challenge for ``day``, and with ``ahead`` those of the
    days after it and of the next week (:func:`plan`; the worker tier runs this before
    ``next_reset``, so the next deal is ready in time)."""
    return [prepare(session, variant, kind, moment, budget, count, key) for variant, kind, moment in plan(day, ahead)]


def current(session: Session, variant: str, kind: str, moment: datetime) -> Challenge | None:
    """The stored challenge whose window holds ``moment`` (None: not prepared)."""
    start, _ = window(kind, moment)
    return session.scalars(select(Challenge).where(Challenge.variant == variant, Challenge.kind == kind,
                                                   Challenge.starts_at == start)).first()


# -- the winnable pool -----------------------------------------------------------

def pool_size(session: Session, variant: str, most: int) -> int:
    """How many deals of ``variant`` are proved winnable, counted up to ``most`` (a bounded count)."""
    rows = select(Solvability.id).where(Solvability.variant == variant, Solvability.status == WINNABLE,
                                        Solvability.verified.is_(True)).limit(most).subquery()
    return session.scalar(select(func.count()).select_from(rows)) or 0


def refill_winnable_pool(session: Session, variant: str, target: int, budget: Budget, searches: int,
                         rng: random.Random | None = None) -> int:
    """Search random deals of ``variant`` until ``target`` are proved winnable or ``searches``
    searches have run; returns the searches run."""
    rng = rng or random.SystemRandom()
    rules = BY_VARIANT[variant]
    ran = 0
    while ran < searches and pool_size(session, variant, target) < target:
        search(session, GameCode(rules.game, rules.letter, rng.randrange(DEAL_NUMBERS)), budget)
        ran += 1
    return ran


def random_winnable(session: Session, variant: str, withheld: frozenset[str] = frozenset(),
                    rng: random.Random | None = None) -> str | None:
    """A deal of the pool, picked at random (an index probe at a random id, not a count), never
    one of ``withheld`` (the running and upcoming challenges' deals, :func:`secret_codes`, which
    the screening put in the pool): None while the pool has no other."""
    rng = rng or random.SystemRandom()
    proved = [Solvability.variant == variant, Solvability.status == WINNABLE, Solvability.verified.is_(True)]
    lowest, highest = session.execute(select(func.min(Solvability.id), func.max(Solvability.id))
                                      .where(*proved)).one()
    if lowest is None:
        return None
    if withheld:
        proved.append(Solvability.code.not_in(withheld))
    probe = rng.randint(lowest, highest)
    for start in (probe, lowest):  # from the probe on, else (only withheld deals after it) from the start
        found = session.scalar(select(Solvability.code).where(*proved, Solvability.id >= start)
                               .order_by(Solvability.id).limit(1))
        if found is not None:
            return found
    return None


def past(session: Session, variant: str, kind: str | None, moment: datetime, limit: int,
         after: tuple[datetime, int] | None) -> Iterator[Challenge]:
    """Challenges of ``variant`` that have started by ``moment``, newest first, a keyset page."""
    statement = select(Challenge).where(Challenge.variant == variant, Challenge.starts_at <= moment)
    if kind is not None:
        statement = statement.where(Challenge.kind == kind)
    if after is not None:
        statement = statement.where(tuple_(Challenge.starts_at, Challenge.id) < tuple_(
            literal(after[0], Challenge.starts_at.type), literal(after[1], Challenge.id.type)))
    yield from session.scalars(statement.order_by(Challenge.starts_at.desc(), Challenge.id.desc()).limit(limit))


# -- attempts ----------------------------------------------------------------------

class AttemptError(ValueError):
    """A challenge attempt that cannot be started, or named by a record; the message says why."""


class NotRunning(AttemptError):
    """The challenge's window has not opened yet, or has closed."""


class AlreadyAttempted(AttemptError):
    """The player has started an attempt at this challenge before (``attempt``: that one)."""

    def __init__(self, attempt: ChallengeAttempt, challenge: Challenge) -> None:
        super().__init__(f"you started an attempt at this challenge at {attempt.started_at.isoformat()} (attempt "
                         f"{attempt.id}): only a player's first attempt counts")
        self.attempt, self.challenge = attempt, challenge


class AttemptUsed(AttemptError):
    """Another record of the same attempt is stored (one game per attempt)."""

    def __init__(self, attempt_id: int, record_id: int | None) -> None:
        """``record_id`` None: a concurrent request stored it a moment ago (its id is not known here)."""
        game = f"record {record_id}" if record_id is not None else "a record stored a moment ago"
        super().__init__(f"attempt {attempt_id} is the game of {game}: an attempt is one game")
        self.attempt_id, self.record_id = attempt_id, record_id


def is_running(challenge: Challenge, moment: datetime) -> bool:
    return challenge.starts_at <= moment < challenge.ends_at


def start_attempt(session: Session, challenge: Challenge, player: Player, moment: datetime) -> ChallengeAttempt:
    """A new attempt of ``player`` at a running ``challenge``, started at ``moment`` (committed).
    :class:`NotRunning` outside the window, :class:`AlreadyAttempted` for a second one (the
    unique constraint decides between concurrent requests)."""
    if not is_running(challenge, moment):
        when = "opens" if moment < challenge.starts_at else "closed"
        at = challenge.starts_at if moment < challenge.starts_at else challenge.ends_at
        raise NotRunning(f"challenge {challenge.id} is not running: its window {when} at {at.isoformat()}")
    attempt = ChallengeAttempt(challenge_id=challenge.id, player_id=player.id, started_at=moment)
    session.add(attempt)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        earlier = session.scalars(select(ChallengeAttempt).where(ChallengeAttempt.challenge_id == challenge.id,
                                                                  ChallengeAttempt.player_id == player.id)).first()
        if earlier is None:
            raise
        raise AlreadyAttempted(earlier, challenge) from None
    return attempt


def attempt_values(session: Session, attempt_id: int, player: Player | Submitter, code: str, log_hash: str,
                   received_at: datetime) -> dict[str, Any]:
    """The columns a record of attempt ``attempt_id`` gets (``attempt_id``, ``server_elapsed_ms``),
    after checking that the attempt is ``player``'s, at a challenge on ``code``'s deal, and has
    no other game stored (:class:`AttemptError` / :class:`AttemptUsed`; sending the same game
    again is fine: it is answered with the stored record)."""
    row = session.execute(select(ChallengeAttempt, Challenge.code).join(
        Challenge, Challenge.id == ChallengeAttempt.challenge_id).where(ChallengeAttempt.id == attempt_id)).first() \
        if 0 < attempt_id < 2 ** 63 else None
    if row is None or row[0].player_id != player.id:  # (someone else's attempt: as if there were none)
        raise AttemptError(f"{player.name!r} has no attempt {attempt_id}: start one with "
                           f"POST /api/v1/challenges/{{challenge_id}}/attempts")
    attempt, challenge_code = row
    if challenge_code != code:
        raise AttemptError(f"attempt {attempt_id} is at challenge {attempt.challenge_id}, whose deal is not {code}")
    used = session.execute(select(Record.id, Record.log_hash).where(Record.attempt_id == attempt_id)).first()
    if used is not None and used.log_hash != log_hash:
        raise AttemptUsed(attempt_id, used.id)
    elapsed = max(0, round((received_at - attempt.started_at).total_seconds() * 1000))
    return {"attempt_id": attempt_id, "server_elapsed_ms": elapsed}


def public_code(challenge: Challenge, moment: datetime) -> str | None:
    """The challenge's code as the public may see it at ``moment``: None until its window closes
    (a challenge prepared before attempts existed published its code already: it stays public)."""
    secret = challenge.attempts_required and moment < challenge.ends_at
    return None if secret else challenge.code


def public_candidate(challenge: Challenge, moment: datetime) -> int | None:
    """Which candidate the challenge is, as the public may see it: withheld as long as its code
    is (:func:`public_code`; with the code it tells nothing about any other window)."""
    return None if public_code(challenge, moment) is None else challenge.candidate


def is_public(challenge: Challenge, moment: datetime) -> bool:
    """Whether the public may know of the challenge at all: from its window's opening (one
    prepared ahead is not shown, nor is anything about it: its par, its board, its id)."""
    return challenge.starts_at <= moment


def secret_codes(session: Session, moment: datetime) -> frozenset[str]:
    """The deal codes of the challenges running at ``moment`` or prepared for a window not open
    yet (:func:`public_code`): withheld from every public read until their windows close. An
    index range on ``(variant, kind, starts_at)`` from a week before ``moment``: the running
    windows and the few prepared ahead."""
    return frozenset(session.scalars(select(Challenge.code).where(
        Challenge.variant.in_(list(BY_VARIANT)), Challenge.kind.in_(KINDS),
        Challenge.starts_at > moment - LONGEST_WINDOW, Challenge.ends_at > moment,
        Challenge.attempts_required.is_(True))))
