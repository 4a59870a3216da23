"""The soak's phases: the ramp, the hold (with its faults), the drain, and the end's figures."""

from __future__ import annotations

import json
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from engine.rules import RULE_SETS

from . import invariants
from .games import SoakGame
from .layout import PREFIX, Layout, get, start_receiver
from .traffic import Load, Samples, by_endpoint, drive
from .watch import Watch, scrape, table, task_table

#: the latency and errors a rate must keep to count as held
P99_MS = 300.0
#: the endpoint whose p99 decides
RECORDS = "POST /records"


@dataclass
class Step:
    rate: float
    p99: float
    errors: int
    requests: int

    @property
    def held(self) -> bool:
        return self.p99 <= P99_MS and self.errors == 0


@dataclass
class Hold:
    """What the hold measured."""

    rate: float
    seconds: float
    start: float
    end: float
    drained_after: float | None = None
    cpu: dict[str, float] = field(default_factory=dict)
    records: int = 0
    generator_cpu: float = 0.0
    faults: list[str] = field(default_factory=list)
    tasks: str = ""


def step_result(samples: Samples, rate: float, start: float, end: float) -> Step:
    rows = by_endpoint(samples.since(start, end))
    errors = sum(int(row["errors"]) for row in rows.values())
    record = rows.get(RECORDS, {"p99": float("inf"), "n": 0})
    return Step(rate, record["p99"], errors, int(record["n"]))


def ramp(load: Load, games: list[SoakGame], samples: Samples, rates: list[float], seconds: float,
         say=print) -> tuple[int, list[Step]]:
    """Each rate of ``rates`` for ``seconds``, until one is not held; the next unsent game and the steps."""
    index, steps = 0, []
    for rate in rates:
        start = time.monotonic()
        index = drive(load, games, index, rate, seconds)
        step = step_result(samples, rate, start, time.monotonic())
        steps.append(step)
        say(f"  ramp {rate:5.0f}/s: records p99 {step.p99:7.0f} ms, errors {step.errors}, "
            f"{step.requests} records: {'held' if step.held else 'NOT held'}")
        if not step.held or index >= len(games):
            break
    return index, steps


def drained(watch: Watch) -> bool:
    state = watch.state()
    return state.unjudged == 0 and state.pending_deliveries == 0 and sum(state.queues.values()) == 0


def drain(watch: Watch, seconds: float) -> float | None:
    """Seconds until nothing is pending (judgements, deliveries, tasks), None if not within ``seconds``."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if drained(watch):
            return time.monotonic() - began
        time.sleep(1)
    return None


def faults(layout: Layout, hold_seconds: float, stop: threading.Event, log: list[str], say=print) -> None:
    """The three faults, spread over the hold: a Celery pool process killed (SIGKILL), a gunicorn
    worker killed (SIGKILL), the webhook receiver down for 60 s (then started again)."""
    began = time.monotonic()

    def at(share: float) -> bool:
        return not stop.wait(max(0.0, began + share * hold_seconds - time.monotonic()))

    def note(text: str) -> None:
        line = f"{time.monotonic() - began:6.0f} s into the hold: {text}"
        log.append(line)
        say(f"  FAULT {line}", flush=True)

    for share, role in ((0.2, "worker"), (0.4, "web")):
        if not at(share):
            return
        pool = [pid for name, pid in layout.pids().items() if name.startswith(f"{role}-")]
        if pool:
            os.kill(pool[0], signal.SIGKILL)
            note(f"killed {role} process {pool[0]} (SIGKILL)")
    if not at(0.55):
        return
    layout.processes["receiver"].stop(signal.SIGKILL)
    note("webhook receiver down")
    stop.wait(60)  # (the receiver comes back even when the hold ends meanwhile)
    start_receiver(layout)
    note("webhook receiver up again")


def hold(layout: Layout, load: Load, games: list[SoakGame], index: int, samples: Samples, watch: Watch,
         rate: float, minutes: float, with_faults: bool, say=print) -> Hold:
    """``rate`` records a second for ``minutes``, a table a minute; with the faults."""
    seconds = 60 * minutes
    result = Hold(rate, seconds, time.monotonic(), 0.0)
    cpu_before, own_before = watch.cpu_by_tier(), _own_cpu()
    acked_before = len(samples.acknowledged)
    ports = (layout.metrics_port, layout.webhooks_metrics_port)
    tasks_before = [scrape(f"http://127.0.0.1:{port}/metrics") for port in ports]
    done, stop = threading.Event(), threading.Event()
    runner = threading.Thread(target=lambda: (drive(load, games, index, rate, seconds), done.set()), daemon=True)
    runner.start()
    fault_thread = None
    if with_faults:
        fault_thread = threading.Thread(target=faults, args=(layout, seconds, stop, result.faults, say), daemon=True)
        fault_thread.start()
    minute = 0
    while not done.wait(max(0.0, result.start + 60 * (minute + 1) - time.monotonic())):
        minute += 1
        pool = scrape(f"{layout.base}/metrics")
        in_use = pool.get(("solitaire_db_pool_checked_out", ()), 0.0)
        say(table(samples, result.start + 60 * (minute - 1), result.start + 60 * minute, watch,
                  f"minute {minute} at {rate:g}/s")
            + f"\n  web tier's database pools: {in_use:.0f} connections checked out of "
              f"{pool.get(('solitaire_db_pool_size', ()), 0.0):.0f} kept", flush=True)
    result.end = time.monotonic()
    if samples.since(result.start + 60 * minute, result.end):
        say(table(samples, result.start + 60 * minute, result.end, watch, "the hold's last part"), flush=True)
    result.drained_after = drain(watch, 600 if with_faults else 300)
    if fault_thread is not None:
        fault_thread.join(90)  # the receiver is up again before the end's checks
        stop.set()
        if result.drained_after is None:
            result.drained_after = drain(watch, 60)
    watch.sample()
    tables = []
    for name, port, before in zip(("worker", "webhooks"), ports, tasks_before):
        processes = len([role for role in layout.pids() if role.startswith(f"{name}-")])
        tables.append(f"  the {name} worker ({processes} processes):\n" + task_table(
            before, scrape(f"http://127.0.0.1:{port}/metrics"), time.monotonic() - result.start, processes))
    result.tasks = "\n".join(tables)
    cpu_after = watch.cpu_by_tier()
    result.cpu = {tier: cpu_after.get(tier, 0.0) - cpu_before.get(tier, 0.0) for tier in cpu_after}
    result.generator_cpu = _own_cpu() - own_before
    result.records = len(samples.acknowledged) - acked_before
    return result


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def seen(layout: Layout, samples: Samples, watch: Watch, warmup_minutes: float) -> invariants.Seen:
    """What the checker needs, read from the run's database, the receiver's file and the samples
    (attached to a running service: only the run's own records and their deliveries)."""
    with psycopg.connect(layout.database_url) as db:
        stored = [(int(i), p, c) for i, p, c in db.execute(
            "SELECT id, player, code FROM records WHERE player LIKE %s", [layout.tag + "-%"]).fetchall()]
    path = layout.deliveries_file
    receipts = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    if layout.attached:
        ours = {row[0] for row in stored} | set(samples.acknowledged)
        receipts = [r for r in receipts if r.get("record") in ours]
    state = watch.state()
    pending = {"records waiting for a judgement": state.unjudged, "webhook deliveries pending":
               state.pending_deliveries, **{f"tasks in {q}": n for q, n in state.queues.items()}}
    return invariants.Seen(dict(samples.acknowledged), stored, receipts, pending, watch.rss_after(warmup_minutes))


def challenges_ready(layout: Layout, seconds: float) -> float | None:
    """Seconds until every variant's daily challenge answers 200 (the worker tier proves its deal), None if not."""
    began = time.monotonic()
    variants = [rule_set.variant for rule_set in RULE_SETS]
    while time.monotonic() - began < seconds:
        if all(get(f"{layout.base}{PREFIX}/challenges/daily?variant={v}")[0] == 200 for v in variants):
            return time.monotonic() - began
        time.sleep(2)
    return None


def summary(result: Hold, samples: Samples, say=print) -> dict[str, object]:
    """The hold's figures: per endpoint over the whole hold, drain, CPU a record per tier."""
    rows = by_endpoint(samples.since(result.start, result.end))
    say(f"\nthe hold: {result.rate:g}/s for {result.seconds / 60:g} min, {result.records:,} records acknowledged")
    for endpoint, row in rows.items():
        say(f"  {endpoint:26s} {row['n']:7.0f} requests, {row['errors']:4.0f} errors, p50/p95/p99/max "
            f"{row['p50']:.0f} / {row['p95']:.0f} / {row['p99']:.0f} / {row['max']:.0f} ms")
    drained_text = f"{result.drained_after:.0f} s" if result.drained_after is not None else "NOT drained"
    say(f"  drained (judgements, deliveries, tasks) {drained_text} after the load ended")
    say("  the worker tier's tasks over the hold and the drain (mean: wall-clock time; of the pool: share of "
        "its processes' time):\n" + result.tasks)
    per = {tier: 1000 * cpu / max(1, result.records) for tier, cpu in sorted(result.cpu.items())}
    say("  CPU a record (hold and drain), ms: " + ", ".join(f"{t} {ms:.1f}" for t, ms in per.items())
        + f"; all service tiers {sum(ms for t, ms in per.items() if t != 'receiver'):.1f}"
        + f"; the load generator {1000 * result.generator_cpu / max(1, result.records):.1f}")
    return {"rows": rows, "cpu_ms": per, "drained_after": result.drained_after}


def write_json(path: Path, data: dict[str, object]) -> None:
    path.write_text(json.dumps(data, indent=1, default=str))
