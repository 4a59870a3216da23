"""The solver behind the API: searches run as Celery tasks on the worker tier
(:mod:`api.tasks`), their answers are stored in the database and served from it.

How a deal's answer comes to be (``GET /deals/{code}/solvability``):

1. A stored answer is served as it is (an ``unknown`` one only for
   ``SOLVER_UNKNOWN_SECONDS``: then the deal is searched again).
2. Otherwise the request takes a *place* (:meth:`Solver.take_place`: one row of
   ``solver_jobs``; the client's limit ``SOLVER_PENDING_PER_CLIENT`` is checked
   first, then the global bound ``SOLVER_QUEUE_SIZE``; refused: 429 or 503 with
   ``Retry-After``, and nothing is taken), then inserts the ``pending`` row (the
   unique constraint makes racing requests share it) and sends the search to the
   ``searches`` queue. It answers ``202`` with ``Retry-After`` at once: no web
   thread waits for a task.
3. A worker runs :meth:`Solver.run_search` (:func:`verifier.solving.solve_code`,
   which replays every winning line), stores the answer if the row is still
   pending, and frees the place.

Hints (``POST /hint``) go the same way with the ``hint_answers`` table and the ``hints``
queue, which workers serve before the long searches.

A row stays ``pending`` for good only if its search was lost. A worker that dies
mid-task leaves its message unacknowledged, and the broker hands it to another
worker after ``CELERY_VISIBILITY_TIMEOUT`` (``acks_late``). A search lost before
the broker took it (or a task that failed) is started again by the next request
after ``SOLVER_STALE_SECONDS`` (a conditional ``UPDATE`` on the attempt counter,
so that one request wins); one handed out :data:`MAX_ATTEMPTS` times without an
answer is stored ``unknown`` with the last error.

Without ``CELERY_BROKER_URL`` (the embedded mode, one user only) the tasks run
eagerly, inside the request that sends them.
"""

from __future__ import annotations

import hashlib
import logging
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from flask import Flask, current_app
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import engine
from engine import GameCode
from verifier.solving import hint_code, solve_code

from .db import Database
from .models import HintAnswer, Solvability, SolverJob
from .problems import Problem

log = logging.getLogger(__name__)

PENDING, WINNABLE, UNWINNABLE, UNKNOWN = "pending", "winnable", "unwinnable", "unknown"
#: a search handed out this many times without an answer is stored ``unknown``
MAX_ATTEMPTS = 3
#: rows the worker's clean-up deletes at most per table after each task
CLEANUP_BATCH = 500
#: tries at taking a place when racing requests take the same slot
PLACE_TRIES = 5


@dataclass(frozen=True)
class Budget:
    """What one search may spend: wall time, and optionally a cap on positions examined."""

    seconds: float
    nodes: int | None = None

    @property
    def key(self) -> str:
        """The budget's identity in the ``solvability`` and ``hint_answers`` tables: ``10s``, ``2s+5000n``."""
        return f"{self.seconds:g}s" + (f"+{self.nodes}n" if self.nodes else "")

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "nodes": self.nodes}


def now() -> datetime:
    return datetime.now(UTC)


def _rows(result: Any) -> int:
    """The rows an UPDATE changed (its result is a ``CursorResult``)."""
    return int(result.rowcount)


def log_hash(log_text: str) -> str:
    return hashlib.sha256(log_text.encode("utf-8")).hexdigest()


#: ``send(kind, args, budget)``: hand a task to the worker tier (see :func:`api.tasks.sender`)
Sender = Callable[[str, tuple[Any, ...], Budget], None]


class Solver:
    """The app's solver: the settings, the places of the queue, and the rows of the
    ``solvability`` and ``hint_answers`` tables the tasks answer."""

    def __init__(self, database: Database, config: dict[str, Any], send: Sender) -> None:
        self.database = database
        self.send = send
        self.enabled: bool = config["SOLVER_ENABLED"]
        self.embedded: bool = config["CELERY_BROKER_URL"] is None
        self.budget = Budget(config["SOLVER_BUDGET_SECONDS"], config["SOLVER_BUDGET_NODES"])
        self.hint_budget = Budget(config["SOLVER_HINT_SECONDS"], config["SOLVER_HINT_NODES"])
        self.queue_size: int = config["SOLVER_QUEUE_SIZE"]
        self.per_client: int = config["SOLVER_PENDING_PER_CLIENT"]
        self.stale = timedelta(seconds=config["SOLVER_STALE_SECONDS"])
        self.unknown_kept = timedelta(seconds=config["SOLVER_UNKNOWN_SECONDS"])
        self.hints_kept = timedelta(seconds=config["SOLVER_HINT_KEEP_SECONDS"])

    @property
    def retry_after(self) -> int:
        """Seconds a client should wait before asking again about a pending search."""
        return max(1, min(5, math.ceil(self.budget.seconds / 2)))

    @property
    def hint_retry_after(self) -> int:
        return max(1, min(5, math.ceil(self.hint_budget.seconds / 2)))

    def require_enabled(self) -> None:
        if not self.enabled:
            raise Problem(503, "the solver is switched off on this server (SOLVER_ENABLED=0): only answers "
                               "stored earlier are served")

    # -- places: the fair queue ---------------------------------------------

    def take_place(self, session: Session, client: str | Callable[[], str], kind: str) -> int:
        """A place for one search of ``client`` (or of whom ``client()`` names, asked only
        now that a place is needed): the id of its ``solver_jobs`` row.

        429 when the client already has ``SOLVER_PENDING_PER_CLIENT`` searches waiting
        or running, 503 when ``SOLVER_QUEUE_SIZE`` are; checked before anything is
        taken, and taken by one insert that the unique slots make atomic."""
        client = client() if callable(client) else client
        moment = now()
        session.execute(delete(SolverJob).where(SolverJob.expires_at < moment))  # lost searches' places
        session.commit()
        for _ in range(PLACE_TRIES):
            mine = set(session.scalars(select(SolverJob.client_slot).where(SolverJob.client == client)))
            if len(mine) >= self.per_client:
                wait = self.retry_after if kind == "deal" else self.hint_retry_after
                raise Problem(429, f"too many searches at once: a client may have {self.per_client} searches "
                                   f"waiting or running (SOLVER_PENDING_PER_CLIENT); ask again in {wait} s",
                              "rate-limited", headers={"Retry-After": str(wait)})
            used = set(session.scalars(select(SolverJob.slot)))  # at most SOLVER_QUEUE_SIZE rows
            free = sorted(set(range(self.queue_size)) - used)
            if not free:
                raise self._busy()
            job = SolverJob(client=client[:64], client_slot=min(set(range(self.per_client)) - mine),
                            slot=random.choice(free), kind=kind, created_at=moment, expires_at=moment + self.stale)
            session.add(job)
            try:
                session.commit()
                return job.id
            except IntegrityError:  # a racing request took the same slot: look again
                session.rollback()
        raise self._busy()

    def _busy(self) -> Problem:
        wait = self.retry_after * 2
        return Problem(503, f"the solver is busy: all {self.queue_size} places for searches are taken; ask again in "
                            f"{wait} s", headers={"Retry-After": str(wait)})

    def release(self, job_id: int) -> None:
        """Free a place (the search ended, or was never sent)."""
        with self.database.sessions() as session:
            session.execute(delete(SolverJob).where(SolverJob.id == job_id))
            session.commit()

    def places_taken(self) -> int:
        """Searches waiting or running now (the table is bounded by ``SOLVER_QUEUE_SIZE``)."""
        with self.database.sessions() as session:
            return session.scalar(select(func.count()).select_from(SolverJob).where(
                SolverJob.expires_at >= now(), SolverJob.slot >= 0)) or 0  # not the markers of api.tasks.send_once

    def _hand_over(self, session: Session, client: str | Callable[[], str], kind: str,
                   claim: Callable[[], tuple[Any, bool]],
                   charge: Callable[[], None], task_args: Callable[[Any, int], tuple[Any, ...]],
                   budget: Budget) -> Any:
        """Take a place, charge the rate limit, claim the row; send its task if this
        request won the claim. The place is freed again unless the task took it."""
        job = self.take_place(session, client, kind)
        sent = False
        try:
            charge()
            row, claimed = claim()
            if claimed:
                try:
                    self.send(kind, task_args(row, job), budget)
                except Problem:
                    raise
                except Exception as error:
                    if not self.embedded:  # the broker did not take it: free the row for the next request
                        self._failed(type(row), row.id, row.attempts, error)
                        raise Problem(503, "the worker tier's broker did not take the search; ask again in a moment",
                                      headers={"Retry-After": "2"}) from error
                    raise
                sent = True
        finally:
            if not sent:
                self.release(job)
        if self.embedded:
            session.refresh(row)
        return row

    # -- GET /deals/{code}/solvability --------------------------------------

    def find(self, session: Session, code: GameCode) -> Solvability | None:
        return session.scalar(select(Solvability).where(
            Solvability.code == str(code), Solvability.budget == self.budget.key,
            Solvability.engine_version == engine.__version__, Solvability.rules_version == engine.RULES_VERSION))

    def request(self, session: Session, code: GameCode, client: str | Callable[[], str] = "ip:unknown",
                charge: Callable[[], None] = lambda: None) -> Solvability:
        """The stored answer for ``code``, or its pending row after making sure a search
        is on its way (sent here when there is none, or when the last one was lost).
        ``charge`` is called before a search is sent (the solver's rate limit)."""
        row = self.find(session, code)
        if row is not None and row.status != PENDING and not self._expired(row):
            return row
        self.require_enabled()
        if row is not None and row.status == PENDING:
            if not self._claimable(row):
                return row  # a search is on its way
            if row.attempts >= MAX_ATTEMPTS:
                return self._give_up(session, row)

        def args(claimed: Solvability, job: int) -> tuple[Any, ...]:
            return (claimed.id, claimed.attempts, job, claimed.code, self.budget.seconds, self.budget.nodes)

        return self._hand_over(session, client, "deal", lambda: self._claim(session, code, row), charge, args,
                               self.budget)

    def _expired(self, row: Solvability) -> bool:
        return row.status == UNKNOWN and row.solved_at is not None and now() - row.solved_at > self.unknown_kept

    def _claimable(self, row: Solvability | HintAnswer) -> bool:
        return row.queued_at is None or now() - row.queued_at > self.stale

    def _claim(self, session: Session, code: GameCode, row: Solvability | None) -> tuple[Solvability, bool]:
        """Insert the pending row, or take over a lost or expired one; ``(row, True)`` when this request won."""
        moment = now()
        if row is None:
            row = Solvability(code=str(code), variant=code.variant, budget=self.budget.key,
                              budget_seconds=self.budget.seconds, budget_nodes=self.budget.nodes,
                              engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
                              status=PENDING, reason=_queued(1), verified=False, attempts=1,
                              requested_at=moment, queued_at=moment)
            session.add(row)
            try:
                session.commit()
                return row, True
            except IntegrityError:  # another request inserted it a moment ago: that one sends the search
                session.rollback()
                found = self.find(session, code)
                if found is None:
                    raise
                return found, False
        if row.status == UNKNOWN:  # expired: searched again from the first attempt
            statement = (update(Solvability).where(Solvability.id == row.id, Solvability.status == UNKNOWN)
                         .values(status=PENDING, attempts=1, queued_at=moment, requested_at=moment, solved_at=None,
                                 reason=_queued(1), statistics=None, coverage=None))
        else:
            seen = row.attempts
            statement = (update(Solvability)
                         .where(Solvability.id == row.id, Solvability.status == PENDING, Solvability.attempts == seen)
                         .values(attempts=seen + 1, queued_at=moment, reason=_queued(seen + 1)))
        result = session.execute(statement)
        session.commit()
        session.refresh(row)
        if _rows(result) == 1:
            log.info("solvability %s (%s): searched again (attempt %d)", row.code, row.budget, row.attempts)
            return row, True
        return row, False

    def _give_up(self, session: Session, row: Solvability | HintAnswer) -> Any:
        model = type(row)
        session.execute(
            update(model).where(model.id == row.id, model.status == PENDING)
            .values(status=UNKNOWN, solved_at=now(),
                    reason=f"the search did not end after {row.attempts} attempts (a worker failed or the "
                           f"service restarted each time); last: {row.reason}"))
        session.commit()
        session.refresh(row)
        return row

    # -- POST /hint ------------------------------------------------------------

    def find_hint(self, session: Session, code: GameCode, canonical: str) -> HintAnswer | None:
        return session.scalar(select(HintAnswer).where(
            HintAnswer.code == str(code), HintAnswer.log_hash == log_hash(canonical),
            HintAnswer.budget == self.hint_budget.key, HintAnswer.engine_version == engine.__version__,
            HintAnswer.rules_version == engine.RULES_VERSION))

    def request_hint(self, session: Session, code: GameCode, canonical: str, after_actions: int,
                     client: str | Callable[[], str] = "ip:unknown",
                     charge: Callable[[], None] = lambda: None) -> HintAnswer:
        """The hint for the position after ``canonical``: answered (kept ``SOLVER_HINT_KEEP_SECONDS``),
        or pending after making sure a search is on its way, as for :meth:`request`."""
        row = self.find_hint(session, code, canonical)
        if row is not None and row.status != PENDING and not self._hint_expired(row):
            return row
        self.require_enabled()
        if row is not None and row.status == PENDING:
            if not self._claimable(row):
                return row
            if row.attempts >= MAX_ATTEMPTS:
                return self._give_up(session, row)

        def args(claimed: HintAnswer, job: int) -> tuple[Any, ...]:
            return (claimed.id, claimed.attempts, job, claimed.code, claimed.log, self.hint_budget.seconds,
                    self.hint_budget.nodes)

        return self._hand_over(session, client, "hint",
                               lambda: self._claim_hint(session, code, canonical, after_actions, row), charge, args,
                               self.hint_budget)

    def _hint_expired(self, row: HintAnswer) -> bool:
        return row.solved_at is not None and now() - row.solved_at > self.hints_kept

    def _claim_hint(self, session: Session, code: GameCode, canonical: str, after_actions: int,
                    row: HintAnswer | None) -> tuple[HintAnswer, bool]:
        moment = now()
        if row is None:
            row = HintAnswer(code=str(code), log_hash=log_hash(canonical), log=canonical, after_actions=after_actions,
                             budget=self.hint_budget.key, engine_version=engine.__version__,
                             rules_version=engine.RULES_VERSION, status=PENDING, reason=_queued(1), attempts=1,
                             requested_at=moment, queued_at=moment)
            session.add(row)
            try:
                session.commit()
                return row, True
            except IntegrityError:
                session.rollback()
                found = self.find_hint(session, code, canonical)
                if found is None:
                    raise
                return found, False
        seen, status = row.attempts, row.status
        values: dict[str, Any] = {"attempts": seen + 1, "queued_at": moment, "reason": _queued(seen + 1)}
        if status != PENDING:  # an expired answer: asked again from the first attempt
            values = {"status": PENDING, "attempts": 1, "queued_at": moment, "requested_at": moment,
                      "solved_at": None, "answer": None, "reason": _queued(1)}
        result = session.execute(update(HintAnswer).where(HintAnswer.id == row.id, HintAnswer.status == status,
                                                          HintAnswer.attempts == seen).values(**values))
        session.commit()
        session.refresh(row)
        return row, _rows(result) == 1

    def get_hint(self, session: Session, hint_id: int) -> HintAnswer:
        row = session.get(HintAnswer, hint_id) if 0 < hint_id < 2 ** 63 else None
        if row is None:
            raise Problem(404, f"there is no hint {hint_id}: it was never asked for, or its answer expired "
                               f"(answers are kept {self.hints_kept.total_seconds():g} s)")
        return row

    # -- the worker side -----------------------------------------------------

    def run_search(self, row_id: int, attempt: int, job_id: int, code: str, seconds: float,
                   nodes: int | None) -> str:
        """A deal's search, on a worker: store the answer in its row and free the place."""
        try:
            try:
                answer = solve_code(code, budget_seconds=seconds, max_nodes=nodes).to_json()
            except SoftTimeLimitExceeded:
                answer = _timed_out(seconds)
            except Exception as error:
                self._failed(Solvability, row_id, attempt, error)
                raise
            self.store(row_id, answer)
            return answer["status"]
        finally:
            self._finish(job_id)

    def run_hint(self, row_id: int, attempt: int, job_id: int, code: str, log_text: str, seconds: float,
                 nodes: int | None) -> str:
        """A hint's search, on a worker: store the hint object in its row and free the place."""
        try:
            try:
                answer = hint_code(code, log_text, budget_seconds=seconds, max_nodes=nodes).to_json()
            except SoftTimeLimitExceeded:
                answer = {"code": code, "status": UNKNOWN, "hint": None, "line_length": None,
                          "after_actions": len(log_text.split()), "search": None, "coverage": None,
                          "reason": _timed_out(seconds)["reason"]}
            except Exception as error:
                self._failed(HintAnswer, row_id, attempt, error)
                raise
            self.store_hint(row_id, answer)
            return answer["status"]
        finally:
            self._finish(job_id)

    def _finish(self, job_id: int) -> None:
        try:
            self.release(job_id)
            self.cleanup()
        except Exception:  # never hide the task's own outcome; the place expires by itself
            log.exception("solver: could not free place %d", job_id)

    def cleanup(self) -> None:
        """Delete what has expired, a bounded batch a table: lost places, old hints, old ``unknown`` answers."""
        moment = now()
        with self.database.sessions() as session:
            session.execute(delete(SolverJob).where(SolverJob.expires_at < moment))
            old_hints = select(HintAnswer.id).where(HintAnswer.solved_at < moment - self.hints_kept)
            session.execute(delete(HintAnswer).where(HintAnswer.id.in_(old_hints.limit(CLEANUP_BATCH))))
            old_unknown = select(Solvability.id).where(Solvability.status == UNKNOWN,
                                                       Solvability.solved_at < moment - self.unknown_kept)
            session.execute(delete(Solvability).where(Solvability.id.in_(old_unknown.limit(CLEANUP_BATCH))))
            session.commit()

    # -- the tables ------------------------------------------------------------

    def store(self, row_id: int, answer: dict[str, Any]) -> bool:
        """Write a search's answer into its row, if the row is still pending; True if it was."""
        status = answer["status"]
        if status not in (WINNABLE, UNWINNABLE, UNKNOWN) or (status == WINNABLE and not answer["verified"]):
            raise ValueError(f"not a storable answer: status {status!r}, verified {answer.get('verified')!r}")
        values: dict[str, Any] = {
            "status": status, "reason": answer["reason"], "verified": bool(answer["verified"]),
            "solution": answer["solution"] if status == WINNABLE else None,
            "solution_actions": answer["solution_actions"] if status == WINNABLE else None,
            "statistics": answer["search"], "coverage": answer["coverage"], "solved_at": now(),
        }
        with self.database.sessions() as session:
            result = session.execute(update(Solvability)
                                     .where(Solvability.id == row_id, Solvability.status == PENDING).values(**values))
            session.commit()
        stored = _rows(result) == 1
        log.info("solver: row %d %s%s", row_id, status, "" if stored else " (already answered: not stored)")
        return stored

    def store_hint(self, row_id: int, answer: dict[str, Any]) -> bool:
        status = answer["status"]
        if status not in (WINNABLE, UNWINNABLE, UNKNOWN):
            raise ValueError(f"not a storable hint: status {status!r}")
        with self.database.sessions() as session:
            result = session.execute(update(HintAnswer).where(HintAnswer.id == row_id, HintAnswer.status == PENDING)
                                     .values(status=status, reason=answer["reason"], answer=answer, solved_at=now()))
            session.commit()
        return _rows(result) == 1

    def _failed(self, model: type[Solvability] | type[HintAnswer], row_id: int, attempt: int,
                error: BaseException) -> None:
        """Free the row for the next request to start the search again, or, after
        :data:`MAX_ATTEMPTS`, store ``unknown`` with the error."""
        what = f"attempt {attempt} failed: {type(error).__name__}: {error}"
        log.error("solver: %s %d: %s", model.__tablename__, row_id, what)
        values: dict[str, Any] = {"queued_at": None, "reason": what}
        if attempt >= MAX_ATTEMPTS:
            values = {"status": UNKNOWN, "solved_at": now(),
                      "reason": f"the search failed {attempt} times; last: {type(error).__name__}: {error}"}
        with self.database.sessions() as session:
            session.execute(update(model).where(model.id == row_id, model.status == PENDING,
                                                model.attempts == attempt).values(**values))
            session.commit()


def _queued(attempt: int) -> str:
    return f"the search is queued or running (attempt {attempt} of at most {MAX_ATTEMPTS})"


def _timed_out(seconds: float) -> dict[str, Any]:
    """An ``unknown`` answer for a search stopped by the worker's soft time limit."""
    return {"status": UNKNOWN, "verified": False, "solution": None, "solution_actions": None, "search": None,
            "coverage": None, "reason": f"the search went past its time limit on the worker (budget {seconds:g} s)"}


def init_app(app: Flask, send: Sender) -> Solver:
    """The app's solver, sending its tasks with ``send`` (:func:`api.tasks.sender`: through the app's Celery)."""
    solver = Solver(app.extensions["api.db"], app.config, send)
    app.extensions["api.solver"] = solver
    return solver


def get_solver() -> Solver:
    return current_app.extensions["api.solver"]
