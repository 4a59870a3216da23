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
import random
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from api.platform import events, metrics
from api.platform.columns import dialect_insert
from api.platform.db import Database
from api.platform.models import HintAnswer, HintRequest, Solvability, SolverJob
from api.solver.hints import HintSearch
from api.solver.searches import (
    MAX_ATTEMPTS,
    PENDING,
    UNKNOWN,
    WINNABLE,
    Budget,
    DealSearch,
    Query,
    SearchKind,
    SearchRow,
    changed_rows,
    now,
    queued_reason,
)
from engine import GameCode
from verifier import Played

log = logging.getLogger(__name__)

#: rows the worker's clean-up deletes at most per table after each task
CLEANUP_BATCH = 500
#: a web process cleans up too after storing this many continued hints (they run no task)
CLEANUP_EVERY = 100
#: tries at taking a place (or a job) when racing requests (or workers) take the same one
PLACE_TRIES = 5
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

#: ``send(kind, budget, keyed)``: hand a ticket for a job of ``kind`` to the worker tier, on the
#: keys' queue when ``keyed`` (see :func:`api.tasks.sender`)
Sender = Callable[[str, Budget, bool], None]
#: who asks: a client name (``key:<id>``, ``ip:<address>``) or a function giving it, asked only when needed
Client = str | Callable[[], str]


class Solver:
    """The app's solver: the settings, the search kinds, the places of the queue and the jobs."""

    def __init__(self, database: Database, config: dict[str, Any], send: Sender) -> None:
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
        values: dict[str, Any] = {"attempts": seen + 1, "queued_at": moment, "reason": queued_reason(seen + 1)}
        if status != PENDING:  # an expired answer: searched again from the first attempt
            values = {**kind.restart(), "status": PENDING, "attempts": 1, "queued_at": moment,
                      "requested_at": moment, "reason": queued_reason(1)}
        result = session.execute(update(model).where(model.id == row.id, model.status == status,
                                                     model.attempts == seen).values(**values))
        if changed_rows(result) == 1:
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
                if changed_rows(taken) == 1:
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
            events.line_learned.send(self, code=code)
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
        stored = changed_rows(result) == 1
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
