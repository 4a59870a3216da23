"""The worker tier's task names, queues, time limits, priorities and the beat's schedule, declared once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.webhooks.events import DELIVER_TASK

#: the task names, and which queue each goes to
SEARCH, HINT, REVERIFY = "api.solve_deal", "api.hint", "api.reverify_range"
PREPARE, REFILL, REEVALUATE = "api.prepare_challenges", "api.refill_winnable_pool", "api.reevaluate_deal"
DELIVER, WEBHOOK_SWEEP, JUDGE_SWEEP = DELIVER_TASK, "api.webhook_sweep", "api.judge_sweep"
WEBHOOK_PRUNE = "api.webhook_prune"
QUEUES = {HINT: "hints", SEARCH: "searches", REVERIFY: "bulk", PREPARE: "challenges", REFILL: "bulk",
          REEVALUATE: "bulk", DELIVER: "webhooks", WEBHOOK_SWEEP: "bulk", JUDGE_SWEEP: "bulk",
          WEBHOOK_PRUNE: "bulk"}
#: the ticket task of each search kind (``api.solver.searches.SearchKind.name``)
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
#: a webhook delivery due this long ago that no worker took is sent again by the sweep (its task was
#: lost); one due for less may be waiting in the queue behind others, and sending it again would
#: only lengthen the queue (a webhook worker behind at 30/s got 9 % of its tasks twice)
WEBHOOK_SWEEP_AFTER = 60.0
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
