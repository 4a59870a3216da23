"""The worker tier's figures: Celery workers (``celery --app api.tasks worker``) with 1
and 2 worker processes, on Redis and PostgreSQL.

For each layout, with the worker started and warm:

- searches per minute: the deals of ``bench/corpora/forty-thieves.txt`` asked for
  through ``GET /deals/{code}/solvability`` at once, each searched at a fixed node
  budget (so the work is the same on any machine), timed until every answer is stored;
- re-verification records per second: ``flask --app api records reverify`` with the
  table split into id ranges, one task each.

Besides the wall-clock rates it prints how many cores the workers' processes kept
busy (their CPU time from /proc over the wall time) and the rate per CPU-minute or
CPU-second: on a machine shared with other work, the wall-clock rates follow the
cores the workers got, while the work per search or record stays the same.

    python -m bench.worker_bench                       # 24 deals, 20,000 records
    python -m bench.worker_bench --deals 8 --records 4000   # quicker

Needs PostgreSQL (``--database-url``; a scratch database is created and dropped)
and Redis (``--broker``, default ``redis://127.0.0.1:6379/13``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select

from api import create_app
from api.platform.db import scratch_postgres_database
from api.platform.models import Record, Solvability

from . import add_service_options, drop_broker_keys
from .reverify_bench import record_rows

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpora" / "forty-thieves.txt"


class Worker:
    """``celery --app api.tasks worker --concurrency N`` in its own process group."""

    def __init__(self, env: dict[str, str], concurrency: int) -> None:
        self.ready = threading.Event()
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "--app", "api.tasks", "worker", "--concurrency", str(concurrency),
             "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(60):
            self.stop()
            raise SystemExit("the worker did not start:\n" + "".join(self.lines[-30:]))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if " ready." in line:
                self.ready.set()

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of the worker's processes so far, from /proc."""
        total = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.process.pid:  # the process group
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def timed(worker: Worker, run: Any) -> tuple[float, float, float]:
    """``run()``'s (rate, wall seconds) and the worker's CPU seconds meanwhile."""
    cpu = worker.cpu_seconds()
    rate, seconds = run()
    return rate, seconds, worker.cpu_seconds() - cpu


def searches_per_minute(app: Any, codes: list[str]) -> tuple[float, float]:
    """Ask for every deal at once, wait for every answer: (searches a minute, seconds)."""
    database = app.extensions["api.platform.db"]
    with database.sessions() as session:
        session.execute(delete(Solvability))
        session.commit()
    client = app.test_client()
    start = time.perf_counter()
    for number, code in enumerate(codes):
        response = client.get(f"/api/v1/deals/{code}/solvability", headers={"X-Forwarded-For": f"10.2.{number}.1"})
        assert response.status_code in (200, 202), response.get_data(as_text=True)
    while True:
        with database.sessions() as session:
            pending = session.scalar(select(func.count()).select_from(Solvability).where(Solvability.status == "pending"))
        if not pending:
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    return len(codes) / seconds * 60, seconds


def reverify_rate(app: Any, records: int) -> tuple[float, float]:
    runner = app.test_cli_runner()
    start = time.perf_counter()
    result = runner.invoke(args=["records", "reverify", "--chunk", "1000", "--no-progress"])
    seconds = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    return records / seconds, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=24)
    parser.add_argument("--nodes", type=int, default=20_000, help="node budget of each search")
    parser.add_argument("--records", type=int, default=20_000)
    add_service_options(parser, broker_db=13)
    args = parser.parse_args()
    codes = [line.strip() for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()][:args.deals]
    rows, actions = record_rows(args.records, 100)
    prefix = f"bench-{os.getpid()}"
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"worker tier (Celery on Redis, PostgreSQL): {len(codes)} Forty Thieves deals at {args.nodes:,} nodes "
          f"each; re-verification of {len(rows):,} records ({actions / len(rows):.0f} actions each) in ranges "
          f"of 1,000 ids; warm workers (started before the clock)")
    with scratch_postgres_database(args.database_url, f"bench_worker_{os.getpid()}") as url:
        settings = {"DATABASE_URL": url, "CELERY_BROKER_URL": args.broker, "CELERY_QUEUE_PREFIX": prefix,
                    "SOLVER_BUDGET_SECONDS": "600", "SOLVER_BUDGET_NODES": str(args.nodes),
                    "SOLVER_STALE_SECONDS": "1800", "CELERY_VISIBILITY_TIMEOUT": "3600",
                    "SOLVER_QUEUE_SIZE": str(len(codes) + 1), "LOG_LEVEL": "WARNING"}
        app = create_app({**settings, "RATELIMIT_ENABLED": False, "TRUSTED_PROXIES": 1})
        with app.extensions["api.platform.db"].engine.begin() as connection:
            connection.execute(Record.__table__.insert(), rows)
        env = {key: value for key, value in os.environ.items() if not key.startswith(("CELERY_", "SOLVER_"))}
        env.update(settings, PYTHONPATH=str(ROOT))
        results = {}
        try:
            for processes in (1, 2):
                worker = Worker(env, processes)
                try:
                    time.sleep(2)  # the pool's processes have built their app
                    results[processes] = (timed(worker, lambda: searches_per_minute(app, codes)),
                                          timed(worker, lambda: reverify_rate(app, len(rows))))
                finally:
                    worker.stop()
                (rate, seconds, cpu), (records, reverify_seconds, reverify_cpu) = results[processes]
                print(f"  {processes} worker process{'es' if processes > 1 else '  '}  {rate:6.1f} searches/min "
                      f"({seconds:5.1f} s, {cpu / seconds:.2f} cores busy, {len(codes) / cpu * 60:5.0f} a CPU-minute)"
                      f"   {records:7,.0f} records/s re-verified ({reverify_seconds:5.1f} s, "
                      f"{reverify_cpu / reverify_seconds:.2f} cores busy, {len(rows) / reverify_cpu:5,.0f} a CPU-second)")
        finally:
            app.extensions["api.platform.db"].dispose()
            drop_broker_keys(args.broker, prefix)
    if len(results) == 2:
        (one, _, _), (one_r, _, _) = results[1]
        (two, _, _), (two_r, _, _) = results[2]
        print(f"  2 processes / 1 process: searches x{two / one:.2f}, re-verification x{two_r / one_r:.2f} "
              f"(wall-clock rates: they follow the cores the workers got, see 'cores busy')")


if __name__ == "__main__":
    main()
