"""HTTP figures under a real load generator: gunicorn (two worker processes of
four threads each, as gunicorn.conf.py has them, all pinned to CPU 0) on
PostgreSQL, driven by wrk (pinned to CPU 1).

Measures ``GET /healthz``, ``POST /verify`` (a typical 150-action log) and ``POST
/records`` (honest timed games of new players, each of another deal: every request
is a new ranked record) in one run, and
prints requests per second, p50/p99 latency and each rate as a share of the
healthz rate, so that the figures hold on a noisy machine; and, from /proc, the
CPU time the gunicorn workers and PostgreSQL spent per request, and the share of
CPU 0's time that the hypervisor gave other guests meanwhile (on a shared virtual
machine a round with much of it ran slow for reasons outside the code).

What it answers: what one request costs the web process and the database, compared in one
run between two checkouts (``--against``), the two judge places (``--judge both``) or the
two engine builds (``--build both``). What the whole layout holds (web, workers, database,
webhooks) is ``python -m bench.soak``'s.

    python -m bench.http_bench                 # 10 s per endpoint
    python -m bench.http_bench --seconds 3     # quicker
    python -m bench.http_bench --workers 1 --threads 4   # another gunicorn layout
    python -m bench.http_bench --against ../old-checkout --rounds 4   # two checkouts, in the order A B, B A, …
    python -m bench.http_bench --judge both --rounds 3   # FAIRPLAY_JUDGE=submission and worker, alternating
    python -m bench.http_bench --build both --rounds 3   # the compiled engine and pure Python, alternating

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from api.platform.db import scratch_postgres_database

from . import add_service_options
from .checkouts import ROOT, checkout_env, say_builds
from .corpus import build_corpus

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
  templates = nil
  if args[2] then
    templates = {}
    for line in io.lines(args[2]) do table.insert(templates, line) end
  end
end
function request()
  if templates == nil then
    return wrk.format("GET", path)
  end
  counter = counter + 1
  local template = templates[(counter - 1) % #templates + 1]
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


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU time used so far by the processes ``pids`` (those still alive)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / tick


def stolen(cpu: int = 0) -> tuple[int, int]:
    """CPU ``cpu``'s clock ticks so far: (stolen by the hypervisor for other guests, all). On a
    shared virtual machine a phase with much stolen time ran slower for reasons outside the
    code: the bench prints each phase's share, so that such rounds can be told apart."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith(f"cpu{cpu} "):
            ticks = [int(field) for field in line.split()[1:]]
            return ticks[7] if len(ticks) > 7 else 0, sum(ticks[:8])
    return 0, 0


def processes(*, name: str | None = None, parent: int | None = None) -> list[int]:
    """The pids of the processes called ``name``, or of the children of ``parent``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            comm, ppid = stat[stat.index("(") + 1:stat.rindex(")")], int(stat[stat.rindex(")") + 1:].split()[1])
            if comm == name or ppid == parent:
                pids.append(int(entry.name))
    return pids


@contextmanager
def server(database_url: str, port: int, workers: int, threads: int, root: Path = ROOT,
           broker: str | None = None, judge: str = "submission", pure: bool = False) -> Iterator[tuple[str, int]]:
    """gunicorn serving the app of the checkout at ``root`` on CPU 0 (``workers`` processes of
    ``threads`` threads, the ``gthread`` worker, which keeps connections alive); yields its URL
    and the master's pid. ``broker``: the worker tier's (no worker runs: what the app sends it waits);
    ``judge``: ``FAIRPLAY_JUDGE``, where new records are judged; ``pure``: ``SOLITAIRE_PURE=1``
    (the engine from its Python source, as where no C compiler built it)."""
    env = checkout_env(root, DATABASE_URL=database_url, API_KEYS_REQUIRED="0", RATELIMIT_ENABLED="0",
                       LOG_LEVEL="WARNING", FAIRPLAY_JUDGE=judge, SOLITAIRE_PURE="1" if pure else "",
                       **({"CELERY_BROKER_URL": broker} if broker else {}))
    worker_class = ["--worker-class", "gthread", "--threads", str(threads)]
    cmd = cpu_pin(0) + [sys.executable, "-m", "gunicorn", "--workers", str(workers), *worker_class,
                        "--bind", f"127.0.0.1:{port}",
                        "--log-level", "warning", "api:create_app()"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                health = json.loads(urllib.request.urlopen(base + PREFIX + "/healthz", timeout=1).read())
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(f"gunicorn exited: {proc.stderr.read().decode()[-2000:]}") from None
                time.sleep(0.2)
        else:
            raise SystemExit("gunicorn did not answer")
        if pure and health.get("engine", "pure") != "pure":  # (a checkout older than the field: not checked)
            raise SystemExit(f"SOLITAIRE_PURE=1 was set, but the server runs the {health['engine']} engine")
        yield base, proc.pid
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


#: distinct games ``POST /records`` cycles through (more than a run sends: each is a new game)
RECORD_GAMES = 4000
#: further distinct games, posted to warm the server up before the measured run (as healthz is):
#: a web process's first record imports what its first ask and first name check use
WARM_GAMES = 600
#: seconds of that warm-up (fewer records than WARM_GAMES: this machine stores at most about 520 a second)
WARM_SECONDS = 1


def record_bodies(length: int = 150, games: int = RECORD_GAMES) -> str:
    """``POST /records`` bodies, one a line: honest new games of new players, each of another
    deal (of at least 2/3 of ``length`` actions), with a time for each action a second apart,
    so that they rank and keep their boards as people's games do."""
    lines = []
    for game in build_corpus("yukon-classic", games * 11 // 10, seed=25, max_actions=length):
        if len(game.moves) >= 2 * length // 3 and len(lines) < games:
            lines.append(json.dumps({"code": game.code, "moves": " ".join(game.moves), "player": "bench-{{N}}",
                                     "times": [1000 * (i + 1) for i in range(len(game.moves))]}))
    return "\n".join(lines)


def typical_log(length: int = 150) -> tuple[str, str]:
    """A legal Yukon classic game whose log is closest to ``length`` actions."""
    games = build_corpus("yukon-classic", 60, max_actions=length)
    game = min(games, key=lambda g: abs(len(g.moves) - length))
    return game.code, " ".join(game.moves)


def measure(root: Path, args: argparse.Namespace, code: str, log: str, records: str,
            judge: str = "submission", warm: str | None = None, pure: bool = False) -> dict[str, dict]:
    """One round on the checkout at ``root`` with ``FAIRPLAY_JUDGE=judge`` (``pure``: its engine
    as pure Python, ``SOLITAIRE_PURE=1``): healthz, /verify,
    /records, healthz, each for ``args.seconds``, on a scratch database of its own, after a
    warm-up of healthz and, with ``warm`` (other games than ``records``), of /records."""
    verify_body = json.dumps({"code": code, "moves": log})
    with tempfile.TemporaryDirectory() as tmp, \
            scratch_postgres_database(args.database_url, f"bench_{os.getpid()}") as db:
        workdir = Path(tmp)
        with server(db, free_port(), args.workers, args.threads, root, args.broker, judge, pure) as (base, master):
            return _round(base, master, workdir, args, verify_body, records, warm)


def _round(base: str, master: int, workdir: Path, args: argparse.Namespace, verify_body: str, records: str,
           warm: str | None) -> dict[str, dict]:
    """:func:`measure`'s phases on the server at ``base``."""
    workers = processes(parent=master)

    def run(path: str, body: str | None = None, seconds: int = args.seconds) -> dict:
        """wrk on ``path``, with the CPU time the gunicorn worker and PostgreSQL spent per request
        (PostgreSQL's processes are listed again after the run: a connection's process may be new),
        and the share of CPU 0's time stolen meanwhile."""
        def counters() -> tuple[float, float, int, int]:  # CPU s: server, database; CPU 0: stolen, all ticks
            return cpu_seconds(workers), cpu_seconds(processes(name="postgres")), *stolen()

        before = counters()
        result = wrk(base, PREFIX + path, seconds, body, workdir, args.connections)
        server, database, steal, ticks = (a - b for a, b in zip(counters(), before))
        result["server_ms"], result["db_ms"] = (1000 * cpu / result["requests"] for cpu in (server, database))
        result["steal"] = steal / max(1, ticks)
        return result

    if warm is not None:  # (first: what the database does after these records settles in healthz's warm-up)
        run("/records", warm, WARM_SECONDS)
    run("/healthz")  # warm up
    try:
        phases = {"healthz (before)": run("/healthz"), "POST /verify": run("/verify", verify_body)}
        phases["POST /records"] = run("/records", records)
        phases["healthz (after)"] = run("/healthz")
        return phases
    finally:  # the tasks the records sent (a new deal's first record has its deal solved)
        redis.Redis.from_url(args.broker).flushdb()


def rate(result: dict, unstolen: bool = False) -> float:
    """Requests a second; ``unstolen``: a second of CPU 0's time that the hypervisor did not give
    other guests, a rough correction (their pollution of the caches stays in) for comparing
    rounds that they disturbed unevenly."""
    return result["rps"] / max(0.05, 1 - result["steal"]) if unstolen else result["rps"]


def healthz_rate(results: dict[str, dict], unstolen: bool = False) -> float:
    """The reference rate: healthz's, the mean of before and after."""
    return (rate(results["healthz (before)"], unstolen) + rate(results["healthz (after)"], unstolen)) / 2


def shares(results: dict[str, dict], unstolen: bool = False) -> tuple[float, float]:
    """``/verify`` and ``/records`` as shares of the healthz rate."""
    healthz = healthz_rate(results, unstolen)
    return rate(results["POST /verify"], unstolen) / healthz, rate(results["POST /records"], unstolen) / healthz


def print_round(results: dict[str, dict], title: str) -> None:
    healthz, unstolen = healthz_rate(results), healthz_rate(results, unstolen=True)
    print(f"\n{title}\n{'endpoint':18s} {'req/s':>9s} {'p50 ms':>8s} {'p99 ms':>8s} {'errors':>7s} "
          f"{'of healthz':>11s} {'CPU ms/req: server':>19s} {'database':>9s} {'CPU 0 stolen':>13s} "
          f"{'of healthz, unstolen':>21s}")
    for name, r in results.items():
        print(f"{name:18s} {r['rps']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['errors']:7d} "
              f"{r['rps'] / healthz:10.0%} {r['server_ms']:19.3f} {r['db_ms']:9.3f} {r['steal']:13.0%} "
              f"{rate(r, unstolen=True) / unstolen:21.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes, all on CPU 0")
    parser.add_argument("--threads", type=int, default=4,
                        help="threads per worker (gunicorn's gthread worker): while one request waits for "
                             "PostgreSQL to flush its commit, another runs; the threads of one process share its "
                             "interpreter lock, so a second process runs CPU-bound replays with less contention")
    add_service_options(parser, broker_db=14,
                        broker_help="the worker tier's broker, as in production (emptied after each round; no worker "
                                    "runs: without one, the first record of a deal would be solved inside its request)")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout (say of the previous commit), measured in the same run, alternating")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per checkout")
    parser.add_argument("--judge", choices=("submission", "worker", "both"), default="submission",
                        help="FAIRPLAY_JUDGE of the server (both: each round measures each, alternating)")
    parser.add_argument("--build", choices=("default", "pure", "both"), default="default",
                        help="the engine build the server runs: the checkout's own (compiled where it was built), "
                             "pure Python (SOLITAIRE_PURE=1), or both (each round measures each, alternating)")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install wrk")
    code, log = typical_log()
    bodies = record_bodies(games=RECORD_GAMES + WARM_GAMES).split("\n")
    records, warm = "\n".join(bodies[:RECORD_GAMES]), "\n".join(bodies[RECORD_GAMES:])
    print(f"gunicorn {args.workers} workers x {args.threads} threads (gthread) on CPU 0, "
          f"wrk 1 thread x {args.connections} connections on CPU 1, "
          f"{args.seconds:g} s each; /verify: a log of {len(log.split())} actions ({code}); /records: "
          f"{records.count(chr(10)) + 1} honest timed games of new players, each of another deal "
          f"(after a warm-up of healthz and of {warm.count(chr(10)) + 1} other games)")
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    say_builds(roots)
    judges = ("submission", "worker") if args.judge == "both" else (args.judge,)
    builds = {"default": (False,), "pure": (True,), "both": (False, True)}[args.build]
    runs = [(root, judge, pure) for root in roots for judge in judges for pure in builds]

    def name(root: Path, judge: str, pure: bool) -> str:
        return f"{root} ({judge}{', pure' if pure else ''})"

    seen: dict[str, list[dict[str, dict]]] = {name(*run): [] for run in runs}
    for round_ in range(args.rounds):
        # every other round in the reverse order (A B, B A, …): a slot's place in the round is
        # no longer the same for one of them (the second has measured faster on a shared machine)
        for root, judge, pure in runs if round_ % 2 == 0 else runs[::-1]:
            results = measure(root, args, code, log, records, judge, warm, pure)
            seen[name(root, judge, pure)].append(results)
            print_round(results, f"round {round_ + 1}, {root}, FAIRPLAY_JUDGE={judge}"
                                 f"{', SOLITAIRE_PURE=1' if pure else ''}")
    print()
    for root, rounds in seen.items():
        figures, unstolen = [shares(r) for r in rounds], [shares(r, unstolen=True) for r in rounds]
        verify = ", ".join(f"{v:.0%}" for v, _ in figures)
        records = ", ".join(f"{r:.0%}" for _, r in figures)
        cpu = ", ".join(f"{r['POST /verify']['server_ms']:.3f}/{r['POST /records']['server_ms']:.3f}" for r in rounds)
        print(f"{root:40s} POST /verify of healthz: {verify}; POST /records: {records}; "
              f"server CPU ms /verify/records: {cpu}; unstolen /verify, /records: "
              f"{', '.join(f'{v:.0%}' for v, _ in unstolen)}; {', '.join(f'{r:.0%}' for _, r in unstolen)}")


if __name__ == "__main__":
    main()
