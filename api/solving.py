"""The solver behind the API: searches run in worker processes, their answers are
stored in the ``solvability`` table and served from it ever after.

How a deal's answer comes to be (``GET /deals/{code}/solvability``):

1. The first request for a canonical code (and this server's budget and engine)
   inserts a row ``pending``; the unique constraint makes racing requests share
   that row, and only the request whose insert (or claim, below) succeeded hands
   the search to a worker process. It answers ``202`` with ``Retry-After``.
2. The search runs in a process of this web process's pool (``SOLVER_WORKERS``
   processes, started on first use with ``spawn``, at a lower CPU priority), so
   no request thread ever waits for it. :func:`run_job` is all a worker does:
   :func:`verifier.solving.solve_code`, which replays every winning line before
   returning it.
3. When the search ends, the pool's result thread of the web process stores the
   answer (``winnable`` with the solution, ``unwinnable`` with what the proof
   covered, ``unknown`` with the reason) in the row, if it is still pending.
   Later requests answer ``200`` from the row.

A row stays ``pending`` for good only if its search was lost: the web process
or the worker died, the server restarted, or the answer could not be stored.
The next request for the code after ``SOLVER_STALE_SECONDS`` *claims* it again
(a conditional ``UPDATE`` on the attempt counter, so that one request wins) and
starts a new search. A job handed out :data:`MAX_ATTEMPTS` times without an
answer is stored ``unknown`` with the last error.

Each web process accepts at most ``SOLVER_QUEUE_SIZE`` searches waiting or
running; beyond that a new deal is answered ``503`` with ``Retry-After``.
``SOLVER_WORKERS=0`` runs searches inside the request instead (tests and
development only: the request waits for the search).
"""

from __future__ import annotations

import atexit
import logging
import math
import multiprocessing
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import Any

from flask import Flask, current_app
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import engine
from engine import GameCode
from verifier.solving import solve_code

from .db import Database
from .models import Solvability
from .problems import Problem

log = logging.getLogger(__name__)

PENDING, WINNABLE, UNWINNABLE, UNKNOWN = "pending", "winnable", "unwinnable", "unknown"
#: a search handed to a worker this many times without an answer is stored ``unknown``
MAX_ATTEMPTS = 3
#: nice value added to the worker processes: request threads get the CPU first
WORKER_NICENESS = 10
#: how often a worker process checks that the web process that started it is still alive
PARENT_CHECK_SECONDS = 1.0
#: the solvers of this process that started a pool: stopped when the interpreter exits
_RUNNING: weakref.WeakSet[Solver] = weakref.WeakSet()
_EXIT_LOCK = threading.Lock()
_exit_registered = False


@dataclass(frozen=True)
class Budget:
    """What one search may spend: wall time, and optionally a cap on positions examined."""

    seconds: float
    nodes: int | None = None

    @property
    def key(self) -> str:
        """The budget's identity in the ``solvability`` table: ``10s``, ``2s+5000n``."""
        return f"{self.seconds:g}s" + (f"+{self.nodes}n" if self.nodes else "")

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "nodes": self.nodes}


def now() -> datetime:
    return datetime.now(timezone.utc)


# -- the worker process side ------------------------------------------------

def run_job(code: str, seconds: float, nodes: int | None) -> dict[str, Any]:
    """One deal's search, in a worker process: the verified answer as JSON."""
    return solve_code(code, budget_seconds=seconds, max_nodes=nodes).to_json()


def _init_worker(parent_pid: int) -> None:
    """Start of a worker process: lower priority, and exit when the web process is gone
    (a web process killed outright cannot stop its pool; its workers must not linger)."""
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), name="parent-watch", daemon=True).start()


def _exit_with_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)


# -- the web process side ---------------------------------------------------

class Solver:
    """This web process's solver: the settings, the worker pool and its jobs, and the
    rows of the ``solvability`` table they answer."""

    def __init__(self, database: Database, config: dict[str, Any]) -> None:
        self.database = database
        self.enabled: bool = config["SOLVER_ENABLED"]
        self.workers: int = config["SOLVER_WORKERS"]
        self.budget = Budget(config["SOLVER_BUDGET_SECONDS"], config["SOLVER_BUDGET_NODES"])
        self.hint_budget = Budget(config["SOLVER_HINT_SECONDS"], config["SOLVER_HINT_NODES"])
        self.queue_size: int = config["SOLVER_QUEUE_SIZE"]
        self.stale = timedelta(seconds=config["SOLVER_STALE_SECONDS"])
        self._lock = threading.Lock()
        self._pool: Any = None
        self._pool_pid: int | None = None
        #: jobs handed to this process's pool and not answered yet: row id -> monotonic time
        self._jobs: dict[int, float] = {}
        self._reserved = 0
        longest = math.ceil(self.queue_size / max(1, self.workers)) * self.budget.seconds
        if self.enabled and not self.inline and self.stale.total_seconds() < longest:
            log.warning("SOLVER_STALE_SECONDS=%g is shorter than a full queue takes (%d searches of %g s on %d "
                        "process(es)): searches still waiting may be started twice", self.stale.total_seconds(),
                        self.queue_size, self.budget.seconds, self.workers)

    @property
    def inline(self) -> bool:
        return self.workers == 0

    @property
    def retry_after(self) -> int:
        """Seconds a client should wait before asking again about a pending search."""
        return max(1, min(5, math.ceil(self.budget.seconds / 2)))

    @property
    def jobs(self) -> int:
        """Searches this process has handed to its pool and not seen answered."""
        with self._lock:
            return len(self._jobs)

    def require_enabled(self) -> None:
        if not self.enabled:
            raise Problem(503, "the solver is switched off on this server (SOLVER_ENABLED=0): only answers "
                               "stored earlier are served")

    # -- GET /deals/{code}/solvability --------------------------------------

    def find(self, session: Session, code: GameCode) -> Solvability | None:
        return session.scalar(select(Solvability).where(
            Solvability.code == str(code), Solvability.budget == self.budget.key,
            Solvability.engine_version == engine.__version__, Solvability.rules_version == engine.RULES_VERSION))

    def request(self, session: Session, code: GameCode, charge: Callable[[], None] = lambda: None) -> Solvability:
        """The stored answer for ``code``, or its pending row after making sure a search
        is on its way (started here when there is none, or when the last one was lost).
        ``charge`` is called before a search is started (the solver's rate limit)."""
        row = self.find(session, code)
        if row is not None and row.status != PENDING:
            return row
        self.require_enabled()
        if row is not None and not self._claimable(row):
            return row  # a search is on its way
        if row is not None and row.attempts >= MAX_ATTEMPTS:
            return self._give_up(session, row)
        if not self._reserve():
            raise Problem(503, f"the solver is busy: all {self.queue_size} places for searches in this process are "
                               f"taken; ask again in {self.retry_after * 2} s",
                          headers={"Retry-After": str(self.retry_after * 2)})
        started = False
        try:
            charge()
            row, claimed = self._claim(session, code, row)
            if claimed:
                self._start(row)
                started = True
        finally:
            if not started:
                self._unreserve()
        if self.inline:
            session.refresh(row)
        return row

    def _claimable(self, row: Solvability) -> bool:
        return row.queued_at is None or now() - row.queued_at > self.stale

    def _claim(self, session: Session, code: GameCode, row: Solvability | None) -> tuple[Solvability, bool]:
        """Insert the pending row, or take over a lost one; ``(row, True)`` when this request won."""
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
            except IntegrityError:  # another request inserted it a moment ago: that one starts the search
                session.rollback()
                found = self.find(session, code)
                if found is None:
                    raise
                return found, False
        seen = row.attempts
        result = session.execute(
            update(Solvability)
            .where(Solvability.id == row.id, Solvability.status == PENDING, Solvability.attempts == seen)
            .values(attempts=seen + 1, queued_at=moment, reason=_queued(seen + 1)))
        session.commit()
        session.refresh(row)
        if result.rowcount == 1:
            log.warning("solvability %s (%s): search lost, started again (attempt %d)", row.code, row.budget, seen + 1)
            return row, True
        return row, False

    def _give_up(self, session: Session, row: Solvability) -> Solvability:
        session.execute(
            update(Solvability).where(Solvability.id == row.id, Solvability.status == PENDING)
            .values(status=UNKNOWN, solved_at=now(),
                    reason=f"the search did not end after {row.attempts} attempts (a solver process failed or the "
                           f"server restarted each time); last: {row.reason}"))
        session.commit()
        session.refresh(row)
        return row

    # -- the pool -----------------------------------------------------------

    def _reserve(self) -> bool:
        if self.inline:
            return True
        with self._lock:
            horizon = time.monotonic() - self.stale.total_seconds()
            for row_id in [r for r, at in self._jobs.items() if at < horizon]:
                del self._jobs[row_id]  # lost (its worker died): its row is claimed again by then
            if len(self._jobs) + self._reserved >= self.queue_size:
                return False
            self._reserved += 1
            return True

    def _unreserve(self) -> None:
        if not self.inline:
            with self._lock:
                self._reserved -= 1

    def _start(self, row: Solvability) -> None:
        """Hand the claimed row's search to the pool (or, inline, run it now)."""
        args = (row.code, self.budget.seconds, self.budget.nodes)
        if self.inline:
            try:
                answer = run_job(*args)
            except Exception as error:
                self.failed(row.id, row.attempts, error)
                raise
            self.store(row.id, answer)
            return
        with self._lock:
            pool = self._pool_here()
            self._jobs[row.id] = time.monotonic()  # before the job can end, so that its end removes it
            self._reserved -= 1
        try:
            pool.apply_async(run_job, args, callback=partial(self._done, row.id),
                             error_callback=partial(self._error, row.id, row.attempts))
        except Exception as error:  # the pool is closed or broken: the next request starts it again
            with self._lock:
                self._jobs.pop(row.id, None)
                self._reserved += 1  # released by the caller
                self._pool = None
            self.failed(row.id, row.attempts, error)
            raise Problem(503, "the solver could not start the search; ask again in a moment",
                          headers={"Retry-After": "1"}) from error

    def _pool_here(self) -> Any:
        """This process's pool, started on first use (and again in a forked child, e.g. gunicorn --preload)."""
        if self._pool is None or self._pool_pid != os.getpid():
            if self._pool_pid != os.getpid():
                self._jobs.clear()  # a forked child: the parent's jobs are not ours
            context = multiprocessing.get_context("spawn")
            self._pool = context.Pool(self.workers, initializer=_init_worker, initargs=(os.getpid(),))
            self._pool_pid = os.getpid()
            _stop_at_exit(self)
            log.info("solver: started %d worker process(es)", self.workers)
        return self._pool

    def _done(self, row_id: int, answer: dict[str, Any]) -> None:
        """In the pool's result thread: store the answer (never raise here: it would stop that thread)."""
        try:
            self.store(row_id, answer)
        except Exception:
            log.exception("solver: could not store the answer for row %d (it is searched again once stale)", row_id)
        finally:
            with self._lock:
                self._jobs.pop(row_id, None)

    def _error(self, row_id: int, attempt: int, error: BaseException) -> None:
        try:
            self.failed(row_id, attempt, error)
        except Exception:
            log.exception("solver: could not record the failed search of row %d", row_id)
        finally:
            with self._lock:
                self._jobs.pop(row_id, None)

    # -- the table ----------------------------------------------------------

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
        stored = result.rowcount == 1
        log.info("solver: row %d %s%s", row_id, status, "" if stored else " (already answered: not stored)")
        return stored

    def failed(self, row_id: int, attempt: int, error: BaseException) -> None:
        """A search that ended without an answer: free the row for the next request to start
        it again, or, after :data:`MAX_ATTEMPTS`, store ``unknown``."""
        what = f"attempt {attempt} failed: {type(error).__name__}: {error}"
        log.error("solver: row %d: %s", row_id, what)
        values: dict[str, Any] = {"queued_at": None, "reason": what}
        if attempt >= MAX_ATTEMPTS:
            values = {"status": UNKNOWN, "solved_at": now(),
                      "reason": f"the search failed {attempt} times; last: {type(error).__name__}: {error}"}
        with self.database.sessions() as session:
            session.execute(update(Solvability).where(
                Solvability.id == row_id, Solvability.status == PENDING, Solvability.attempts == attempt)
                .values(**values))
            session.commit()

    def shutdown(self) -> None:
        """Stop this process's worker pool now (running searches are killed, their rows stay pending)."""
        with self._lock:
            pool, self._pool = self._pool, None
            mine = self._pool_pid == os.getpid()
            self._jobs.clear()
        if pool is not None and mine:
            pool.terminate()
            pool.join()


def _stop_at_exit(solver: Solver) -> None:
    """Stop ``solver``'s pool when the interpreter exits (a gunicorn worker leaving, say): the
    running searches are killed at once instead of delaying the exit, and the pool is closed
    properly (registered after :mod:`multiprocessing`'s own exit hook, so it runs before it)."""
    global _exit_registered
    with _EXIT_LOCK:
        _RUNNING.add(solver)
        if not _exit_registered:
            atexit.register(_stop_all)
            _exit_registered = True


def _stop_all() -> None:
    for solver in list(_RUNNING):
        solver.shutdown()


def _queued(attempt: int) -> str:
    return f"the search is queued or running (attempt {attempt} of at most {MAX_ATTEMPTS})"


def init_app(app: Flask) -> Solver:
    """The app's solver; its worker processes start with the first search (never in a
    process that only forks workers, such as gunicorn's master with ``--preload``)."""
    solver = Solver(app.extensions["api.db"], app.config)
    app.extensions["api.solver"] = solver
    return solver


def get_solver() -> Solver:
    return current_app.extensions["api.solver"]
