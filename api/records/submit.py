"""A submission as one service function (:func:`submit`): replay the log once, judge the
game by one of the two judging modes (:class:`JudgedNow`, :class:`JudgedLater`), store it
once (:mod:`api.records.store`) and announce it. It raises domain errors
(:class:`Refused`) that ``api.routes.errors`` answers as problems."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from api.challenges.windows import AttemptUsed, attempt_values
from api.fairplay import evidence
from api.fairplay import judging as fairplay
from api.fairplay.flags import Finding
from api.platform import events, metrics
from api.platform.models import Record
from api.players.accounts import Claim
from api.records import deal_lock
from api.records.shape import record_json
from api.records.store import Stale, new_record, settle_player, store_record
from api.webhooks import delivery as webhooks
from engine import GameCode
from verifier import Verdict, play

# -- a submission ---------------------------------------------------------------

class Refused(Exception):
    """A submission the service does not store (the views answer 422)."""


class EmptyLog(Refused):
    """The log has no action: there is no game to store."""


class BadTimes(Refused):
    """Times that cannot be the log's (``field`` names the place)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Busy(Refused):
    """The deal was busy with other submissions: held by them too long (:func:`api.records.deal_lock.hold_deal`),
    or its records kept changing (:data:`JUDGEMENTS` times)."""


class RejectedLog(Refused):
    """An illegal log, or claims that do not match the replay: the ``verdict`` says which."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__("the log is not verified")
        self.verdict = verdict


@dataclass(frozen=True)
class Submitted:
    """A stored submission: the record to answer with (a dict when new), whether it is new,
    whether it ranked on a deal no search has looked at yet (the caller may have it solved),
    and whether it waits for the worker tier's judgement (``FAIRPLAY_JUDGE=worker``)."""

    record: dict[str, Any] | Record
    new: bool
    ranked_unsearched: bool
    pending: bool = False


def check_times(times: list[int] | None, actions: int) -> None:
    """:class:`BadTimes` unless there is one time per action of the log and none is earlier than the one before."""
    if times is None:
        return
    if len(times) != actions:
        raise BadTimes("times", f"{len(times)} times for a log of {actions} actions: give one time per action")
    for index in range(1, len(times)):
        if times[index] < times[index - 1]:
            raise BadTimes(f"times.{index}", f"{times[index]} ms is earlier than the time before it "
                                             f"({times[index - 1]} ms): times count from the game's start")


#: most times a submission is judged again because other records of its deal came first meanwhile
JUDGEMENTS = 20


def replayed(code: GameCode, body: dict[str, Any], submitted_by: str | None,
             judge_later: bool) -> tuple[dict[str, Any], frozenset[int], list[int]]:
    """The log's one replay: a verified game's column values (its line packed in them), its
    effective line's positions and their index keys (none when its line is ``judge_later``);
    :class:`RejectedLog` for an illegal log or claims that do not match."""
    played = play(code, body["moves"], body.get("claimed"), line=not judge_later)
    verdict = played.verdict
    metrics.verified(verdict)
    if not verdict.verified:
        raise RejectedLog(verdict)
    values = new_record(verdict, body, submitted_by, None if played.line is None else played.line.earned)
    if judge_later:
        return values, frozenset(), []  # (judged later: nothing to read by)
    line = played.positions
    positions = frozenset(line)
    values["line"] = evidence.pack(positions)
    return values, positions, evidence.index_keys(line)


class JudgedNow:
    """``FAIRPLAY_JUDGE=submission``: the line is judged here, against what the database knows
    of the deal when the record is stored; the record takes its boards at once."""

    pending = False
    settles = False  # (the player is read with the deal)

    def __init__(self, positions: frozenset[int], bands: list[int]) -> None:
        self.positions, self.bands = positions, bands

    def read(self, session: Session, values: dict[str, Any], claim: Claim) -> fairplay.DealRead:
        return fairplay.read_deal(session, values["code"], claim, self.positions, self.bands,
                                  values["received_at"], values["log_hash"])

    def line_findings(self, values: dict[str, Any], read: fairplay.DealRead) -> list[Finding]:
        return evidence.judge_line(values["code"], self.positions, read.known)

    def stored(self, session: Session, stored: dict[str, Any] | Record, values: dict[str, Any]) -> None:
        """A stored record's event (written in its transaction) and count."""
        webhooks.emit(session, "record.created", lambda: record_json(stored))
        session.commit()
        metrics.record_stored(values["variant"], values["ranked"], values["flags"])


class JudgedLater:
    """``FAIRPLAY_JUDGE=worker``: the times are judged here, the line on the worker tier
    (:func:`api.fairplay.judging.judge_pending`); the record is stored unranked, flagged
    ``pending``, without its boards. A claimed name's player is settled by the statement that
    stores it (one round trip), unless it is a challenge attempt's, read first
    (:func:`api.fairplay.judging.read_player`): its attempt is read by player."""

    pending = True

    def __init__(self, claim: Claim, body: dict[str, Any]) -> None:
        self.settles = claim.known is None and body.get("attempt") is None

    def read(self, session: Session, values: dict[str, Any], claim: Claim) -> fairplay.DealRead:
        if self.settles:
            values.update(player=claim.name, player_id=None, vouched_by=None)
            return fairplay.UNREAD
        return fairplay.read_player(session, claim)

    def line_findings(self, values: dict[str, Any], read: fairplay.DealRead) -> list[Finding]:
        return []

    def stored(self, session: Session, stored: dict[str, Any] | Record, values: dict[str, Any]) -> None:
        """Nothing yet: its event is sent once it is judged."""
        session.commit()


Judging = JudgedNow | JudgedLater


def submit(session: Session, claim: Claim, code: GameCode, body: dict[str, Any], submitted_by: str | None,
           times_required: bool, judge_later: bool = False) -> Submitted:
    """Replay a submitted game, judge it on its effective line and its times, and store it once
    (:func:`judge_and_store`); announce it (``record_submitted``). Raises :class:`Refused`.
    ``judge_later``: ``FAIRPLAY_JUDGE=worker`` (:class:`JudgedLater`), else :class:`JudgedNow`."""
    if not body["moves"]:
        raise EmptyLog("the log has no action: there is no game to store")
    times = body.get("times")
    check_times(times, len(body["moves"]))
    values, positions, bands = replayed(code, body, submitted_by, judge_later)
    mode: Judging = JudgedLater(claim, body) if judge_later else JudgedNow(positions, bands)
    time_findings = evidence.judge_times(times, body.get("elapsed_ms"), len(values["canonical"].split()),
                                         times_required)
    stored, new, read = judge_and_store(session, claim, body, values, bands, time_findings, mode)
    if new:
        mode.stored(session, stored, values)
    else:
        session.commit()
    done = Submitted(stored, new, new and values["ranked"] and not read.known.solver_lines, new and mode.pending)
    if new:
        events.record_submitted.send(None, code=values["code"], pending=done.pending,
                                     ranked_unsearched=done.ranked_unsearched)
    return done


def judge_and_store(session: Session, claim: Claim, body: dict[str, Any], values: dict[str, Any], bands: list[int],
                    time_findings: list[Finding], mode: Judging
                    ) -> tuple[dict[str, Any] | Record, bool, fairplay.DealRead]:
    """Judge a replayed game and store it: the stored record, whether it is new, and what it was judged by.

    On PostgreSQL that is two round trips: one statement reads what the game is judged by
    (the deal's evidence and version, and the player the claimed name reads as:
    :func:`api.fairplay.judging.read_deal`), one stores it with everything that follows, if the deal's
    version is unchanged (:func:`api.records.store.insert_record`); in autocommit (:func:`begin`) that
    is its commit. Of near-equal games sent at once, the first stored is the original: the others
    find the deal changed and are judged again, holding the deal then
    (:func:`api.records.deal_lock.hold_deal`), at most :data:`JUDGEMENTS` times."""
    times = body.get("times")
    for judgement in range(JUDGEMENTS):
        if judgement:  # another record of the deal was stored since this one's read
            try:
                deal_lock.hold_deal(session, values["code"])
            except deal_lock.DealBusy:
                raise Busy(values["code"]) from None
        deal_lock.lock_deal(session)
        read = mode.read(session, values, claim)
        player = None if mode.settles else settle_player(values, claim, read.named)
        if player is not None and body.get("attempt") is not None:  # an attempt's game (AttemptError, AttemptUsed)
            values.update(attempt_values(session, body["attempt"], player, values["code"], values["log_hash"],
                                         values["received_at"]))
        findings = (mode.line_findings(values, read) + time_findings
                    + evidence.judge_server_time(values["server_elapsed_ms"], body.get("elapsed_ms"), times))
        values.update(fairplay.columns(findings, times, pending=mode.pending))
        try:
            stored, new = store_record(session, values, bands, read.version, upkeep=not mode.pending,
                                       claim=claim if mode.settles else None, times=times)
            return stored, new, read
        except Stale:
            continue
        except IntegrityError:  # a concurrent record of the same attempt came first (its unique index)
            if values["attempt_id"] is None:
                raise
            session.rollback()
            raise AttemptUsed(values["attempt_id"], None) from None
    raise Busy(values["code"])


def begin(session: Session) -> None:
    """Start a submission's session: on PostgreSQL in autocommit, so that the statement that
    stores a record is its own commit (one round trip), unless a webhook endpoint wants
    ``record.created`` (its event is written in the record's transaction)."""
    if session.get_bind().dialect.name == "postgresql" and "record.created" not in webhooks.subscribed(session):
        if session.in_transaction():
            session.commit()  # (ends the transaction of a subscriptions read)
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
