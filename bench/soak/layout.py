"""The production layout, as ``deploy/`` describes it, on loopback addresses: gunicorn with
``gunicorn.conf.py`` (its processes and threads), a Celery worker of 2 processes on every
queue but the webhook deliveries', a worker of 2 processes on those (its database pool of 2,
as docker-compose.yml has it), the beat, a Redis broker, PostgreSQL (a fresh database,
migrated as the deploy step does), and a webhook receiver (:mod:`bench.soak.receiver`)
registered for ``record.created``.

The settings are those of ``deploy/solitaire-verifier.env.example`` (API keys required,
rate limits on in Redis, one trusted proxy, ``LOG_LEVEL=INFO``), but for the writes'
limit per API key, raised for a game backend that submits every player's records, and
``WEBHOOK_ALLOW_PRIVATE=1`` (the receiver is on loopback). Every process runs in a
session of its own and is stopped by its process group at the end.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bench import drop_broker_keys
from bench.checkouts import ROOT
from bench.http_bench import free_port, processes

PREFIX = "/api/v1"
#: settings of the layout beyond deploy/solitaire-verifier.env.example's
SETTINGS = {"AUTO_MIGRATE": "0", "API_KEYS_REQUIRED": "1", "TRUSTED_PROXIES": "1", "LOG_LEVEL": "INFO",
            "RATELIMIT_WRITES": "100000 per minute", "WEBHOOK_ALLOW_PRIVATE": "1"}
#: seconds a process may take to start
START_SECONDS = 90


@dataclass
class Process:
    """A started process (a session of its own) and where its output goes."""

    role: str
    popen: subprocess.Popen[bytes]
    log: IO[bytes]

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self, sig: int = signal.SIGTERM, wait: float = 20) -> None:
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, sig)
                self.popen.wait(wait)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(10)
        self.log.close()


@dataclass
class Layout:
    """The started layout: its URLs, keys and processes."""

    workdir: Path
    database_url: str
    broker_url: str
    prefix: str
    env: dict[str, str]
    web_port: int = field(default_factory=free_port)
    receiver_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)  # the worker's WORKER_METRICS_PORT
    webhooks_metrics_port: int = field(default_factory=free_port)  # the webhook worker's
    processes: dict[str, Process] = field(default_factory=dict)
    admin_key: str = ""
    api_key: str = ""
    secret: str = ""
    webhook_id: int | None = None
    #: the run's name: its players' names begin with it
    tag: str = field(default_factory=lambda: f"soak{os.getpid()}")
    #: a running service's (``--attach``): nothing is started or stopped but the receiver
    attached: bool = False

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def samples_dir(self) -> Path:
        return self.workdir / "web-samples"

    @property
    def memory_dir(self) -> Path:
        return self.workdir / "worker-memory"

    @property
    def deliveries_file(self) -> Path:
        return self.workdir / "deliveries.jsonl"

    def start(self, role: str, command: list[str], extra: dict[str, str] | None = None) -> Process:
        log = open(self.workdir / f"{role}.log", "ab")  # noqa: SIM115 (closed by Process.stop)
        popen = subprocess.Popen(command, cwd=ROOT, env={**self.env, **(extra or {})}, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        self.processes[role] = Process(role, popen, log)
        return self.processes[role]

    def flask(self, *args: str) -> str:
        return subprocess.run([sys.executable, "-m", "flask", "--app", "api", *args], cwd=ROOT, env=self.env,
                              check=True, capture_output=True, text=True).stdout

    def pids(self) -> dict[str, int]:
        """Each process of the layout by role (gunicorn's and the worker's children numbered)."""
        out: dict[str, int] = {}
        for role, process in self.processes.items():
            if process.popen.poll() is not None:
                continue
            out[role] = process.pid
            if role in ("web", "worker", "webhooks"):
                for number, child in enumerate(sorted(processes(parent=process.pid)), 1):
                    out[f"{role}-{number}"] = child
        return out

    def stop(self) -> None:
        for role in ("web", "worker", "webhooks", "beat", "receiver"):
            if role in self.processes:
                self.processes[role].stop()
        if self.attached:
            if self.webhook_id is not None:  # the running service sends nothing more to the receiver
                call(self, "DELETE", f"/webhooks/{self.webhook_id}")
            return
        drop_broker_keys(self.broker_url, self.prefix)


def make_env(database_url: str, broker_url: str, prefix: str, extra: dict[str, str]) -> dict[str, str]:
    """The environment of every process of the layout (one file for all tiers, as deploy/ has it);
    its keys on the broker (queues, rate limits) begin with ``prefix``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "SOLVER_", "FAIRPLAY_", "DATABASE_",
                                                                      "RATELIMIT_", "PROMETHEUS_", "WEB_"))}
    env.update(SETTINGS)
    env.update(DATABASE_URL=database_url, CELERY_BROKER_URL=broker_url, RATELIMIT_STORAGE_URI=broker_url,
               CELERY_QUEUE_PREFIX=prefix, RATELIMIT_KEY_PREFIX=prefix, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def get(url: str, timeout: float = 2) -> tuple[int, dict[str, object] | None]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


def wait_until(check, what: str, process: Process | None = None, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        if process is not None and process.popen.poll() is not None:
            raise SystemExit(f"{what}: the process exited; see {process.log.name}")
        time.sleep(0.3)
    raise SystemExit(f"{what} did not come up within {seconds:g} s")


def start_layout(layout: Layout, worker_concurrency: int = 2, sample_web: bool = False,
                 webhook_concurrency: int = 2, trace_worker: bool = False) -> None:
    """Migrate, make the keys, start the tiers and the receiver, register the webhook. ``sample_web``:
    the web processes sample their request threads' stacks (:mod:`bench.soak.sampler`);
    ``trace_worker``: the worker's pool processes trace their allocations (:mod:`bench.soak.memory`)."""
    layout.flask("db", "upgrade")
    layout.admin_key = layout.flask("keys", "create", "soak-admin", "--admin").split()[0]
    layout.api_key = layout.flask("keys", "create", "soak-backend").split()[0]
    web_metrics, worker_metrics = layout.workdir / "web-metrics", layout.workdir / "worker-metrics"
    web_metrics.mkdir(exist_ok=True)
    worker_metrics.mkdir(exist_ok=True)
    web_env = {"PROMETHEUS_MULTIPROC_DIR": str(web_metrics)}
    if sample_web:
        web_env["SOAK_SAMPLES_DIR"] = str(layout.samples_dir)
        layout.samples_dir.mkdir(exist_ok=True)
    web = layout.start("web", [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind",
                               f"127.0.0.1:{layout.web_port}",
                               "bench.soak.sampler:app()" if sample_web else "api:create_app()"], web_env)
    webhooks_queue = f"{layout.prefix}.webhooks"
    worker_env = {"PROMETHEUS_MULTIPROC_DIR": str(worker_metrics), "WORKER_METRICS_PORT": str(layout.metrics_port)}
    if trace_worker:
        worker_env["SOAK_MEMORY_DIR"] = str(layout.memory_dir)
        layout.memory_dir.mkdir(exist_ok=True)
    layout.start("worker", [sys.executable, "-m", "celery", "--app",
                            "bench.soak.memory:celery" if trace_worker else "api.tasks", "worker", "--exclude-queues",
                            webhooks_queue, "--concurrency", str(worker_concurrency), "--loglevel", "INFO",
                            "--hostname", f"{layout.tag}@%h"], worker_env)
    webhooks_metrics = layout.workdir / "webhooks-metrics"
    webhooks_metrics.mkdir(exist_ok=True)
    layout.start("webhooks", [sys.executable, "-m", "celery", "--app", "api.tasks", "worker", "--queues",
                              webhooks_queue, "--concurrency", str(webhook_concurrency), "--loglevel", "INFO",
                              "--hostname", f"{layout.tag}-webhooks@%h"],
                 {"PROMETHEUS_MULTIPROC_DIR": str(webhooks_metrics),
                  "WORKER_METRICS_PORT": str(layout.webhooks_metrics_port),
                  "DATABASE_POOL_SIZE": "2", "DATABASE_MAX_OVERFLOW": "0"})
    layout.start("beat", [sys.executable, "-m", "celery", "--app", "api.tasks", "beat", "--schedule",
                          str(layout.workdir / "celerybeat-schedule"), "--loglevel", "INFO"])
    wait_until(lambda: get(layout.base + PREFIX + "/healthz")[0] == 200, "gunicorn", web)
    register_webhook(layout)
    start_receiver(layout)


def call(layout: Layout, method: str, path: str, body: object = None) -> object:
    """An admin request to the service; its JSON answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(layout.base + PREFIX + path, data, method=method, headers={
        "Authorization": f"Bearer {layout.admin_key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        raw = answer.read()
    return json.loads(raw) if raw else None


def register_webhook(layout: Layout) -> None:
    answer = call(layout, "POST", "/webhooks", {"url": f"http://127.0.0.1:{layout.receiver_port}/hook",
                                                 "events": ["record.created"]})
    assert isinstance(answer, dict)
    layout.secret, layout.webhook_id = answer["secret"], answer["id"]


def attach_layout(layout: Layout) -> None:
    """A running service (on this machine, ``WEBHOOK_ALLOW_PRIVATE=1``): the receiver and its endpoint."""
    wait_until(lambda: get(layout.base + PREFIX + "/healthz")[0] == 200, "the service")
    register_webhook(layout)
    start_receiver(layout)


def start_receiver(layout: Layout) -> Process:
    process = layout.start("receiver", [sys.executable, "-m", "bench.soak.receiver", "--port",
                                        str(layout.receiver_port), "--out", str(layout.deliveries_file)],
                           {"SOAK_WEBHOOK_SECRET": layout.secret})

    def listening() -> bool:
        with socket.create_connection(("127.0.0.1", layout.receiver_port), timeout=1):
            return True

    wait_until(listening, "the webhook receiver", process)
    return process


def register_players(layout: Layout, count: int) -> list[str]:
    """``count`` registered players (for hints), their tokens."""
    tokens = []
    for n in range(count):
        body = json.dumps({"name": f"{layout.tag}-h{n:03d}"}).encode()
        request = urllib.request.Request(layout.base + PREFIX + "/players", body, method="POST", headers={
            "Content-Type": "application/json", "X-Forwarded-For": f"10.201.0.{n % 250}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            tokens.append(json.loads(answer.read())["token"])
    return tokens
