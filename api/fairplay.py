"""Fair play: the evidence on a record (flags), whether it is ranked, the review
queue and its decisions, the hint log, and what a solvability answer discloses.

A record is *ranked* (counts on the leaderboards) when it carries no flag. The
flags (``docs/fair-play.md``):

- ``assisted``: the player took a hint on that deal before submitting;
- ``copy``: the same canonical log of the deal is stored for another player
  (``copy_of`` points to the first one, which keeps its rank);
- ``solver-like``: at least :data:`SOLVER_SHARE` of the log's actions match a
  solver line the service stored for the deal (logs of :data:`SOLVER_MIN_ACTIONS`
  actions or more); sent to review;
- ``timing``: per-action times whose median gap is under
  :data:`MIN_MEDIAN_GAP_MS`, or an ``elapsed_ms`` that disagrees with them (before
  the last action's time, or more than :data:`ELAPSED_SLACK_MS` after it), or, on
  a challenge attempt, a claimed time longer than the server measured between the
  attempt's start and the record's arrival; sent to review.

A flag that sends a record to review gives it the status ``review``; an admin
decides (``visible`` clears the review flags, ``hidden`` confirms them).
"""

from __future__ import annotations

import difflib
import statistics
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Boolean, and_, bindparam, func, literal, select
from sqlalchemy.orm import Session

from . import webhooks
from .auth import authenticate, bearer_token
from .models import Hint, Player, Record, RecordStatus, Solvability
from .players import is_player_token, token_player
from .problems import invalid_field
from .times import pack_times

#: share of a log's actions found, in order, in a stored solver line that makes it solver-like
SOLVER_SHARE = 0.8
#: shorter logs are never called solver-like (a few forced opening moves match any line)
SOLVER_MIN_ACTIONS = 20
#: a median gap between actions under this many milliseconds is faster than people play
MIN_MEDIAN_GAP_MS = 150
#: ``elapsed_ms`` may run this long after the last action's time (the game's end screen)
ELAPSED_SLACK_MS = 60_000
#: what a flag does when present: every flag unranks; these also send the record to review
REVIEW_FLAGS = frozenset({"solver-like", "timing"})
#: most records listed per review page
REVIEW_PAGE = 100


def flag(name: str, reason: str, **evidence: Any) -> dict[str, Any]:
    """One flag as records store and show it."""
    return {"flag": name, "reason": reason, "review": name in REVIEW_FLAGS, "evidence": evidence}


# -- per-action times ----------------------------------------------------------

def check_times(times: list[int] | None, actions: int) -> None:
    """422 unless there is one time per action of the log and none is earlier than the one before."""
    if times is None:
        return
    if len(times) != actions:
        raise invalid_field("times", f"{len(times)} times for a log of {actions} actions: give one time per action")
    for index in range(1, len(times)):
        if times[index] < times[index - 1]:
            raise invalid_field(f"times.{index}", f"{times[index]} ms is earlier than the time before it "
                                                  f"({times[index - 1]} ms): times count from the game's start")


def timing_flags(times: list[int] | None, elapsed_ms: int | None) -> list[dict[str, Any]]:
    if not times:
        return []
    flags = []
    gaps = [times[0]] + [b - a for a, b in zip(times, times[1:])]
    median = statistics.median(gaps)
    if median < MIN_MEDIAN_GAP_MS:
        flags.append(flag("timing", f"the median gap between actions is {median:g} ms, under the "
                                    f"{MIN_MEDIAN_GAP_MS} ms people need", median_gap_ms=median,
                          threshold_ms=MIN_MEDIAN_GAP_MS))
    if elapsed_ms is not None and not times[-1] <= elapsed_ms <= times[-1] + ELAPSED_SLACK_MS:
        flags.append(flag("timing", f"elapsed_ms ({elapsed_ms} ms) disagrees with the last action's time "
                                    f"({times[-1]} ms)", elapsed_ms=elapsed_ms, last_action_ms=times[-1],
                          slack_ms=ELAPSED_SLACK_MS))
    return flags


def attempt_timing_flags(server_elapsed_ms: int | None, elapsed_ms: int | None, times: list[int] | None
                         ) -> list[dict[str, Any]]:
    """``timing`` when a challenge attempt's record claims more time than the server measured
    from the attempt's start to the record's arrival (the client can only have played less:
    its clock starts after the code reached it and stops before the record left it).

    >>> attempt_timing_flags(60_000, 59_000, [1000, 58_000]), attempt_timing_flags(None, 10 ** 9, None)
    ([], [])
    >>> attempt_timing_flags(60_000, 61_000, None)[0]["evidence"]["claimed_ms"]
    61000
    """
    claimed = max([value for value in (elapsed_ms, times[-1] if times else None) if value is not None], default=None)
    if server_elapsed_ms is None or claimed is None or claimed <= server_elapsed_ms:
        return []
    return [flag("timing", f"the client claims {claimed} ms of play, more than the {server_elapsed_ms} ms the server "
                           f"measured from the attempt's start to the record's arrival", claimed_ms=claimed,
                 server_elapsed_ms=server_elapsed_ms)]


# -- the evidence on a new record ----------------------------------------------

def solver_share(actions: list[str], line: list[str]) -> float:
    """The share of ``actions`` found, in order, in the solver's ``line`` (both canonical).

    >>> solver_share(["a", "b", "x", "c"], ["a", "b", "c"])
    0.75
    """
    if not actions:
        return 0.0
    matcher = difflib.SequenceMatcher(None, actions, line, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(actions)


def _evidence_statement() -> Any:
    """One round trip: the first hint the player took on the deal, the first record of this log
    for another player, and the solver lines stored for the deal (one row each; a single row of
    NULLs when there are none). Built once: building it cost more than running it."""
    first_hint = (select(func.min(Hint.at)).where(Hint.player_id == bindparam("player_id"),
                                                  Hint.code == bindparam("code"), Hint.at <= bindparam("now"))
                  .scalar_subquery())
    original = (select(Record.id).where(Record.code == bindparam("code"), Record.log_hash == bindparam("log_hash"),
                                        (Record.player_id != bindparam("player_id")) | Record.player_id.is_(None))
                .order_by(Record.id).limit(1).scalar_subquery())  # stops at the first (ix_records_code_log_hash_id)
    wanted = and_(Solvability.code == bindparam("code"), Solvability.solution.is_not(None),
                  bindparam("long_enough", type_=Boolean))
    return (select(first_hint, original, Solvability.id, Solvability.solution)
            .select_from(select(literal(1).label("one")).subquery().outerjoin(Solvability, wanted)))


_EVIDENCE = _evidence_statement()


def evidence(session: Session, player: Player, code: str, log_hash: str, canonical: str,
             times: list[int] | None, elapsed_ms: int | None, now: datetime,
             server_elapsed_ms: int | None = None) -> dict[str, Any]:
    """The fair-play columns of a new record: ``flags``, ``ranked``, ``status``, ``copy_of``, ``times``."""
    flags = []
    actions = canonical.split()
    rows = session.execute(_EVIDENCE, {"player_id": player.id, "code": code, "now": now, "log_hash": log_hash,
                                       "long_enough": len(actions) >= SOLVER_MIN_ACTIONS}).all()
    hinted, original_id = rows[0][0], rows[0][1]
    if hinted is not None:
        if isinstance(hinted, str):  # SQLite hands an aggregate over a date column back as text
            hinted = datetime.fromisoformat(hinted)
        flags.append(flag("assisted", "the player took a hint on this deal before submitting",
                          first_hint_at=hinted.isoformat()))
    if original_id is not None:
        flags.append(flag("copy", f"the same log of this deal was stored earlier as record {original_id}, for "
                                  f"another player", original=original_id))
    for solvability_id, solution in ((row[2], row[3]) for row in rows if row[2] is not None):
        share = solver_share(actions, solution.split())
        if share >= SOLVER_SHARE:
            flags.append(flag("solver-like", f"{share:.0%} of the log's actions follow the service's solver line "
                                             f"for this deal", share=round(share, 4), threshold=SOLVER_SHARE,
                              solvability_id=solvability_id))
            break
    flags.extend(timing_flags(times, elapsed_ms))
    flags.extend(attempt_timing_flags(server_elapsed_ms, elapsed_ms, times))
    return {"flags": flags, "ranked": not flags, "status": "review" if any(f["review"] for f in flags) else "visible",
            "copy_of": original_id, "times": None if times is None else pack_times(times)}


# -- review ----------------------------------------------------------------------

def decide(session: Session, record: Record, status: str, actor: str, reason: str) -> Record:
    """Set a record's status (an admin's decision, API or CLI) and add it to the history.
    Leaving review as ``visible`` clears the review flags: the record is ranked again unless
    other flags (a copy, a hint) still keep it off. The caller commits."""
    if record.status != status:  # setting the status it has changes nothing and records nothing
        if record.status == "review" and status == "visible":
            record.ranked = not any(not f.get("review") for f in record.flags or [])
        record.status = status
        record.history.append(RecordStatus(status=status, actor=actor, at=datetime.now(UTC), reason=reason))
        session.flush()
        webhooks.emit(session, "record.ranked_changed", webhooks.record_data(record))
    return record


def review_queue(session: Session, after: int = 0, limit: int = REVIEW_PAGE) -> tuple[list[Record], int | None]:
    """Records waiting for review, oldest first, after the record id ``after``; and the cursor of the next page."""
    rows = session.scalars(select(Record).where(Record.status == "review", Record.id > after)
                           .order_by(Record.id).limit(limit + 1)).all()
    return list(rows[:limit]), rows[limit - 1].id if len(rows) > limit else None


# -- hints and solutions --------------------------------------------------------

def hint_player(session: Session) -> Player:
    """The player asking for a hint: a hint needs a player token (401 without one, 403 with an API key)."""
    return token_player(session, "a hint", "ask for hints")


def log_hint(session: Session, player: Player, code: str, actions: int, position: str) -> None:
    """Store a hint given (who, which deal, when, at which position)."""
    session.add(Hint(player_id=player.id, code=code, at=datetime.now(UTC), actions=actions,
                     position=position))
    session.commit()


def sees_solutions(session: Session) -> bool:
    """Whether the request comes with an admin key (a sent key is checked; a player token never is one)."""
    token = bearer_token()
    if token is None or is_player_token(token):
        return False
    key = authenticate(session, required=False)
    return key is not None and key.admin


def disclose(answer: dict[str, Any], admin: bool) -> dict[str, Any]:
    """A solvability answer as the asker may see it: the winning line itself only for admin keys;
    everyone gets the status, its length (``solution_actions``, the deal's par) and the coverage."""
    if not admin:
        answer.pop("solution", None)
    return answer
