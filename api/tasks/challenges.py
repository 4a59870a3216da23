"""The challenges' preparation and the winnable pool's refill: singleton tasks (a lock a run), sent
by the beat, by a request that finds nothing prepared, or by the embedded mode's :class:`Preparer`."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

from celery import Celery
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import (
    beat_init,
)
from flask import Flask, current_app
from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError

from api.challenges import windows as challenges
from api.platform.models import SolverJob
from api.solver.searches import now
from api.tasks.schedule import (
    HIGH_PRIORITY,
    LOW_PRIORITY,
    MARKER_SLOTS,
    PREPARE,
    PREPARE_EVERY,
    PREPARE_HARD_LIMIT,
    PREPARE_SOFT_LIMIT,
    REFILL,
    REFILL_HARD_LIMIT,
    REFILL_SEARCH_ROOM,
    REFILL_SEARCHES,
    REFILL_SOFT_LIMIT,
    REQUEST_REFILL_SEARCHES,
)
from api.tasks.worker import flask_app

log = logging.getLogger(__name__)


def _release_marker(app: Flask, marker: int | None) -> None:
    if marker is not None:
        with app.extensions["api.platform.db"].sessions() as session:
            session.execute(delete(SolverJob).where(SolverJob.id == marker))
            session.commit()


def _lock(app: Flask, name: str) -> int | None:
    """Take task ``name``'s lock: a ``solver_jobs`` row on the task's own slot (below the
    users' slots, so it takes no user's place), inserted atomically thanks to the unique
    slot, expiring at the task's hard time limit (a run that was lost). Its id, or None
    when another run holds it."""
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


# -- the events the worker tier's preparation listens to (connected by the app factory) ------

def challenge_unprepared(sender: Any, variant: str, kind: str, day: date) -> None:
    """A request found a window without its challenge: :func:`ask_to_prepare`."""
    ask_to_prepare(current_app._get_current_object(), variant, kind, day)  # type: ignore[attr-defined]


def pool_empty(sender: Any, variant: str) -> None:
    """A request found the winnable pool empty: :func:`ask_to_refill`."""
    ask_to_refill(current_app._get_current_object(), variant)  # type: ignore[attr-defined]
