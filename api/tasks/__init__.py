"""The worker tier: Celery tasks for solver searches, hints and bulk re-verification.

Start a worker with ``celery --app api.tasks worker`` (its settings come from the
same environment as the web tier's: ``CELERY_BROKER_URL``, ``DATABASE_URL`` …).
The package's :data:`celery` is built from that environment; each Flask app made by
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

The package: :mod:`.schedule` (names, queues, limits, the beat), :mod:`.worker` (the app a
task runs in, Celery's signals), and the tasks by what they serve: :mod:`.solver`,
:mod:`.fairplay`, :mod:`.challenges`, :mod:`.records`, :mod:`.webhooks`; this module builds
the Celery apps and registers them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from celery import Celery
from flask import Flask
from kombu import Queue

from api.platform.config import load_settings
from api.tasks import worker
from api.tasks.challenges import (
    Preparer,
    ask_to_prepare,
    ask_to_refill,
    prepare_at_start,
    prepare_challenges,
    refill_winnable_pool,
    send_once,
    singleton,
)
from api.tasks.fairplay import Asks, evidence_learned, judge_sweep, reevaluate_deal
from api.tasks.records import WrongDatabase, reverify_range
from api.tasks.schedule import (
    BEAT_SCHEDULE,
    DELIVER,
    DELIVER_HARD_MARGIN,
    DELIVER_SOFT_MARGIN,
    HINT,
    JUDGE_SWEEP,
    JUDGE_SWEEP_AFTER,
    LOW_PRIORITY,
    PREPARE,
    PREPARE_HARD_LIMIT,
    PREPARE_SOFT_LIMIT,
    PRUNE_HARD_LIMIT,
    PRUNE_SOFT_LIMIT,
    QUEUE_ORDER,
    QUEUES,
    REEVALUATE,
    REFILL,
    REFILL_HARD_LIMIT,
    REFILL_SOFT_LIMIT,
    REVERIFY,
    REVERIFY_HARD_LIMIT,
    REVERIFY_SOFT_LIMIT,
    SEARCH,
    SWEEP_HARD_LIMIT,
    SWEEP_SOFT_LIMIT,
    WEBHOOK_PRUNE,
    WEBHOOK_SWEEP,
    queue_name,
)
from api.tasks.solver import hint, sender, solve_deal
from api.tasks.webhooks import deliver_webhook, webhook_prune, webhook_sweep
from api.tasks.worker import flask_app

log = logging.getLogger(__name__)
#: what the package offers its users (the app factory, the routes, the commands, the tests)
__all__ = ["BEAT_SCHEDULE", "DELIVER", "HINT", "JUDGE_SWEEP", "JUDGE_SWEEP_AFTER", "LOW_PRIORITY", "PREPARE",
           "QUEUES", "QUEUE_ORDER", "REEVALUATE", "REFILL", "REVERIFY", "SEARCH", "WEBHOOK_PRUNE", "WEBHOOK_SWEEP",
           "Asks", "Preparer", "WrongDatabase", "ask_to_prepare", "ask_to_refill", "evidence_learned", "flask_app",
           "init_app", "judge_sweep", "make_celery", "prepare_at_start", "prepare_challenges", "reevaluate_deal",
           "refill_winnable_pool", "send_once", "sender", "singleton"]
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


_celery: Celery | None = None


def __getattr__(name: str) -> Any:
    """``api.tasks.celery``, the worker's Celery app (``celery --app api.tasks worker``),
    built from the environment on first use, so that importing :mod:`api` reads nothing."""
    global _celery
    if name != "celery":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _celery is None:
        _celery = make_celery(load_settings(worker.default_instance_path()))
    return _celery
