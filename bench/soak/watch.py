"""What the soak watches while it runs: every few seconds the RSS and CPU time of each
process (the layout's, and the PostgreSQL backends of the run's database), the database's
connections, the records waiting for a judgement and the webhook deliveries pending, and
the broker's queue depths; and a table a minute of all that with the requests' latencies.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import redis

from .traffic import SHED, Samples, by_endpoint

TICK = os.sysconf("SC_CLK_TCK")
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2 ** 20
#: seconds between two samples
EVERY = 5.0
#: PostgreSQL's own processes whose work the run's writes cause (shared with other databases of the server)
PG_BACKGROUND = ("walwriter", "checkpointer", "background writer")


def proc_stat(pid: int) -> tuple[float, float] | None:
    """(CPU seconds, RSS MB) of ``pid``, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK, int(fields[21]) * PAGE_MB


def group(role: str) -> str:
    """The tier a role belongs to: ``web-2`` → ``web``."""
    return role.split("-")[0]


@dataclass
class State:
    """One sample of the service's queues and database."""

    at: float
    unjudged: int
    pending_deliveries: int
    connections: int
    queues: dict[str, int]


@dataclass
class Watch:
    """Samples every :data:`EVERY` seconds in a thread of its own until :meth:`close`."""

    database_url: str
    broker_url: str
    prefix: str  # the layout's CELERY_QUEUE_PREFIX: its keys on the broker begin with it
    pids: Callable[[], dict[str, int]]
    started: float = field(default_factory=time.monotonic)
    #: per pid: role, last CPU seconds, and the RSS samples (minutes since start, MB)
    cpu: dict[int, tuple[str, float]] = field(default_factory=dict)
    rss: dict[int, tuple[str, list[tuple[float, float]]]] = field(default_factory=dict)
    states: list[State] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._db = psycopg.connect(self.database_url, autocommit=True)
        self._redis = redis.Redis.from_url(self.broker_url)
        self._thread = threading.Thread(target=self._run, daemon=True, name="soak-watch")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(EVERY):
            try:
                self.sample()
            except Exception as error:
                print(f"soak: a sample failed: {error!r}", flush=True)

    def postgres_pids(self) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT pid, backend_type FROM pg_stat_activity WHERE (datname = current_database() "
            "AND pid <> pg_backend_pid()) OR backend_type = ANY(%s)", [list(PG_BACKGROUND)]).fetchall()
        return {f"postgres-{pid}": pid for pid, _ in rows}

    def state(self) -> State:
        unjudged = self._db.execute("SELECT count(*) FROM records WHERE line IS NULL").fetchone()
        pending = self._db.execute("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").fetchone()
        connections = self._db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
        return State(time.monotonic(), unjudged[0] if unjudged else 0, pending[0] if pending else 0,
                     connections[0] if connections else 0, self.queues())

    def queues(self) -> dict[str, int]:
        """The broker's lists by queue (a priority's list counts with its queue), and the tasks
        a worker took and has not acknowledged (``unacked``)."""
        depths: dict[str, int] = defaultdict(int)
        for key in self._redis.scan_iter(match=f"{self.prefix}:*", count=1000):
            if self._redis.type(key) == b"list":
                name = key.split(b"\x06\x16")[0].decode(errors="replace").split(":", 1)[1]
                depths[name.removeprefix(f"{self.prefix}.")] += self._redis.llen(key)
        depths["unacked"] = self._redis.hlen(f"{self.prefix}:unacked")
        return dict(depths)

    def sample(self) -> None:
        now = time.monotonic()
        minutes = (now - self.started) / 60
        pids = {**self.pids(), **self.postgres_pids()}
        state = self.state()
        with self.lock:
            self.states.append(state)
            for role, pid in pids.items():
                stat = proc_stat(pid)
                if stat is None:
                    continue
                self.cpu[pid] = (role, stat[0])
                self.rss.setdefault(pid, (role, []))[1].append((minutes, stat[1]))

    def cpu_by_tier(self) -> dict[str, float]:
        """CPU seconds so far per tier (a process that is gone counts with its last sample)."""
        totals: dict[str, float] = defaultdict(float)
        with self.lock:
            for role, seconds in self.cpu.values():
                totals[group(role)] += seconds
        return dict(totals)

    def rss_now(self) -> dict[str, float]:
        with self.lock:
            latest = {f"{role}": samples[-1][1] for pid, (role, samples) in self.rss.items()
                      if samples and samples[-1][0] >= (time.monotonic() - self.started) / 60 - 2 * EVERY / 60}
        return latest

    def rss_after(self, minutes: float) -> dict[str, list[tuple[float, float]]]:
        """Each process's RSS samples from ``minutes`` after the start on (per pid: a restarted process is another)."""
        with self.lock:
            return {f"{role}[{pid}]": [s for s in samples if s[0] >= minutes]
                    for pid, (role, samples) in self.rss.items() if not role.startswith("postgres")}

    def latest(self) -> State | None:
        with self.lock:
            return self.states[-1] if self.states else None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(EVERY + 5)
        self._db.close()
        self._redis.close()


def table(samples: Samples, start: float, end: float, watch: Watch, title: str) -> str:
    """The minute's table: latencies per endpoint, then the queues, database and processes."""
    lines = [f"-- {title}", f"  {'endpoint':26s} {'requests':>8s} {'errors':>6s} {'p50 ms':>8s} {'p95 ms':>8s} "
             f"{'p99 ms':>8s} {'max ms':>8s}"]
    for endpoint, row in by_endpoint(samples.since(start, end)).items():
        lines.append(f"  {endpoint:26s} {row['n']:8.0f} {row['errors']:6.0f} {row['p50']:8.0f} {row['p95']:8.0f} "
                     f"{row['p99']:8.0f} {row['max']:8.0f}")
    bad = [s for s in samples.since(start, end) if not s.ok]
    if bad:
        codes: dict[str, int] = defaultdict(int)
        for s in bad:
            codes[f"{s.endpoint} {'not sent (the service fell behind)' if s.status == SHED else s.status}"] += 1
        lines.append("  errors: " + ", ".join(f"{k} x{v}" for k, v in sorted(codes.items())))
    state = watch.latest()
    if state is not None:
        queues = ", ".join(f"{name} {depth}" for name, depth in sorted(state.queues.items())) or "empty"
        lines.append(f"  queues: {queues}; records waiting for a judgement: {state.unjudged}; "
                     f"webhook deliveries pending: {state.pending_deliveries}; database connections: "
                     f"{state.connections}")
    rss = watch.rss_now()
    tiers: dict[str, list[str]] = defaultdict(list)
    for role, mb in sorted(rss.items()):
        if not role.startswith("postgres"):
            tiers[group(role)].append(f"{role} {mb:.0f}")
    postgres = [mb for role, mb in rss.items() if role.startswith("postgres")]
    lines.append("  RSS MB: " + "; ".join(", ".join(v) for v in tiers.values())
                 + (f"; postgres {len(postgres)} processes {sum(postgres):.0f}" if postgres else ""))
    return "\n".join(lines)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """A Prometheus text page as {(sample name, labels): value}; empty when it cannot be read."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return {}
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def task_table(before: dict, after: dict, seconds: float, processes: int) -> str:
    """Per Celery task between two scrapes of the worker's metrics: how many ran, their mean
    time, and the share of the pool's time they took (``processes`` x ``seconds``)."""
    rows = []
    for (name, labels), value in after.items():
        if name == "solitaire_task_duration_seconds_sum":
            count = after.get(("solitaire_task_duration_seconds_count", labels), 0.0) - before.get(
                ("solitaire_task_duration_seconds_count", labels), 0.0)
            busy = value - before.get((name, labels), 0.0)
            if count:
                rows.append((busy, dict(labels).get("task", "?"), count))
    lines = [f"  {'task':34s} {'runs':>7s} {'mean ms':>8s} {'of the pool':>11s}"]
    for busy, task, count in sorted(rows, reverse=True):
        lines.append(f"  {task:34s} {count:7.0f} {1000 * busy / count:8.1f} {busy / (processes * seconds):10.0%}")
    return "\n".join(lines)
