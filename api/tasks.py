"""The worker tier: Celery tasks for solver searches, hints and bulk re-verification.

Start a worker with ``celery --app api.tasks worker`` (its settings come from the
same environment as the web tier's: ``CELERY_BROKER_URL``, ``DATABASE_URL`` …).
The module's :data:`celery` is built from that environment; each Flask app made by
:func:`api.create_app` has its own (``app.extensions["api.celery"]``), built from
the app's settings, to send tasks with.

Six queues, named after ``CELERY_QUEUE_PREFIX``: ``<prefix>.challenges`` (the
preparation of the challenges), ``<prefix>.keys`` (searches of clients with an API key),
``<prefix>.hints`` (short searches a player waits for), ``<prefix>.searches`` (a deal's
solvability), ``<prefix>.bulk`` (re-verification ranges, judging and the other scheduled
tasks) and ``<prefix>.webhooks`` (webhook deliveries only: a slow receiver holds a process
of the worker that serves that queue, never one that judges or prepares; docs/operations.md
runs a worker for it). On Redis a worker takes them strictly in that order
(``queue_order_strategy: priority``), so a challenge players wait for is prepared before
anything else, game backends go next and hints go ahead of long searches; a worker
started with ``-Q <prefix>.hints`` serves only hints. A
search's message is a *ticket*: the worker that takes it runs the best waiting job of
its kind (``api.solver.queue.Solver.run_next``: API keys first, round-robin by client), not
necessarily the job that sent it.

Lost work: tasks are acknowledged after they ran (``acks_late``), so a task of a
worker that dies is handed to another after ``CELERY_VISIBILITY_TIMEOUT``. Each
task has a soft time limit (the search stops and stores ``unknown``) and a hard
one (the process is killed), and a worker process is replaced after a task that
left it above ``SOLVER_WORKER_MAX_MEMORY_MB``.

Challenges and the winnable pool: ``api.prepare_challenges`` proves the current
windows' challenges (today's dailies first) and the next day's and next week's
(``api.challenges.windows.plan``), on the challenges queue; ``api.refill_winnable_pool`` tops
up the pool behind ``/deals/random?winnable=true``, on the bulk queue at low priority.
The beat (``celery --app api.tasks beat``) sends them on :data:`BEAT_SCHEDULE`, and a
preparation as soon as it starts (:func:`prepare_at_start`: a fresh deployment has its
challenges within the first minute); a request that finds its window unprepared or the
pool empty sends one too (:func:`send_once`) and answers 503 without waiting for it.
Each is a singleton: a run holds a lock (a ``solver_jobs`` row on the task's own
negative slot, expiring at its hard time limit), and a run that finds the lock held
ends at once (:func:`singleton`). Each
ends within its period (soft limit shorter than the interval), so runs never pile up.

Without ``CELERY_BROKER_URL`` tasks run eagerly, in the process and thread that
send them (the embedded mode: one user only); a thread of the serving process then
does the beat's preparation (:class:`Preparer`), from its first request on.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from celery import Celery
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import (
    beat_init,
    setup_logging,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
)
from flask import Flask, current_app, has_app_context
from kombu import Queue
from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError

from api.platform.config import load_settings, time_limits
from api.webhooks.events import DELIVER_TASK

log = logging.getLogger(__name__)
#: the task names, and which queue each goes to
SEARCH, HINT, REVERIFY = "api.solve_deal", "api.hint", "api.reverify_range"
PREPARE, REFILL, REEVALUATE = "api.prepare_challenges", "api.refill_winnable_pool", "api.reevaluate_deal"
DELIVER, WEBHOOK_SWEEP, JUDGE_SWEEP = DELIVER_TASK, "api.webhook_sweep", "api.judge_sweep"
WEBHOOK_PRUNE = "api.webhook_prune"
QUEUES = {HINT: "hints", SEARCH: "searches", REVERIFY: "bulk", PREPARE: "challenges", REFILL: "bulk",
          REEVALUATE: "bulk", DELIVER: "webhooks", WEBHOOK_SWEEP: "bulk", JUDGE_SWEEP: "bulk",
          WEBHOOK_PRUNE: "bulk"}
#: the ticket task of each search kind (``api.solver.queue.SearchKind.name``)
TICKETS = {"deal": SEARCH, "hint": HINT}
#: the queues, in the order a worker takes from them on Redis: the challenges' preparation first (players
#: wait for it; one run at a time, and a run with nothing to prepare ends in a few queries), then the tickets
#: of API keys' searches (``keys``) ahead of every anonymous one, hints ahead of deals, then scheduled work
#: and judging; webhook deliveries last (a worker of their own takes them: ``-Q <prefix>.webhooks``)
QUEUE_ORDER = ("challenges", "keys", "hints", "searches", "bulk", "webhooks")
#: the solver's client name for the searches fair play asks for (its own per-client limit)
FAIRPLAY_CLIENT = "task:fair-play"
#: what a re-verification range may take on a worker (a range of 5,000 records takes seconds)
REVERIFY_SOFT_LIMIT, REVERIFY_HARD_LIMIT = 600, 660
#: how often the beat sends each (seconds); a task not started within its period is dropped
PREPARE_EVERY, REFILL_EVERY, WEBHOOK_SWEEP_EVERY, JUDGE_SWEEP_EVERY = 3600.0, 300.0, 60.0, 60.0
#: a record still waiting for its judgement this long after it was received is judged by the sweep (its ask was lost)
JUDGE_SWEEP_AFTER = 60.0
#: what preparing the challenges of two days (12 windows, a few searches each) and one
#: refill round may take on a worker: both end (hard limit) before the beat sends the next
PREPARE_SOFT_LIMIT, PREPARE_HARD_LIMIT = 1500, 1560
REFILL_SOFT_LIMIT, REFILL_HARD_LIMIT = 240, 270
#: a refill round starts no new search with less than this left before its soft limit
REFILL_SEARCH_ROOM = 30.0
#: the scheduled tasks' message priority on Redis (0 first … 9 last): behind anything else on the bulk queue
LOW_PRIORITY = 9
#: a preparation a request or a fresh start waits for: ahead of the beat's on the challenges queue
HIGH_PRIORITY = 0
#: a webhook attempt's task may run this much longer than the attempt's deadline (its bookkeeping),
#: then this much more before it is killed (``WEBHOOK_DEADLINE_SECONDS``; the hold is longer still)
DELIVER_SOFT_MARGIN, DELIVER_HARD_MARGIN = 20, 30
SWEEP_SOFT_LIMIT, SWEEP_HARD_LIMIT = 50, 55
#: the outbox's prune: how often (seconds), and its time limits (it stops a little before the soft one)
WEBHOOK_PRUNE_EVERY, PRUNE_SOFT_LIMIT, PRUNE_HARD_LIMIT = 3600.0, 300, 330
#: searches per variant of a beat's refill round, and of one sent by a request finding the pool empty
REFILL_SEARCHES, REQUEST_REFILL_SEARCHES = 20, 3
#: the ``solver_jobs`` slot that marks each of these tasks in flight (below the users' slots 0 …)
MARKER_SLOTS = {PREPARE: -1, REFILL: -2}
BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "prepare-challenges": {"task": PREPARE, "schedule": PREPARE_EVERY, "kwargs": {"ahead": 1},
                           "options": {"expires": PREPARE_EVERY, "priority": LOW_PRIORITY}},
    "refill-winnable-pool": {"task": REFILL, "schedule": REFILL_EVERY, "kwargs": {"searches": REFILL_SEARCHES},
                             "options": {"expires": REFILL_EVERY, "priority": LOW_PRIORITY}},
    "webhook-sweep": {"task": WEBHOOK_SWEEP, "schedule": WEBHOOK_SWEEP_EVERY,
                      "options": {"expires": WEBHOOK_SWEEP_EVERY, "priority": LOW_PRIORITY}},
    "judge-sweep": {"task": JUDGE_SWEEP, "schedule": JUDGE_SWEEP_EVERY,
                    "options": {"expires": JUDGE_SWEEP_EVERY, "priority": LOW_PRIORITY}},
    "webhook-prune": {"task": WEBHOOK_PRUNE, "schedule": WEBHOOK_PRUNE_EVERY,
                      "options": {"expires": WEBHOOK_PRUNE_EVERY, "priority": LOW_PRIORITY}},
}


def queue_name(settings: Mapping[str, Any], kind: str) -> str:
    return f"{settings['CELERY_QUEUE_PREFIX']}.{kind}"


def make_celery(settings: Mapping[str, Any]) -> Celery:
    """A Celery app configured from the service's settings, with the tasks registered."""
    broker = settings["CELERY_BROKER_URL"]
    app = Celery("api", set_as_current=False)
    config: dict[str, Any] = {
        "task_acks_late": True,                   # a task is acknowledged once it ran …
        "task_reject_on_worker_lost": False,      # … but one that killed its process is not run again forever
        "worker_prefetch_multiplier": 1,          # a worker holds no more tasks than it runs
        "worker_max_memory_per_child": settings["SOLVER_WORKER_MAX_MEMORY_MB"] * 1024,  # KiB
        "task_serializer": "json", "result_serializer": "json", "accept_content": ["json"],
        "task_queues": [Queue(queue_name(settings, kind)) for kind in QUEUE_ORDER],
        "task_default_queue": queue_name(settings, "searches"),
        "task_routes": {name: {"queue": queue_name(settings, kind)} for name, kind in QUEUES.items()},
        "task_ignore_result": True,               # searches answer through the database
        "result_expires": 3600,
        "broker_connection_timeout": 2,           # a web thread never waits long for the broker
        "broker_connection_retry_on_startup": True,
        "task_publish_retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.2,
                                      "interval_max": 0.5},
        "worker_hijack_root_logger": False,
        "worker_redirect_stdouts": False,         # the app's JSON lines go to stderr as they are (_json_logs)
        "enable_utc": True,
        "beat_schedule": BEAT_SCHEDULE,           # `celery --app api.tasks beat`
    }
    if broker is None:  # the embedded mode: every task runs where it is sent
        config.update(broker_url="memory://", task_always_eager=True, task_eager_propagates=True,
                      result_backend=None)
    else:
        config.update(broker_url=broker, result_backend=settings["CELERY_RESULT_BACKEND"])
        if broker.startswith(("redis://", "rediss://")):
            prefix = settings["CELERY_QUEUE_PREFIX"]
            visibility = settings["CELERY_VISIBILITY_TIMEOUT"]
            options = {
                "visibility_timeout": visibility,
                "queue_order_strategy": "priority",       # hints, then searches, then bulk
                "global_keyprefix": f"{prefix}:",         # unacked lists, bindings: apart from other services
                "socket_timeout": 5, "socket_connect_timeout": 2,
                # look for tasks of dead workers often enough for the visibility timeout
                "unacked_restore_interval": max(1, min(10, int(visibility / 4))), "unacked_restore_throttle": 1,
            }
            config.update(broker_transport_options=options, result_backend_transport_options=options)
    app.conf.update(config)
    _register(app, settings)
    return app


def _register(app: Celery, settings: Mapping[str, Any]) -> None:
    common = {"acks_late": True, "ignore_result": True}
    app.task(name=SEARCH, bind=True, **common)(solve_deal)
    app.task(name=HINT, bind=True, **common)(hint)
    app.task(name=REVERIFY, acks_late=True, ignore_result=False, soft_time_limit=REVERIFY_SOFT_LIMIT,
             time_limit=REVERIFY_HARD_LIMIT)(reverify_range)
    app.task(name=PREPARE, soft_time_limit=PREPARE_SOFT_LIMIT, time_limit=PREPARE_HARD_LIMIT,
             **common)(prepare_challenges)
    app.task(name=REFILL, soft_time_limit=REFILL_SOFT_LIMIT, time_limit=REFILL_HARD_LIMIT,
             **common)(refill_winnable_pool)
    deadline = settings["WEBHOOK_DEADLINE_SECONDS"]
    app.task(name=DELIVER, soft_time_limit=deadline + DELIVER_SOFT_MARGIN, time_limit=deadline + DELIVER_HARD_MARGIN,
             **common)(deliver_webhook)
    app.task(name=WEBHOOK_PRUNE, soft_time_limit=PRUNE_SOFT_LIMIT, time_limit=PRUNE_HARD_LIMIT,
             **common)(webhook_prune)
    app.task(name=WEBHOOK_SWEEP, soft_time_limit=SWEEP_SOFT_LIMIT, time_limit=SWEEP_HARD_LIMIT,
             **common)(webhook_sweep)
    app.task(name=REEVALUATE, soft_time_limit=REFILL_SOFT_LIMIT, time_limit=REFILL_HARD_LIMIT,
             **common)(reevaluate_deal)
    app.task(name=JUDGE_SWEEP, soft_time_limit=SWEEP_SOFT_LIMIT, time_limit=SWEEP_HARD_LIMIT,
             **common)(judge_sweep)


# -- the tasks: each runs in a Flask app context, on the app's database --------

_worker_app: Flask | None = None
_worker_pid: int | None = None


def flask_app() -> Flask:
    """The app a task runs in: the sender's own in the embedded mode, else one built
    (once per worker process) from the same settings as the web tier's."""
    global _worker_app, _worker_pid
    if has_app_context():
        return current_app._get_current_object()  # type: ignore[attr-defined]
    if _worker_app is None or _worker_pid != os.getpid():
        from api import create_app

        _worker_app = create_app()
        _worker_pid = os.getpid()
    return _worker_app


@worker_process_init.connect
def _warm_up(**_: Any) -> None:
    """Build the worker process's app when the process starts, not in its first task
    (if that fails, say the database is down, the first task tries again)."""
    try:
        flask_app()
    except Exception:
        log.exception("worker process: the app could not be built yet")


@setup_logging.connect
def _json_logs(loglevel: Any = None, **_: Any) -> None:
    """The worker logs the web app's JSON lines (with the task's id and name), Celery's own
    loggers too; connecting here keeps Celery from setting up its own format."""
    from api.platform import logs

    settings = load_settings(_default_instance_path())
    logs.configure(settings["LOG_LEVEL"], celery_level=logging.getLevelName(loglevel) if loglevel else "INFO")


@worker_init.connect
def _worker_metrics(**_: Any) -> None:
    """With ``WORKER_METRICS_PORT``, the worker's main process serves the metrics of its pool."""
    port = load_settings(_default_instance_path())["WORKER_METRICS_PORT"]
    if port is not None:
        from api.platform import metrics

        metrics.start_worker_server(port)


@worker_process_shutdown.connect
def _process_gone(pid: int | None = None, **_: Any) -> None:
    from api.platform import metrics

    metrics.process_gone(pid or os.getpid())


_started: dict[str, float] = {}


@task_prerun.connect
def _task_started(task_id: str | None = None, **_: Any) -> None:
    if task_id is not None:
        _started[task_id] = time.perf_counter()


@task_postrun.connect
def _task_ended(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    from api.platform import metrics

    started = _started.pop(task_id, None) if task_id is not None else None
    metrics.task_finished(getattr(task, "name", "unknown"), state or "unknown",
                          None if started is None else time.perf_counter() - started)


def _run_ticket(task: Any, kind: str) -> str | None:
    """A ticket: the best waiting job of ``kind`` runs (the task's id names its runner)."""
    app = flask_app()
    with app.app_context():
        return app.extensions["api.solver"].run_next(kind, task.request.id or "eager")


def reevaluate_deal(code: str | list[str], solve: bool = False, pending_only: bool = False) -> dict[str, Any]:
    """Judge a deal's records stored before their judgement (``FAIRPLAY_JUDGE=worker``:
    :func:`api.fairplay.judging.judge_pending`), then, unless ``pending_only`` (the ask of a new
    record, which changes no other record's judgement), its ranked records again with the
    solver lines and hints known of it now (:func:`api.fairplay.judging.reevaluate_known`);
    with ``solve``, also have the deal searched if none was and one of its records is in the
    first ``FAIRPLAY_SOLVE_TOP`` places of a board (through the solver's fair queue, as the
    client ``task:fair-play``: a full queue skips it, the next high record asks again).
    ``code`` may be a list of deals (a web process's asks sent together: :class:`Asks`)."""
    app = flask_app()
    changed: list[int] = []
    asked: list[str] = []
    with app.app_context():
        if isinstance(code, str):
            changed, solve_asked = _reevaluate_one(app, code, solve, pending_only)
            return {"changed": changed, "solve_asked": solve_asked}
        for deal in code:
            try:  # (one deal's failure does not cost the others their turn)
                deal_changed, solve_asked = _reevaluate_one(app, deal, solve, pending_only)
            except Exception:
                log.exception("fair play: the re-evaluation of %s failed", deal)
                continue
            changed += deal_changed
            asked += [deal] if solve_asked else []
        return {"changed": changed, "solve_asked": asked}


def _reevaluate_one(app: Flask, code: str, solve: bool, pending_only: bool = False) -> tuple[list[int], bool]:
    from api.fairplay import judging as fairplay

    with app.extensions["api.platform.db"].sessions() as session:
        changed = fairplay.judge_pending(session, code)
        if not pending_only:  # (a solver line or a hint learned: only known-line findings can be new)
            changed += fairplay.reevaluate_deal(session, code, copies=False)
        top = app.config["FAIRPLAY_SOLVE_TOP"]
        if solve and top and app.config["SOLVER_ENABLED"] and not fairplay.is_searched(session, code) \
                and fairplay.in_a_top(session, code, top):
            return changed, _ask_solver(app, session, code)
        return changed, False


def judge_sweep() -> dict[str, Any]:
    """Judge the records still waiting for their judgement :data:`JUDGE_SWEEP_AFTER` seconds after
    they were received (``FAIRPLAY_JUDGE=worker``: their ask was lost with a web process, or
    failed), a deal at a time, oldest first (:func:`api.fairplay.judging.waiting_deals`)."""
    from api.fairplay import judging as fairplay

    app = flask_app()
    judged: list[int] = []
    with app.app_context():
        with app.extensions["api.platform.db"].sessions() as session:
            codes = fairplay.waiting_deals(session, datetime.now(UTC) - timedelta(seconds=JUDGE_SWEEP_AFTER))
        for code in codes:
            try:  # (one deal's failure does not cost the others their turn)
                judged += _reevaluate_one(app, code, solve=False, pending_only=True)[0]
            except Exception:
                log.exception("fair play: the sweep could not judge the records of %s", code)
    return {"judged": judged}


def _ask_solver(app: Flask, session: Any, code: str) -> bool:
    from api.solver.queue import Query
    from engine import GameCode

    try:
        solver = app.extensions["api.solver"]
        solver.request(session, solver.deals, Query(GameCode.from_text(code)), client=FAIRPLAY_CLIENT)
    except Exception as error:  # the solver's queue is full (429/503), or it is off: the next record asks again
        log.warning("fair play: deal %s not searched now: %s", code, error)
        return False
    return True


#: a web process's re-evaluation asks wait this long for others to go in the same message …
ASKS_EVERY = 0.25
#: … and at most this many deals go in one
ASKS_AT_MOST = 200


class Asks:
    """The re-evaluations a web process asks for, sent together: one bulk-queue message for
    the deals asked within :data:`ASKS_EVERY` seconds, from a thread of the process. A
    publish costs about a millisecond of CPU, as much as the rest of storing a record, and
    every new deal's first ranked record asks. An ask is advice: the record's own evidence is
    stored with it, and the next record or hint of the deal asks again, so the asks of a
    process killed within that quarter second are lost as those refused by a full solver
    queue are (a record waiting for its judgement is asked for again by :func:`judge_sweep`).
    A process made by ``fork`` starts its own thread on its first ask."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.lock = threading.Lock()
        #: the deals asked for, by the task's (solve, pending_only) arguments (ordered sets)
        self.pending: dict[tuple[bool, bool], dict[str, None]] = {}
        self.thread: threading.Thread | None = None
        self.pid = 0
        atexit.register(self.send)  # (what the thread has not sent yet)

    def add(self, code: str, solve: bool, pending_only: bool = False) -> None:
        with self.lock:
            self.pending.setdefault((solve, pending_only), {})[code] = None
            if self.thread is None or self.pid != os.getpid():
                self.pid = os.getpid()
                self.thread = threading.Thread(target=self._run, name="reevaluation-asks", daemon=True)
                self.thread.start()

    def send(self) -> None:
        """Send what is pending (the thread, every :data:`ASKS_EVERY` seconds; and at exit)."""
        with self.lock:
            batches = {kind: list(codes) for kind, codes in self.pending.items() if codes}
            self.pending = {}
        task = self.app.extensions["api.celery"].tasks[REEVALUATE]
        for (solve, pending_only), codes in batches.items():
            for start in range(0, len(codes), ASKS_AT_MOST):
                chunk = codes[start:start + ASKS_AT_MOST]
                try:
                    task.apply_async(args=(chunk[0] if len(chunk) == 1 else chunk, solve, pending_only))
                except Exception:
                    log.exception("fair play: the re-evaluation of %d deals could not be sent", len(chunk))

    def _run(self) -> None:
        while True:
            time.sleep(ASKS_EVERY)
            self.send()


def evidence_learned(app: Flask, code: str, solve: bool = False, pending_only: bool = False) -> None:
    """The service learned a new line of deal ``code`` (a solver line, a hint handed out): have
    its ranked records judged again; or stored a record (``pending_only``): have it judged if it
    waits for its judgement, and with ``solve`` its deal searched if it ranks high. On the bulk
    queue, within a quarter second (:class:`Asks`;
    embedded: here, now). Never fails its caller: the evidence of the moment is stored already."""
    try:
        if app.config["CELERY_BROKER_URL"] is None:
            app.extensions["api.celery"].tasks[REEVALUATE].apply_async(args=(code, solve, pending_only))
        else:
            app.extensions["api.asks"].add(code, solve, pending_only)
    except Exception:
        log.exception("fair play: the re-evaluation of %s could not be sent (or, embedded, failed)", code)


def solve_deal(self: Any) -> str | None:
    """A deal search's ticket; the answer goes to its ``solvability`` row."""
    return _run_ticket(self, "deal")


def hint(self: Any) -> str | None:
    """A hint search's ticket; the answer goes to its ``hint_answers`` row."""
    return _run_ticket(self, "hint")


class WrongDatabase(Exception):
    """A bulk task sent for another database than the worker's: refused, nothing done."""


def reverify_range(first_id: int, last_id: int, update: bool, database: str | None = None) -> dict[str, Any]:
    """Re-verify the records with ids ``first_id`` … ``last_id``: how many, and those that changed.
    ``database``: the sender's :meth:`api.platform.db.Database.identity`; a worker on another database
    refuses the range (:class:`WrongDatabase`) before it reads a record."""
    from api.records.reverify import reverify_records

    app = flask_app()
    with app.app_context():
        mine = app.extensions["api.platform.db"].identity()
        if database is not None and database != mine:
            raise WrongDatabase(f"the worker's database is {mine}, the command's is {database}")
        checked = 0

        def count(n: int) -> None:
            nonlocal checked
            checked += n

        with app.extensions["api.platform.db"].sessions() as session:
            changes = [[c.record_id, c.player, c.code, list(c.differences)]
                       for c in reverify_records(session, update=update, progress=count, first_id=first_id,
                                                 last_id=last_id)]
    return {"checked": checked, "changes": changes}


def _release_marker(app: Flask, marker: int | None) -> None:
    if marker is not None:
        from api.platform.models import SolverJob

        with app.extensions["api.platform.db"].sessions() as session:
            session.execute(delete(SolverJob).where(SolverJob.id == marker))
            session.commit()


def _lock(app: Flask, name: str) -> int | None:
    """Take task ``name``'s lock: a ``solver_jobs`` row on the task's own slot (below the
    users' slots, so it takes no user's place), inserted atomically thanks to the unique
    slot, expiring at the task's hard time limit (a run that was lost). Its id, or None
    when another run holds it."""
    from api.platform.models import SolverJob
    from api.solver.queue import now

    slot, limit = MARKER_SLOTS[name], PREPARE_HARD_LIMIT if name == PREPARE else REFILL_HARD_LIMIT
    moment = now()
    with app.extensions["api.platform.db"].sessions() as session:
        session.execute(delete(SolverJob).where(SolverJob.slot == slot, SolverJob.expires_at < moment))
        job = SolverJob(client=f"task:{name}"[:64], client_slot=0, slot=slot, kind=name.rsplit("_", 1)[-1][:16],
                        created_at=moment, expires_at=moment + timedelta(seconds=limit))
        session.add(job)
        try:
            session.commit()
        except IntegrityError:  # another run holds it
            session.rollback()
            return None
        return job.id


@contextmanager
def singleton(app: Flask, name: str, marker: int | None) -> Iterator[bool]:
    """Run task ``name`` only if no other run of it is going on: yields True while this run
    holds the lock (the ``marker`` its sender took, or one taken now), False when another
    run holds it (this one then does nothing). The lock is freed at the end."""
    from api.platform.models import SolverJob
    from api.solver.queue import now

    held: int | None = None
    if marker is not None:  # sent by send_once: the lock is ours, now for a whole run from here
        limit = PREPARE_HARD_LIMIT if name == PREPARE else REFILL_HARD_LIMIT
        with app.extensions["api.platform.db"].sessions() as session:
            result: Any = session.execute(update(SolverJob).where(SolverJob.id == marker).values(
                expires_at=now() + timedelta(seconds=limit)))
            session.commit()
            held = marker if result.rowcount == 1 else None
    if held is None:
        held = _lock(app, name)
    if held is None:
        log.info("%s: another run is going on; this one does nothing", name)
        yield False
        return
    try:
        yield True
    finally:
        _release_marker(app, held)


def prepare_challenges(day: str | None = None, ahead: int = 1, variant: str | None = None, kind: str | None = None,
                       marker: int | None = None, first: list[str] | None = None) -> int:
    """Prove and store the challenges of ``day`` (ISO date; default today, UTC) and, with
    ``ahead``, of the days after it and of the next week (``api.challenges.windows.plan``: ``first``,
    a ``[variant, kind]`` a request waits for, then today's daily ones …), of every variant
    and kind or only ``variant``/``kind``; returns the windows left without one (0 when
    another run is going on)."""
    from api.challenges import windows as challenges

    app = flask_app()
    with app.app_context(), singleton(app, PREPARE, marker) as held:
        if not held:
            return 0
        start = date.fromisoformat(day) if day else datetime.now(UTC).date()
        count, budget = app.config["CHALLENGE_CANDIDATES"], challenges.screening_budget(app.config, "CHALLENGE_NODES")
        windows = challenges.plan(start, ahead, variant, kind, (first[0], first[1]) if first else None)
        missing = done = 0
        try:
            with app.extensions["api.platform.db"].sessions() as session:
                key = challenges.derivation_key(session, app.config["CHALLENGE_KEY"])
                for name, which, moment in windows:
                    missing += challenges.prepare(session, name, which, moment, budget, count, key) is None
                    done += 1
        except SoftTimeLimitExceeded:  # the next run goes on where this one stopped
            log.warning("%s stopped at its time limit (%d s) after %d windows", PREPARE, PREPARE_SOFT_LIMIT, done)
        return missing


def refill_winnable_pool(variant: str | None = None, searches: int = REFILL_SEARCHES,
                         marker: int | None = None) -> int:
    """Search random deals of ``variant`` (default: every variant) until its pool holds
    ``WINNABLE_POOL_SIZE`` deals, ``searches`` searches ran or the round's time is up;
    returns the searches run (0 when another run is going on)."""
    from api.challenges import windows as challenges

    app = flask_app()
    with app.app_context(), singleton(app, REFILL, marker) as held:
        if not held:
            return 0
        deadline = time.monotonic() + REFILL_SOFT_LIMIT - REFILL_SEARCH_ROOM
        ran, pool_budget = 0, challenges.screening_budget(app.config, "WINNABLE_POOL_NODES")
        try:
            with app.extensions["api.platform.db"].sessions() as session:
                for name in [variant] if variant else challenges.BY_VARIANT:
                    for _ in range(searches):
                        if time.monotonic() > deadline:
                            break
                        searched = challenges.refill_winnable_pool(session, name, app.config["WINNABLE_POOL_SIZE"],
                                                                   pool_budget, 1)
                        if not searched:  # full
                            break
                        ran += searched
        except SoftTimeLimitExceeded:
            log.warning("%s stopped at its time limit (%d s) after %d searches", REFILL, REFILL_SOFT_LIMIT, ran)
        return ran


def deliver_webhook(delivery_id: int) -> str:
    """One attempt at a webhook delivery (``api.webhooks.delivery.deliver``); a retry is sent again by it."""
    from api.webhooks import delivery as webhooks

    app = flask_app()
    with app.app_context():
        return webhooks.deliver(app, delivery_id)


def webhook_sweep() -> dict[str, int]:
    """Announce closed challenges and send the webhook deliveries that are due and unheld."""
    from api.webhooks import delivery as webhooks

    app = flask_app()
    with app.app_context():
        return webhooks.sweep(app)


def webhook_prune() -> dict[str, int]:
    """Delete the webhook deliveries that ended and their messages, past ``WEBHOOK_KEEP_SECONDS``."""
    from api.webhooks import delivery as webhooks

    app = flask_app()
    with app.app_context():
        try:
            return webhooks.prune(app, until=time.monotonic() + PRUNE_SOFT_LIMIT - SWEEP_SOFT_LIMIT)
        except SoftTimeLimitExceeded:  # (the next run goes on)
            log.warning("%s stopped at its time limit (%d s)", WEBHOOK_PRUNE, PRUNE_SOFT_LIMIT)
            return {}


# -- the web side ----------------------------------------------------------------

def sender(app: Flask) -> Any:
    """``send(kind, budget, keyed)`` for the app's solver: a ticket of search kind ``kind``, on
    its queue (``keys`` for a search of an API key), with time limits from the budget. Never
    waits for the task's result."""

    def send(kind: str, budget: Any, keyed: bool) -> None:
        celery_app: Celery = app.extensions["api.celery"]
        soft, hard = time_limits(budget.seconds)
        queue = {"queue": queue_name(app.config, "keys")} if keyed else {}
        celery_app.tasks[TICKETS[kind]].apply_async(soft_time_limit=soft, time_limit=hard, **queue)

    return send


def send_once(app: Flask, name: str, priority: int = LOW_PRIORITY, **kwargs: Any) -> bool:
    """Send task ``name`` (``PREPARE`` or ``REFILL``) unless a run of it is queued or going
    on: the lock (:func:`_lock`) is taken here and handed to the task, which frees it
    when it ends. Never waits for a worker; in the embedded mode the task runs here,
    now. True if sent."""
    marker = _lock(app, name)
    if marker is None:
        return False
    try:
        app.extensions["api.celery"].tasks[name].apply_async(kwargs={**kwargs, "marker": marker}, priority=priority)
    except Exception:
        log.exception("%s could not be sent (or, embedded, failed)", name)
        _release_marker(app, marker)
        return False
    return True


def ask_to_prepare(app: Flask, variant: str, kind: str, day: date) -> None:
    """A request found ``day``'s ``kind`` window of ``variant`` unprepared: have it prepared
    first (then the rest of the day's and the next ones, on a worker, ahead of any other
    task; embedded, only that window, here and now, unless the :class:`Preparer` is at it).
    Nothing when the solver is switched off."""
    if not app.config["SOLVER_ENABLED"]:
        return
    if app.config["CELERY_BROKER_URL"] is None:
        send_once(app, PREPARE, day=day.isoformat(), ahead=0, variant=variant, kind=kind)
    else:
        send_once(app, PREPARE, HIGH_PRIORITY, day=day.isoformat(), ahead=1, first=[variant, kind])


def prepare_at_start(celery_app: Celery) -> None:
    """A fresh beat's first message: the preparation of today's challenges and the next ones,
    at once and ahead of any other task (the challenges queue, high priority), instead of an
    interval after the start. Without a lock: a run that finds another going on ends at once."""
    try:
        celery_app.tasks[PREPARE].apply_async(kwargs={"ahead": 1}, priority=HIGH_PRIORITY,
                                              expires=PREPARE_EVERY)
    except Exception:
        log.exception("%s could not be sent at the beat's start", PREPARE)


@beat_init.connect
def _beat_started(sender: Any = None, **_: Any) -> None:
    if sender is not None:
        prepare_at_start(sender.app)


class Preparer:
    """The embedded mode's beat for the challenges: a thread of the serving process, started by
    its first request, that runs the preparation at once (today's daily challenges first) and
    then every :data:`PREPARE_EVERY` seconds, so the next day's and week's are ready before
    their windows open. Requests meanwhile answer 503 at once (the lock is held), never wait."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.pid = 0

    def start(self) -> None:
        with self.lock:
            if self.pid == os.getpid():
                return
            self.pid = os.getpid()
        threading.Thread(target=self._run, name="challenge-preparer", daemon=True).start()

    def run_once(self) -> int:
        """One preparation run here, now (returns the windows left without a challenge)."""
        with self.app.app_context():
            return prepare_challenges(ahead=1)

    def _run(self) -> None:
        while True:
            try:
                self.run_once()
            except Exception:
                log.exception("%s failed; tried again in %d s", PREPARE, PREPARE_EVERY)
            time.sleep(PREPARE_EVERY)


def ask_to_refill(app: Flask, variant: str) -> None:
    """A request found ``variant``'s winnable pool empty: have a few deals searched
    (on a worker; embedded, here and now). Nothing when the solver is switched off."""
    if app.config["SOLVER_ENABLED"]:
        send_once(app, REFILL, variant=variant, searches=REQUEST_REFILL_SEARCHES)


def init_app(app: Flask) -> Celery:
    if app.config["CELERY_BROKER_URL"] is None and not (app.debug or app.testing):
        # said when the app serves its first request, not by every `flask --app api` command (or --help)
        warned: list[bool] = []

        def warn_once() -> None:
            if not warned:
                warned.append(True)
                log.warning("no CELERY_BROKER_URL: searches run inside the requests that ask for them (the embedded "
                            "mode, for one user); set it and start `celery --app api.tasks worker` to serve more")

        app.before_request(warn_once)
    celery_app = make_celery(app.config)
    app.extensions["api.celery"] = celery_app
    app.extensions["api.asks"] = Asks(app)
    if app.config["CELERY_BROKER_URL"] is None and app.config["SOLVER_ENABLED"] and not app.testing:
        preparer = app.extensions["api.preparer"] = Preparer(app)
        app.before_request(preparer.start)  # a serving process, from its first request (not a command's)
    return celery_app


def _default_instance_path() -> str:
    """Where ``flask --app api`` keeps its instance folder (the default SQLite file)."""
    return str(Path(__file__).resolve().parent.parent / "instance")


_celery: Celery | None = None


def __getattr__(name: str) -> Any:
    """``api.tasks.celery``, the worker's Celery app (``celery --app api.tasks worker``),
    built from the environment on first use, so that importing :mod:`api` reads nothing."""
    global _celery
    if name != "celery":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _celery is None:
        _celery = make_celery(load_settings(_default_instance_path()))
    return _celery
