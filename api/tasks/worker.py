"""The worker process: the Flask app each task runs in, and Celery's signals (JSON logs, metrics,
task timings)."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from celery.signals import (
    setup_logging,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
)
from flask import Flask, current_app, has_app_context

import api  # (a cycle, kept: the factory wires the tasks in, and a worker builds its app with it)
from api.platform import logs, metrics
from api.platform.config import load_settings

log = logging.getLogger(__name__)


_worker_app: Flask | None = None
_worker_pid: int | None = None


def flask_app() -> Flask:
    """The app a task runs in: the sender's own in the embedded mode, else one built
    (once per worker process) from the same settings as the web tier's."""
    global _worker_app, _worker_pid
    if has_app_context():
        return current_app._get_current_object()  # type: ignore[attr-defined]
    if _worker_app is None or _worker_pid != os.getpid():
        _worker_app = api.create_app()
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
    settings = load_settings(default_instance_path())
    logs.configure(settings["LOG_LEVEL"], celery_level=logging.getLevelName(loglevel) if loglevel else "INFO")


@worker_init.connect
def _worker_metrics(**_: Any) -> None:
    """With ``WORKER_METRICS_PORT``, the worker's main process serves the metrics of its pool."""
    port = load_settings(default_instance_path())["WORKER_METRICS_PORT"]
    if port is not None:
        metrics.start_worker_server(port)


@worker_process_shutdown.connect
def _process_gone(pid: int | None = None, **_: Any) -> None:
    metrics.process_gone(pid or os.getpid())


_started: dict[str, float] = {}


@task_prerun.connect
def _task_started(task_id: str | None = None, **_: Any) -> None:
    if task_id is not None:
        _started[task_id] = time.perf_counter()


@task_postrun.connect
def _task_ended(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    started = _started.pop(task_id, None) if task_id is not None else None
    metrics.task_finished(getattr(task, "name", "unknown"), state or "unknown",
                          None if started is None else time.perf_counter() - started)


def default_instance_path() -> str:
    """Where ``flask --app api`` keeps its instance folder (the default SQLite file)."""
    return str(Path(__file__).resolve().parent.parent.parent / "instance")
