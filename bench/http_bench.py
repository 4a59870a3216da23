"""HTTP figures under a real load generator: gunicorn (one worker process with
a few threads, pinned to CPU 0) on PostgreSQL, driven by wrk (pinned to CPU 1).

Measures ``GET /healthz``, ``POST /verify`` and ``POST /records`` (a typical
150-action log; every ``/records`` request is a new record) in one run, and
prints requests per second, p50/p99 latency and each rate as a share of the
healthz rate, so that the figures hold on a noisy machine.

    python -m bench.http_bench                 # 10 s per endpoint
    python -m bench.http_bench --seconds 3     # quicker

Needs wrk (``apt-get install wrk``) and PostgreSQL (``--database-url``,
default ``postgresql://postgres@127.0.0.1:5432/test``; a scratch database is
created and dropped).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from api.db import scratch_postgres_database

from .corpus import build_corpus

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "/api/v1"

LUA = r"""
local counter = 0
local id = 0
local threads = {}
function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  path = args[1]
  template = args[2] and io.open(args[2]):read("*a") or nil
end
function request()
  if template == nil then
    return wrk.format("GET", path)
  end
  counter = counter + 1
  local body = template:gsub("{{N}}", tostring(id) .. "-" .. tostring(counter))
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end
function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.status + summary.errors.timeout
  io.write(string.format('RESULT {"requests": %d, "seconds": %f, "p50_ms": %f, "p99_ms": %f, "errors": %d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors))
end
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_pin(cpu: int) -> list[str]:
    return ["taskset", "-c", str(cpu)] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else []


@contextmanager
def server(database_url: str, port: int, threads: int) -> Iterator[str]:
    env = dict(os.environ, DATABASE_URL=database_url, API_KEYS_REQUIRED="0", RATELIMIT_ENABLED="0",
               LOG_LEVEL="WARNING")
    cmd = cpu_pin(0) + [sys.executable, "-m", "gunicorn", "--workers", "1", "--worker-class", "gthread",
                        "--threads", str(threads), "--bind", f"127.0.0.1:{port}",
                        "--log-level", "warning", "api:create_app()"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + PREFIX + "/healthz", timeout=1).read()
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(f"gunicorn exited: {proc.stderr.read().decode()[-2000:]}")
                time.sleep(0.2)
        else:
            raise SystemExit("gunicorn did not answer")
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


def wrk(base: str, path: str, seconds: int, body: str | None, workdir: Path, connections: int) -> dict:
    script = workdir / "bench.lua"
    script.write_text(LUA)
    args = [base + path, "--", path]
    if body is not None:
        template = workdir / f"body{abs(hash(path))}.json"
        template.write_text(body)
        args.append(str(template))
    cmd = cpu_pin(1) + ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", str(script)]
    out = subprocess.run(cmd + args, capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    result["rps"] = result["requests"] / result["seconds"]
    return result


def typical_log(length: int = 150) -> tuple[str, str]:
    """A legal Yukon classic game whose log is closest to ``length`` actions."""
    games = build_corpus("yukon-classic", 60, max_actions=length)
    game = min(games, key=lambda g: abs(len(g.moves) - length))
    return game.code, " ".join(game.moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--threads", type=int, default=4,
                        help="gunicorn gthread worker threads (one worker process): while one request waits for "
                             "PostgreSQL to flush its commit, another can run")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install wrk")
    code, log = typical_log()
    actions = len(log.split())
    verify_body = json.dumps({"code": code, "moves": log})
    record_body = json.dumps({"code": code, "moves": log, "player": "bench-{{N}}"})
    print(f"gunicorn 1 worker x {args.threads} threads on CPU 0, wrk 1 thread x {args.connections} connections on CPU 1, "
          f"{args.seconds:g} s each; log of {actions} actions ({code})")
    with scratch_postgres_database(args.database_url, f"bench_{os.getpid()}") as db, tempfile.TemporaryDirectory() as tmp, \
            server(db, free_port(), args.threads) as base:
        workdir = Path(tmp)
        run = lambda path, body=None: wrk(base, PREFIX + path, args.seconds, body, workdir, args.connections)  # noqa: E731
        run("/healthz")  # warm up
        results = {"healthz (before)": run("/healthz"), "POST /verify": run("/verify", verify_body),
                   "POST /records": run("/records", record_body), "healthz (after)": run("/healthz")}
    healthz = (results["healthz (before)"]["rps"] + results["healthz (after)"]["rps"]) / 2
    print(f"\n{'endpoint':18s} {'req/s':>9s} {'p50 ms':>8s} {'p99 ms':>8s} {'errors':>7s} {'of healthz':>11s}")
    for name, r in results.items():
        print(f"{name:18s} {r['rps']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['errors']:7d} "
              f"{r['rps'] / healthz:10.0%}")
    print(f"\ntargets: POST /verify >= 60% of healthz ({results['POST /verify']['rps'] / healthz:.0%}), "
          f"POST /records >= 30% ({results['POST /records']['rps'] / healthz:.0%})")


if __name__ == "__main__":
    main()
