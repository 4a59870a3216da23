"""The solver behind the API: searches run as Celery tasks on the worker tier
(:mod:`api.tasks`), their answers are stored in the database and served from it.

Two *search kinds* share one path (:class:`SearchKind`): a deal's solvability
(:class:`DealSearch`, the ``solvability`` table) and a hint, the next action after a
log (:class:`HintSearch`, ``hint_answers``). For either:

1. A stored answer is served as it is (until the kind's keeping time ends: then the
   position is searched again).
2. Otherwise the request takes a *place* (:meth:`Solver.take_place`: one row of
   ``solver_jobs``, the job). The client's limit ``SOLVER_PENDING_PER_CLIENT`` is
   checked first, then the queue's: anonymous clients (by IP) together hold at most
   half of the ``SOLVER_QUEUE_SIZE`` places, clients with an API key any free place but
   the last ``SOLVER_TASK_PLACES``, so a key is never refused because anonymous clients
   fill the queue. Those last places are the service's own (``task:fair-play``, which
   may hold them all): no client flood starves fair play's searches. Refused:
   :class:`ClientBusy` or :class:`QueueFull`, and nothing is taken. Then it inserts the
   ``pending`` row (the unique constraint makes identical searches share it, whoever
   asks) and sends a *ticket* to the kind's queue. It answers at once: no web thread
   waits for a task.
3. A worker that takes a ticket runs the best waiting job of the kind
   (:meth:`Solver.run_next`): jobs of the service's tasks and API keys first, round-robin by client (each
   client's first waiting job, oldest first, then each one's second …), then the
   anonymous ones the same way. A key that asks for a search an anonymous client
   started moves that job up to its own class. The worker stores the answer if the
   row is still pending, and frees the place.

A row stays ``pending`` for good only if its search was lost. A worker that dies
mid-task leaves its ticket unacknowledged; the broker hands the ticket to another
worker after ``CELERY_VISIBILITY_TIMEOUT`` (``acks_late``), which runs the same job
again (the job remembers the ticket that took it). A search lost before the broker
took it (or a task that failed) is started again by the next request after
``SOLVER_STALE_SECONDS`` (a conditional ``UPDATE`` on the attempt counter, so that
one request wins); one handed out :data:`MAX_ATTEMPTS` times without an answer is
stored ``unknown`` with the last error.

Hints are handed to players under an unguessable token (``hint_requests``): the
same search may serve many players, but each player polls their own token, and a
token polled by anyone else is :class:`NoSuchHint`.

The service raises the domain errors of :class:`SolverError`; ``api/routes/errors.py``
turns them into HTTP answers. Without ``CELERY_BROKER_URL`` (the embedded mode, one
user only) the tickets run eagerly, inside the request that sends them.
"""

from __future__ import annotations

import logging
import math
import random
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from celery.exceptions import SoftTimeLimitExceeded
from flask import Flask, current_app
from sqlalchemy import ColumnElement, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import engine
from api.platform import metrics
from api.platform.columns import dialect_insert
from api.platform.db import Database
from api.platform.models import HintAnswer, HintRequest, Solvability, SolverJob
from api.records.store import log_hash
from engine import Game, GameCode, Position
from verifier import Played
from verifier.solving import Hint, continue_played, hint_played, position_key, solve_code, start

log = logging.getLogger(__name__)

PENDING, WINNABLE, UNWINNABLE, UNKNOWN = "pending", "winnable", "unwinnable", "unknown"
#: a search handed out this many times without an answer is stored ``unknown``
MAX_ATTEMPTS = 3
#: rows the worker's clean-up deletes at most per table after each task
CLEANUP_BATCH = 500
#: a web process cleans up too after storing this many continued hints (they run no task)
CLEANUP_EVERY = 100
#: tries at taking a place (or a job) when racing requests (or workers) take the same one
PLACE_TRIES = 5
#: kept lines tried at most for continuing one to a position (each is replayed before it is used)
LINES_TRIED = 3
#: the queue classes of a job, served in this order: the service's own tasks and clients with an
#: API key, then the others
KEYED, ANONYMOUS = 0, 1
#: the client names of the service's own searches (``task:fair-play``): they take the places
#: ``SOLVER_TASK_PLACES`` keeps for them
TASK = "task:"


# -- domain errors (the routes turn them into HTTP) ---------------------------------

class SolverError(Exception):
    """A search that cannot be started now; ``retry_after``: seconds worth waiting, if any."""

    retry_after: int | None = None


class SolverOff(SolverError):
    """``SOLVER_ENABLED=0``: only stored answers are served."""


class ClientBusy(SolverError):
    """The client already has ``limit`` searches waiting or running."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(f"a client may have {limit} searches waiting or running")
        self.limit, self.retry_after = limit, retry_after


class QueueFull(SolverError):
    """Every place this client's class may take is taken."""

    def __init__(self, places: int, anonymous: bool, retry_after: int) -> None:
        super().__init__(f"all {places} places are taken")
        self.places, self.anonymous, self.retry_after = places, anonymous, retry_after


class BrokerDown(SolverError):
    """The broker did not take the ticket: nothing is queued, the next request tries again."""

    retry_after = 2


class NoSuchHint(SolverError):
    """No hint under this token for this player (never handed out, someone else's, or expired)."""

    def __init__(self, kept_seconds: float) -> None:
        super().__init__("no such hint")
        self.kept_seconds = kept_seconds


# -- budgets and search kinds ---------------------------------------------------------

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


@dataclass(frozen=True)
class Query:
    """What a search is asked about: a deal, and for a hint the canonical log played so far."""

    code: GameCode
    log: str = ""
    actions: int = 0


def now() -> datetime:
    return datetime.now(UTC)


def _rows(result: Any) -> int:
    """The rows an UPDATE changed (its result is a ``CursorResult``)."""
    return int(result.rowcount)


SearchRow = Solvability | HintAnswer


class SearchKind:
    """One kind of search: its table, its budget, how long an answer is served, how a row
    is made, searched and answered. :class:`Solver` runs every kind the same way."""

    name: ClassVar[str]                          # the jobs' ``kind`` and the task (queue) of its tickets
    model: ClassVar[type[Solvability] | type[HintAnswer]]

    def __init__(self, budget: Budget, kept: timedelta = timedelta(days=1)) -> None:
        self.budget, self.kept = budget, kept

    @property
    def retry_after(self) -> int:
        """Seconds a client should wait before asking again about a pending search."""
        return max(1, min(5, math.ceil(self.budget.seconds / 2)))

    def identity(self, query: Query) -> list[ColumnElement[bool]]:
        model = self.model
        return [model.code == str(query.code), model.budget == self.budget.key,
                model.engine_version == engine.__version__, model.rules_version == engine.RULES_VERSION]

    def find(self, session: Session, query: Query) -> Any:
        return session.scalar(select(self.model).where(*self.identity(query)))

    def expired(self, row: Any) -> bool:
        raise NotImplementedError

    def new_row(self, query: Query, moment: datetime) -> Any:
        raise NotImplementedError

    def restart(self) -> dict[str, Any]:
        """The values that turn an expired answer into a pending row again."""
        raise NotImplementedError

    def search(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        """The answer of a search, as ``verifier.solving`` gives it (JSON)."""
        raise NotImplementedError

    def timed_out(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        """The answer of a search stopped by the worker's soft time limit."""
        raise NotImplementedError

    def stored(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The row's values for ``answer``; ``ValueError`` when it is not an answer to store."""
        raise NotImplementedError

    def run_here(self, session: Session, query: Query) -> Any:
        """The answer for ``query``: the stored one, or a search run in this process (a
        worker's task: challenges and the winnable pool) and stored like every other
        answer; a request's pending row for the same budget is answered too. Commits."""
        row = self.find(session, query)
        if row is not None and row.status != PENDING:
            return row
        values = self.stored(self.search(str(query.code), query.log, self.budget))
        if row is None:
            row = self.new_row(query, now())
            for name, value in {**values, "queued_at": None}.items():
                setattr(row, name, value)
            session.add(row)
        else:
            model = self.model
            session.execute(update(model).where(model.id == row.id, model.status == PENDING).values(**values))
        session.commit()
        session.refresh(row)
        return row


class DealSearch(SearchKind):
    """Can the deal be won (``GET /deals/{code}/solvability``; challenges and the winnable pool)."""

    name, model = "deal", Solvability
    #: steps of the pass that shortens a found line (``engine.solver.shorten``); 0: the verdict only
    shorten_steps: int | None = None

    def expired(self, row: Solvability) -> bool:
        return row.status == UNKNOWN and row.solved_at is not None and now() - row.solved_at > self.kept

    def new_row(self, query: Query, moment: datetime) -> Solvability:
        code = query.code
        return Solvability(code=str(code), variant=code.variant, budget=self.budget.key,
                           budget_seconds=self.budget.seconds, budget_nodes=self.budget.nodes,
                           engine_version=engine.__version__, rules_version=engine.RULES_VERSION, status=PENDING,
                           reason=_queued(1), verified=False, attempts=1, requested_at=moment, queued_at=moment)

    def restart(self) -> dict[str, Any]:
        return {"solved_at": None, "statistics": None, "coverage": None}

    def search(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        steps: dict[str, Any] = {} if self.shorten_steps is None else {"shorten_steps": self.shorten_steps}
        answer = solve_code(code, budget_seconds=budget.seconds, max_nodes=budget.nodes, **steps).to_json()
        if answer["status"] == WINNABLE and not answer["verified"]:  # never store a line that did not replay
            answer = {**answer, "status": UNKNOWN, "reason": f"a line was found but did not replay as a win: "
                                                             f"{answer['reason']}"}
        return answer

    def timed_out(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        return {"status": UNKNOWN, "verified": False, "solution": None, "solution_actions": None, "search": None,
                "coverage": None, "reason": _timed_out(budget)}

    def stored(self, answer: dict[str, Any]) -> dict[str, Any]:
        status = answer["status"]
        if status not in (WINNABLE, UNWINNABLE, UNKNOWN) or (status == WINNABLE and not answer["verified"]):
            raise ValueError(f"not a storable answer: status {status!r}, verified {answer.get('verified')!r}")
        won = status == WINNABLE
        return {"status": status, "reason": answer["reason"], "verified": bool(answer["verified"]),
                "solution": answer["solution"] if won else None,
                "solution_actions": answer["solution_actions"] if won else None,
                "statistics": answer["search"], "coverage": answer["coverage"], "solved_at": now()}


class HintSearch(SearchKind):
    """The next action of a winning line after a log (``POST /hint``)."""

    name, model = "hint", HintAnswer
    #: answers this process stored by continuing a line (no task ran, so no clean-up after one)
    made = 0

    def identity(self, query: Query) -> list[ColumnElement[bool]]:
        return [*super().identity(query), HintAnswer.log_hash == log_hash(query.log)]

    def expired(self, row: HintAnswer) -> bool:
        return row.solved_at is not None and now() - row.solved_at > self.kept

    def new_row(self, query: Query, moment: datetime) -> HintAnswer:
        return HintAnswer(code=str(query.code), log_hash=log_hash(query.log), log=query.log,
                          after_actions=query.actions, budget=self.budget.key, engine_version=engine.__version__,
                          rules_version=engine.RULES_VERSION, status=PENDING, reason=_queued(1), attempts=1,
                          requested_at=moment, queued_at=moment)

    def restart(self) -> dict[str, Any]:
        return {"solved_at": None, "answer": None}

    def search(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        """The hint as ``verifier.solving`` gives it, with its line and where it leads (for :meth:`stored`),
        and the log as played (``played``: :meth:`joined` tries a line after it; never stored)."""
        path: list[Position] = []
        played = start(code, log_text, path)  # (the log's one replay here: :meth:`joined` plays after its game)
        hint = hint_played(played, path, budget_seconds=budget.seconds, max_nodes=budget.nodes)
        return {**with_line(hint), "played": played}

    def timed_out(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        return {"code": code, "status": UNKNOWN, "hint": None, "line_length": None,
                "after_actions": len(log_text.split()), "continued": False, "search": None, "coverage": None,
                "reason": _timed_out(budget)}

    def stored(self, answer: dict[str, Any]) -> dict[str, Any]:
        status = answer["status"]
        if status not in (WINNABLE, UNWINNABLE, UNKNOWN):
            raise ValueError(f"not a storable hint: status {status!r}")
        shown = {name: value for name, value in answer.items() if name not in ("line", "next_key", "played")}
        return {"status": status, "reason": answer["reason"], "answer": shown, "line": answer.get("line"),
                "next_key": answer.get("next_key"), "solved_at": now()}

    def continued(self, session: Session, query: Query, played: Played) -> HintAnswer | None:
        """The hint for ``query`` (its log ``played`` already) without a search, when a line goes
        on from its position: the line of a kept answer whose hint reaches it (the player's own
        previous hint first: the answer for the log without its last action), else, at the
        start, the deal's stored line. Each line is tried after the game played, not by
        replaying the log. Stored as the answer for ``query`` (a new row, or one pending,
        unknown or expired) and returned; None when no line goes on from here."""
        key = position_key(played.game.position)
        hint = None
        for line in self._lines_to(session, query, key):
            hint = continue_played(played, line.split())
            if hint is not None:
                break
        if hint is None:
            return None
        values = self.stored(with_line(hint))
        row = self.find(session, query)
        if row is None:
            row = self.new_row(query, now())
            for name, value in {**values, "queued_at": None, "attempts": 0}.items():
                setattr(row, name, value)
            session.add(row)
            try:
                session.commit()
            except IntegrityError:  # a racing request stored it a moment ago
                session.rollback()
                return self.find(session, query)
            self.made += 1
            return row
        session.execute(update(HintAnswer).where(HintAnswer.id == row.id, HintAnswer.status == row.status)
                        .values(**values, queued_at=None))
        session.commit()
        session.refresh(row)
        return row

    def _lines_to(self, session: Session, query: Query, key: str) -> Iterator[str]:
        """Winning lines from the position of ``key``: the rest of each kept hint's line that
        reaches it (the answer for the log without its last action first, then the newest), then
        the deal's stored line (any budget), which every hint from the start may follow."""
        previous = " ".join(query.log.split()[:-1])
        fresh = now() - self.kept
        leading = (select(HintAnswer.line).where(*self.identity_of_deal(query), HintAnswer.next_key == key,
                                                 HintAnswer.status == WINNABLE, HintAnswer.line.is_not(None),
                                                 HintAnswer.solved_at >= fresh)
                   .order_by((HintAnswer.log_hash == log_hash(previous)).desc(), HintAnswer.solved_at.desc())
                   .limit(LINES_TRIED))
        for line in session.scalars(leading):
            yield " ".join((line or "").split()[1:])
        if key == position_key(Game.from_code(query.code).position):
            deal = session.scalar(select(Solvability.solution).where(
                Solvability.code == str(query.code), Solvability.status == WINNABLE, Solvability.verified.is_(True),
                Solvability.engine_version == engine.__version__, Solvability.rules_version == engine.RULES_VERSION)
                .order_by(Solvability.solved_at.desc()).limit(1))
            if deal:
                yield deal

    def joined(self, session: Session, query: Query, answer: dict[str, Any]) -> dict[str, Any]:
        """``answer`` (a new search's, with its line) joined to the line kept for the log with
        its hint played, when there is one: the player who plays the hint then gets that
        answer, one action shorter, as if it continued this one."""
        line = str(answer["line"]).split()
        after = " ".join([*query.log.split(), line[0]])
        kept = session.scalar(select(HintAnswer.line).where(
            *self.identity_of_deal(query), HintAnswer.log_hash == log_hash(after), HintAnswer.status == WINNABLE,
            HintAnswer.line.is_not(None), HintAnswer.solved_at >= now() - self.kept))
        joined = [line[0], *(kept or "").split()]
        played = answer.get("played") or start(query.code, query.log)
        if not kept or joined == line or continue_played(played, joined) is None:
            return answer
        return {**answer, "line": " ".join(joined), "line_length": len(joined),
                "reason": f"the first of {len(joined)} actions of a winning line (verified by replay)"}

    def identity_of_deal(self, query: Query) -> list[ColumnElement[bool]]:
        """The answers of the same deal, budget, engine and rules as ``query``'s (any log)."""
        return super().identity(query)


def with_line(hint: Hint) -> dict[str, Any]:
    """A hint's JSON with, for :meth:`HintSearch.stored`, its whole line and the key of the position it reaches."""
    return {**hint.to_json(), "line": " ".join(hint.line) if hint.action else None, "next_key": hint.next_key}


#: ``send(kind, budget, keyed)``: hand a ticket for a job of ``kind`` to the worker tier, on the
#: keys' queue when ``keyed`` (see :func:`api.tasks.sender`)
Sender = Callable[[str, Budget, bool], None]
#: who asks: a client name (``key:<id>``, ``ip:<address>``) or a function giving it, asked only when needed
Client = str | Callable[[], str]


class Solver:
    """The app's solver: the settings, the search kinds, the places of the queue and the jobs."""

    def __init__(self, database: Database, config: dict[str, Any], send: Sender) -> None:
        #: told the code of a deal whose winning line was just stored (fair play judges its records again)
        self.line_learned: Callable[[str], None] = lambda code: None
        self.database = database
        self.send = send
        self.enabled: bool = config["SOLVER_ENABLED"]
        self.embedded: bool = config["CELERY_BROKER_URL"] is None
        self.deals = DealSearch(Budget(config["SOLVER_BUDGET_SECONDS"], config["SOLVER_BUDGET_NODES"]),
                                timedelta(seconds=config["SOLVER_UNKNOWN_SECONDS"]))
        self.hints = HintSearch(Budget(config["SOLVER_HINT_SECONDS"], config["SOLVER_HINT_NODES"]),
                                timedelta(seconds=config["SOLVER_HINT_KEEP_SECONDS"]))
        self.kinds: dict[str, SearchKind] = {kind.name: kind for kind in (self.deals, self.hints)}
        self.queue_size: int = config["SOLVER_QUEUE_SIZE"]
        #: the places the service's own tasks may hold beside the others': the last ones, no client takes them
        self.task_places: int = config["SOLVER_TASK_PLACES"]
        #: the places clients (keys and anonymous) may take: the first ones
        self.client_places = self.queue_size - self.task_places
        #: the places anonymous clients may hold together: half the queue, at least one
        self.anonymous_places = max(1, min(self.queue_size // 2, self.client_places))
        self.per_client: int = config["SOLVER_PENDING_PER_CLIENT"]
        self.stale = timedelta(seconds=config["SOLVER_STALE_SECONDS"])

    def require_enabled(self) -> None:
        if not self.enabled:
            raise SolverOff("the solver is switched off")

    # -- places: the fair queue ---------------------------------------------

    def take_place(self, session: Session, client: str, kind: SearchKind) -> SolverJob:
        """A place for one search of ``client``: its ``solver_jobs`` row, not yet added to
        the session (:meth:`request` adds it with its search, in one commit: the unique
        slots make that insert the atomic check). :class:`ClientBusy` when the client has
        all its places, :class:`QueueFull` when its class has, checked before anything is taken."""
        moment = now()
        keyed, task = client.startswith("key:"), client.startswith(TASK)
        places = self.queue_size if task else self.client_places if keyed else self.anonymous_places
        limit = max(self.per_client, self.task_places) if task else self.per_client
        for cleared in (False, True):
            taken = session.execute(select(SolverJob.client, SolverJob.client_slot, SolverJob.slot, SolverJob.turn,
                                           SolverJob.expires_at)
                                    .where(SolverJob.slot >= 0)).all()  # at most SOLVER_QUEUE_SIZE rows
            mine = {job.client_slot for job in taken if job.client == client}
            free = sorted(set(range(places)) - {job.slot for job in taken})
            if (len(mine) >= limit or not free) and not cleared and any(job.expires_at < moment for job in taken):
                session.execute(delete(SolverJob).where(SolverJob.expires_at < moment))  # lost searches' places
                continue
            if len(mine) >= limit:
                raise ClientBusy(limit, kind.retry_after)
            if not free:
                raise QueueFull(places, not (keyed or task), kind.retry_after * 2)
            # round-robin: the client's next turn after its jobs in the queue, not before the current round
            turn = max([min((job.turn for job in taken), default=0),
                        *(job.turn + 1 for job in taken if job.client == client)])
            break
        # a random free slot, so that racing requests seldom pick the same one (keys: above the
        # anonymous half while there is room, leaving it to the others; tasks: their own places first)
        above = self.client_places if task else self.anonymous_places if keyed else 0
        slot = random.choice([s for s in free if s >= above] or free)
        return SolverJob(client=client[:64], client_slot=min(set(range(limit)) - mine), slot=slot,
                         kind=kind.name, priority=KEYED if keyed or task else ANONYMOUS, turn=turn, attempt=0,
                         budget_seconds=kind.budget.seconds, budget_nodes=kind.budget.nodes, created_at=moment,
                         expires_at=moment + self.stale)

    def release(self, job_id: int) -> None:
        """Free a place (the search ended, or was never sent)."""
        with self.database.sessions() as session:
            session.execute(delete(SolverJob).where(SolverJob.id == job_id))
            session.commit()

    # -- a request ---------------------------------------------------------------

    def request(self, session: Session, kind: SearchKind, query: Query, client: Client = "ip:unknown",
                charge: Callable[[], None] = lambda: None,
                with_new_row: Callable[[Any], list[Any]] | None = None) -> Any:
        """The stored answer of ``kind`` for ``query``, or its pending row after making sure
        a search is on its way (sent here when there is none, or when the last one was
        lost). ``charge`` is called before a search is sent (the solver's rate limit);
        ``with_new_row(row)`` gives rows stored in the same commit as a row this request
        inserts (a hint's token: one commit for the whole request)."""
        row = kind.find(session, query)
        if row is not None and row.status != PENDING and not kind.expired(row):
            return row
        self.require_enabled()
        if row is not None and row.status == PENDING:
            if not self._claimable(row):
                self._move_up(session, kind, row, client)
                return row  # a search is on its way
            if row.attempts >= MAX_ATTEMPTS:
                return self._give_up(session, row)
        name = client() if callable(client) else client
        for attempt in range(PLACE_TRIES):
            job = self.take_place(session, name, kind)
            if attempt == 0:
                charge()
            new = row is None
            row, claimed = self._claim(session, kind, query, row)
            if not claimed:
                return row  # another request sends it: no place taken
            job.target, job.attempt = row.id, row.attempts
            session.add_all([job, *(with_new_row(row) if new and with_new_row else [])])
            try:
                session.commit()  # the claim and the place together
                break
            except IntegrityError:  # a racing request took the same slot: look again
                session.rollback()
                row = kind.find(session, query)
        else:
            raise QueueFull(self.queue_size, not name.startswith("key:"), kind.retry_after * 2)
        self._send(kind, row, job)
        if self.embedded:
            session.refresh(row)
        return row

    def hint(self, session: Session, query: Query, played: Played, client: Client = "ip:unknown",
             charge: Callable[[], None] = lambda: None,
             with_new_row: Callable[[Any], list[Any]] | None = None) -> HintAnswer:
        """The hint for ``query`` (its log ``played``: :func:`verifier.play`): the stored answer; else the next
        action of a line that goes on from here (the line of the hint that led here, or the
        deal's), at once and without a search; else :meth:`request`'s (a search on its way).
        A line that goes on replaces a pending, ``unknown`` or expired answer too."""
        row = self.hints.find(session, query)
        if self.enabled and (row is None or row.status in (PENDING, UNKNOWN) or self.hints.expired(row)):
            continued = self.hints.continued(session, query, played)
            if continued is not None:
                if self.hints.made >= CLEANUP_EVERY:  # what expired goes, as after a search
                    self.hints.made = 0
                    self.cleanup()
                return continued
        return self.request(session, self.hints, query, client, charge, with_new_row)  # type: ignore[no-any-return]

    def _send(self, kind: SearchKind, row: SearchRow, job: SolverJob) -> None:
        """Send a ticket for the job; when the broker does not take it, free the row and the place."""
        job_id, keyed = job.id, job.priority == KEYED
        try:
            self.send(kind.name, kind.budget, keyed)
        except Exception as error:
            self.release(job_id)
            if not self.embedded:  # the broker did not take it: free the row for the next request
                self._failed(kind.model, row.id, row.attempts, error)
                raise BrokerDown("the worker tier's broker did not take the search") from error
            raise

    def _move_up(self, session: Session, kind: SearchKind, row: SearchRow, client: Client) -> None:
        """A key asking for a search that waits as an anonymous client's: the job moves to the keys' class."""
        if not (callable(client) or client.startswith("key:")):
            return
        waiting = (SolverJob.kind == kind.name, SolverJob.target == row.id, SolverJob.started_at.is_(None),
                   SolverJob.priority != KEYED)
        if session.scalar(select(SolverJob.id).where(*waiting).limit(1)) is None:
            return
        if (client() if callable(client) else client).startswith("key:"):
            session.execute(update(SolverJob).where(*waiting).values(priority=KEYED))
            session.commit()
            try:  # a ticket on the keys' queue too, so that it does not wait behind anonymous tickets
                self.send(kind.name, kind.budget, True)  # (a ticket that finds no job left does nothing)
            except Exception:
                log.warning("solver: no extra ticket for a search moved up (the broker did not take it)")

    def _claimable(self, row: SearchRow) -> bool:
        return row.queued_at is None or now() - row.queued_at > self.stale

    def _claim(self, session: Session, kind: SearchKind, query: Query, row: Any) -> tuple[Any, bool]:
        """Insert the pending row, or take over a lost or expired one, in the session's
        transaction (the caller commits it with the place); ``(row, True)`` when this
        request won, else ``(row, False)`` with nothing left to commit."""
        moment = now()
        if row is None:
            row = kind.new_row(query, moment)
            session.add(row)
            try:
                session.flush()
                return row, True
            except IntegrityError:  # another request inserted it a moment ago: that one sends the search
                session.rollback()
                found = kind.find(session, query)
                if found is None:
                    raise
                return found, False
        model, seen, status = kind.model, row.attempts, row.status
        values: dict[str, Any] = {"attempts": seen + 1, "queued_at": moment, "reason": _queued(seen + 1)}
        if status != PENDING:  # an expired answer: searched again from the first attempt
            values = {**kind.restart(), "status": PENDING, "attempts": 1, "queued_at": moment,
                      "requested_at": moment, "reason": _queued(1)}
        result = session.execute(update(model).where(model.id == row.id, model.status == status,
                                                     model.attempts == seen).values(**values))
        if _rows(result) == 1:
            log.info("%s %s (%s): searched again (attempt %d)", kind.name, row.code, row.budget, values["attempts"])
            return row, True
        session.rollback()
        session.refresh(row)
        return row, False

    def _give_up(self, session: Session, row: SearchRow) -> Any:
        model = type(row)
        session.execute(
            update(model).where(model.id == row.id, model.status == PENDING)
            .values(status=UNKNOWN, solved_at=now(),
                    reason=f"the search did not end after {row.attempts} attempts (a worker failed or the "
                           f"service restarted each time); last: {row.reason}"))
        session.commit()
        session.refresh(row)
        return row

    # -- hints handed to players ------------------------------------------------

    @staticmethod
    def hint_token(player_id: int, row: HintAnswer) -> HintRequest:
        """A new token (random, 128 bits) under which ``player_id`` polls hint ``row``."""
        return HintRequest(token="h_" + secrets.token_urlsafe(16), player_id=player_id, answer_id=row.id,
                           created_at=now())

    def hand_out(self, session: Session, player_id: int, row: HintAnswer) -> str:
        """The token under which ``player_id`` polls hint ``row``: made once per player and
        hint, so the same player asking again gets the same one. One insert when it is new
        (a conflict on the pair keeps the first token)."""
        new = self.hint_token(player_id, row)
        insert = dialect_insert(session.get_bind().dialect.name)
        made = session.scalar(insert(HintRequest).values(token=new.token, player_id=player_id, answer_id=row.id,
                                                         created_at=new.created_at)
                              .on_conflict_do_nothing(index_elements=["player_id", "answer_id"])
                              .returning(HintRequest.token))
        session.commit()
        if made is not None:
            return str(made)
        return str(session.scalar(select(HintRequest.token).where(HintRequest.player_id == player_id,
                                                                  HintRequest.answer_id == row.id)))

    def handed(self, session: Session, token: str, player_id: int) -> HintAnswer:
        """The hint handed to ``player_id`` under ``token``; :class:`NoSuchHint` for any other player."""
        row = session.scalar(select(HintAnswer).join(HintRequest, HintRequest.answer_id == HintAnswer.id)
                             .where(HintRequest.token == token[:64], HintRequest.player_id == player_id))
        if row is None:
            raise NoSuchHint(self.hints.kept.total_seconds())
        return row

    # -- the worker side -----------------------------------------------------

    def run_next(self, kind_name: str, runner: str) -> str | None:
        """Take a ticket of ``kind_name``: run the best waiting job of that kind (the job this
        ticket took before, if the broker hands it out again), store its answer, free its
        place. The answer's status, or None when there was no job left to run."""
        kind = self.kinds[kind_name]
        job = self._take_job(kind_name, runner)
        if job is None:
            return None
        try:
            return self._run(kind, job)
        finally:
            self._finish(job.id)

    def _take_job(self, kind_name: str, runner: str) -> SolverJob | None:
        with self.database.sessions() as session:
            again = session.scalar(select(SolverJob).where(SolverJob.runner == runner))
            if again is not None:
                return again
            best = (select(SolverJob.id).where(SolverJob.kind == kind_name, SolverJob.slot >= 0,
                                               SolverJob.target.is_not(None), SolverJob.started_at.is_(None))
                    .order_by(SolverJob.priority, SolverJob.turn, SolverJob.id).limit(1))
            for _ in range(PLACE_TRIES):
                job_id = session.scalar(best)
                if job_id is None:
                    return None
                taken = session.execute(update(SolverJob).where(SolverJob.id == job_id, SolverJob.started_at.is_(None))
                                        .values(started_at=now(), runner=runner[:64]))
                session.commit()
                if _rows(taken) == 1:
                    return session.get(SolverJob, job_id)
            return None

    def _run(self, kind: SearchKind, job: SolverJob) -> str:
        assert job.target is not None and job.budget_seconds is not None  # (a job is sent with its search)
        budget = Budget(job.budget_seconds, job.budget_nodes)
        with self.database.sessions() as session:
            row: Any = session.get(kind.model, job.target)
            if row is None or row.status != PENDING:
                return row.status if row is not None else UNKNOWN  # answered (or expired) meanwhile
            code, log_text = row.code, getattr(row, "log", "")
        try:
            answer = kind.search(code, log_text, budget)
        except SoftTimeLimitExceeded:
            answer = kind.timed_out(code, log_text, budget)
        except Exception as error:
            self._failed(kind.model, job.target, job.attempt, error)
            raise
        if kind is self.hints and answer.get("line"):
            with self.database.sessions() as session:
                answer = self.hints.joined(session, Query(GameCode.from_text(code), log_text), answer)
        self.store(kind, job.target, answer)
        metrics.search_finished(kind.name, answer["status"], answer.get("search"))
        if kind is self.deals and answer["status"] == WINNABLE:  # a new known line: the deal's records judged again
            self.line_learned(code)
        return str(answer["status"])

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
            old_hints = select(HintAnswer.id).where(HintAnswer.solved_at < moment - self.hints.kept)
            old_hints = old_hints.limit(CLEANUP_BATCH)
            session.execute(delete(HintRequest).where(HintRequest.answer_id.in_(old_hints)))
            session.execute(delete(HintAnswer).where(HintAnswer.id.in_(old_hints)))
            old_unknown = select(Solvability.id).where(Solvability.status == UNKNOWN,
                                                       Solvability.solved_at < moment - self.deals.kept)
            session.execute(delete(Solvability).where(Solvability.id.in_(old_unknown.limit(CLEANUP_BATCH))))
            session.commit()

    # -- the tables ------------------------------------------------------------

    def store(self, kind: SearchKind, row_id: int, answer: dict[str, Any]) -> bool:
        """Write a search's answer into its row, if the row is still pending; True if it was."""
        values = kind.stored(answer)
        model = kind.model
        with self.database.sessions() as session:
            result = session.execute(update(model).where(model.id == row_id, model.status == PENDING).values(**values))
            session.commit()
        stored = _rows(result) == 1
        log.info("solver: %s %d %s%s", kind.name, row_id, values["status"],
                 "" if stored else " (already answered: not stored)")
        return stored

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


def _timed_out(budget: Budget) -> str:
    return f"the search went past its time limit on the worker (budget {budget.seconds:g} s)"


def init_app(app: Flask, send: Sender) -> Solver:
    """The app's solver, sending its tickets with ``send`` (:func:`api.tasks.sender`: through the app's Celery)."""
    solver = Solver(app.extensions["api.platform.db"], app.config, send)
    app.extensions["api.solver"] = solver
    return solver


def get_solver() -> Solver:
    return current_app.extensions["api.solver"]
