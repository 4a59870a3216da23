"""A real worker tier for the tests: Celery workers (``celery --app api.tasks worker``
in subprocesses) on the machine's Redis, and apps that send them tasks.

Every tier gets its own queue names and Redis key prefix (``CELERY_QUEUE_PREFIX``,
from ``TEST_RUN_ID``, the xdist worker, the pid and a counter), so concurrent
suites on one Redis never take each other's tasks; its keys are deleted at the end.
The broker is ``TEST_CELERY_BROKER_URL`` (default ``redis://127.0.0.1:6379/14``).
Without a reachable broker the tests are skipped, except under ``CI=true``, where
they fail: CI must run them.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
BROKER_URL = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/14")
RABBITMQ_URL = os.environ.get("TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672//")
#: a worker process starts in a few seconds; wait this long at most
START_SECONDS = 60
_counter = itertools.count()


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=2):
            return True
    except OSError:
        return False


def require_broker(url: str, what: str) -> None:
    """Skip without the broker; under CI, fail instead."""
    if reachable(url):
        return
    message = f"{what} at {url} is unreachable: the worker-tier tests need it"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def unique_prefix() -> str:
    run = os.environ.get("TEST_RUN_ID", "local")
    return f"t-{run}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}-{next(_counter)}"


class Worker:
    """One ``celery worker`` process (and its pool), in a process group of its own."""

    def __init__(self, env: dict[str, str], name: str, concurrency: int, queues: list[str] | None) -> None:
        command = [sys.executable, "-m", "celery", "--app", "api.tasks", "worker", "--loglevel", "INFO",
                   "--concurrency", str(concurrency), "--hostname", f"{name}@%h", "--without-gossip",
                   "--without-mingle", "--without-heartbeat", "--pool", "prefork"]
        if queues:
            command += ["--queues", ",".join(queues)]
        self.output: list[str] = []
        self._ready = threading.Event()
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            if " ready." in line:
                self._ready.set()

    def wait_ready(self) -> Worker:
        if not self._ready.wait(START_SECONDS):
            self.kill()
            raise AssertionError("the celery worker did not start:\n" + "".join(self.output[-40:]))
        return self

    def kill(self) -> None:
        """Kill the worker and its pool at once (SIGKILL: no task is acknowledged or given back)."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(10)


class Tier:
    """Settings shared by the apps and workers of one test, and the workers started."""

    def __init__(self, database_url: str, broker_url: str = BROKER_URL, **settings: Any) -> None:
        self.prefix = unique_prefix()
        self.broker_url = broker_url
        self.settings: dict[str, Any] = {"DATABASE_URL": database_url, "CELERY_BROKER_URL": broker_url,
                                         "CELERY_QUEUE_PREFIX": self.prefix, **settings}
        self.workers: list[Worker] = []
        self.apps: list[Any] = []

    def app(self, **config: Any) -> Any:
        """An app on the tier (rate limits off, keys optional), whose test clients check the contract."""
        from api import create_app
        from tests.conftest import TEST_DEFAULTS, _validating_client_class

        app = create_app({"TESTING": True, **TEST_DEFAULTS, **self.settings, **config})
        app.test_client_class = _validating_client_class()
        self.apps.append(app)
        return app

    def worker(self, concurrency: int = 1, queues: list[str] | None = None, **settings: Any) -> Worker:
        """A started worker (ready to take tasks) on the tier's queues."""
        env = {key: value for key, value in os.environ.items() if not key.startswith(("CELERY_", "SOLVER_"))}
        env.update({key: str(value) for key, value in {**self.settings, **settings}.items() if value is not None})
        env.update(LOG_LEVEL="WARNING", PYTHONPATH=str(ROOT))
        worker = Worker(env, f"w{len(self.workers)}-{self.prefix}", concurrency,
                        [f"{self.prefix}.{q}" for q in queues] if queues else None)
        self.workers.append(worker)
        return worker.wait_ready()

    def close(self) -> None:
        for worker in self.workers:
            worker.kill()
        for app in self.apps:
            app.extensions["api.platform.db"].dispose()
        if self.broker_url.startswith("amqp"):
            from kombu import Connection, Queue

            from api.tasks import QUEUE_ORDER

            with Connection(self.broker_url, connect_timeout=5) as connection:
                channel = connection.default_channel
                for kind in QUEUE_ORDER:
                    Queue(f"{self.prefix}.{kind}", channel=channel).delete()
        if self.broker_url.startswith("redis"):
            import redis

            client = redis.Redis.from_url(self.broker_url)
            try:
                keys = list(client.scan_iter(f"{self.prefix}*", count=1000))
                if keys:
                    client.delete(*keys)
            finally:
                client.close()
