"""Fair play on the worker tier: judging a deal's records (again), the sweep of records waiting for
their judgement, and the web side's asks for it, sent together (:class:`Asks`)."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask, current_app, has_app_context
from sqlalchemy.orm import Session

from api.fairplay import judging as fairplay
from api.solver.searches import Query
from api.tasks.schedule import FAIRPLAY_CLIENT, JUDGE_SWEEP_AFTER, REEVALUATE
from api.tasks.worker import flask_app
from engine import GameCode

log = logging.getLogger(__name__)


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
    with app.extensions["api.platform.db"].sessions() as session:
        changed = fairplay.judge_pending(session, code)
        if not pending_only:  # (a solver line or a hint learned: only known-line findings can be new)
            changed += fairplay.reevaluate_deal(session, code, copies=False)
        if solve and wants_search(app, session, code):
            return changed, _ask_solver(app, session, code)
        return changed, False


def judge_sweep() -> dict[str, Any]:
    """Judge the records still waiting for their judgement :data:`JUDGE_SWEEP_AFTER` seconds after
    they were received (``FAIRPLAY_JUDGE=worker``: their ask was lost with a web process, or
    failed), a deal at a time, oldest first (:func:`api.fairplay.judging.waiting_deals`)."""
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


# -- the events fair play listens to (connected by the app factory) ------------------------

def line_learned(sender: Any, code: str) -> None:
    """A new known line of deal ``code``: its records are judged again (:func:`evidence_learned`)."""
    if has_app_context():
        evidence_learned(current_app._get_current_object(), code)  # type: ignore[attr-defined]
    else:  # (services send their events inside the app context of a request or a task)
        log.warning("fair play: a line of %s was learned outside an app: its records are not judged again", code)


def record_submitted(sender: Any, code: str, pending: bool, ranked_unsearched: bool) -> None:
    """A new record of deal ``code``: judged on the worker tier within seconds when it waits for
    its judgement; either way, with ``FAIRPLAY_SOLVE_TOP``, its deal is searched if it ranks high.
    Never more: a new record changes no other record's judgement (each is judged against the
    records stored before it)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    solve = bool(app.config["FAIRPLAY_SOLVE_TOP"])
    if pending:
        evidence_learned(app, code, solve=solve, pending_only=True)
    elif ranked_unsearched and solve and in_a_top_now(app, code):
        evidence_learned(app, code, solve=True, pending_only=True)


def wants_search(app: Flask, session: Session, code: str) -> bool:
    """Whether fair play has the deal searched: the solver runs, no search has looked at the deal
    (an answer may hold no line: undecided, unwinnable), and a record of it is in a contested
    top (``FAIRPLAY_SOLVE_TOP``). The web reads it before it asks, the worker before it searches."""
    top = app.config["FAIRPLAY_SOLVE_TOP"]
    return bool(top and app.config["SOLVER_ENABLED"]) and not fairplay.is_searched(session, code) \
        and fairplay.in_a_top(session, code, top)


def in_a_top_now(app: Flask, code: str) -> bool:
    """Whether a deal no search has looked at has a record in a contested top now, read where
    the record was stored: most new records are not, and then they cost the worker tier no task
    (the worker reads it again before it asks for a search). A deal searched once (its answer
    may hold no line: undecided, unwinnable) is not read again: its boards' tops grow with its
    records. A failed read asks, as before: the worker decides."""
    try:
        with app.extensions["api.platform.db"].sessions() as session:
            return wants_search(app, session, code)
    except Exception:
        log.exception("fair play: whether a record of %s is in a top could not be read here", code)
        return True
