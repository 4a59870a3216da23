"""The solver's tickets (a search kind's task runs the best waiting job of its kind) and the web
side's sender of them."""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery
from flask import Flask

from api.platform.config import time_limits
from api.tasks.schedule import TICKETS, queue_name
from api.tasks.worker import flask_app

log = logging.getLogger(__name__)


def _run_ticket(task: Any, kind: str) -> str | None:
    """A ticket: the best waiting job of ``kind`` runs (the task's id names its runner)."""
    app = flask_app()
    with app.app_context():
        return app.extensions["api.solver"].run_next(kind, task.request.id or "eager")


def solve_deal(self: Any) -> str | None:
    """A deal search's ticket; the answer goes to its ``solvability`` row."""
    return _run_ticket(self, "deal")


def hint(self: Any) -> str | None:
    """A hint search's ticket; the answer goes to its ``hint_answers`` row."""
    return _run_ticket(self, "hint")


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
