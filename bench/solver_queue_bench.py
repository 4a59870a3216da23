"""The solver queue under crowds (issue 22): real Celery workers in the documented layout
(one worker for user searches, ``-Q <prefix>.keys,<prefix>.hints,<prefix>.searches``, one for the bulk
queue), on Redis and PostgreSQL.

- ``keyed``: 32 anonymous addresses ask for 2 deal searches each (the crowd that held every
  place before); then a game backend with an API key asks for one. Prints how the crowd
  was answered (202 / 503), and how long the key's search took from asking to its answer.
- ``handler``: the server time of queuing one hint, in process (Flask's test client, no
  worker), median wall and CPU time per request.
- ``hints``: gunicorn (``--workers 2 --worker-class gthread --threads 4``, ``--threads``) and 100
  concurrent ``POST /hint`` from 50 addresses (two players' tokens an address, each a
  different position), while a prober asks ``/healthz`` every 50 ms. Prints the hint
  answers' latency and statuses, and ``/healthz``'s median and worst time.

    python -m bench.solver_queue_bench                  # all three parts, 3 rounds of hints
    python -m bench.solver_queue_bench --part hints --rounds 5
    python -m bench.solver_queue_bench --against /path/to/other/checkout   # the same on another checkout too

Searches use ``SOLVER_BUDGET_SECONDS=10`` (the default) on hard Forty Thieves deals, so
that the crowd's searches take their whole budget, as in the issue. Needs PostgreSQL
(``--database-url``; a scratch database is created and dropped) and Redis (``--broker``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import engine

from . import add_service_options, drop_broker_keys
from .checkouts import ROOT, checkout_env
from .http_bench import free_port

PREFIX = "/api/v1"


def request(port: int, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None) -> tuple[int, float, dict[str, Any]]:
    """One request on a new connection: status, seconds, JSON body."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, PREFIX + path, body=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        data = response.read()
        seconds = time.perf_counter() - started
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = {}
        return response.status, seconds, parsed
    finally:
        connection.close()


@contextmanager
def service(root: Path, settings: dict[str, str], threads: int = 4) -> Any:
    """gunicorn and the two Celery workers of the documented layout, for the checkout at ``root``."""
    prefix = settings["CELERY_QUEUE_PREFIX"]
    env = checkout_env(root, **settings)
    env = {key: value for key, value in env.items() if not key.startswith("TEST_")}
    port = free_port()
    celery = [sys.executable, "-m", "celery", "--app", "api.tasks", "worker", "--loglevel", "WARNING",
              "--without-gossip", "--without-mingle", "--without-heartbeat"]
    commands = [
        [sys.executable, "-m", "gunicorn", "--workers", "2", "--worker-class", "gthread", "--threads", str(threads),
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "api:create_app()"],
        [*celery, "-Q", f"{prefix}.keys,{prefix}.hints,{prefix}.searches", "--concurrency", "2",
         "-n", f"users-{prefix}@%h"],
        [*celery, "-Q", f"{prefix}.bulk", "--concurrency", "1", "-n", f"bulk-{prefix}@%h"],
    ]
    started = [subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True) for command in commands]
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("gunicorn did not start")
            time.sleep(0.3)
        time.sleep(5)  # the workers' processes have built their apps
        yield port
    finally:
        for process in started:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            process.wait(10)


def players(database_url: str, root: Path, count: int) -> list[str]:
    """``count`` new players' tokens, registered by the checkout's own code."""
    script = ("import json, sys\nfrom api import create_app\nfrom api.players.accounts import register\n"
              f"app = create_app({{'DATABASE_URL': {database_url!r}}})\n"
              "with app.extensions['api.platform.db'].sessions() as s:\n"
              f"    tokens = [register(s, f'bench-{{i}}')[1] for i in range({count})]\n    s.commit()\n"
              "print(json.dumps(tokens))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env=checkout_env(root, LOG_LEVEL="WARNING"),
                         capture_output=True, text=True, check=True).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def api_key(database_url: str, root: Path) -> str:
    script = ("from api import create_app\nfrom api.platform.auth import create_key\n"
              f"app = create_app({{'DATABASE_URL': {database_url!r}}})\n"
              "with app.extensions['api.platform.db'].sessions() as s:\n    print(create_key(s, 'game-backend')[1])\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env=checkout_env(root, LOG_LEVEL="WARNING"),
                         capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def deal(number: int) -> str:
    """A Forty Thieves code (most are undecided within 10 s: the search takes its whole budget)."""
    return str(engine.GameCode("FT", "N", number))


def keyed(port: int, key: str, first: int) -> None:
    def ask(i: int) -> int:
        return request(port, "GET", f"/deals/{deal(first + i)}/solvability",
                       headers={"X-Forwarded-For": f"10.6.0.{i // 2 + 1}"})[0]

    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(ask, range(64)))
    code, backend = deal(first + 1000), {"Authorization": f"Bearer {key}"}
    started = time.perf_counter()
    status, _, _ = request(port, "GET", f"/deals/{code}/solvability", headers=backend)
    accepted = status
    while status == 202 and time.perf_counter() - started < 600:
        time.sleep(0.5)
        status, _, _ = request(port, "GET", f"/deals/{code}/solvability", headers=backend)
    seconds = time.perf_counter() - started
    print(f"  keyed: 32 addresses x 2 searches: {statuses.count(202)} accepted (202), {statuses.count(503)} "
          f"refused (503), {statuses.count(429)} 429; then the key's search: {accepted} at once, answered "
          f"{status} after {seconds:.1f} s")


def hint_round(port: int, tokens: list[str], first: int, number: int) -> None:
    """100 concurrent hint requests from 50 addresses while ``/healthz`` is probed."""
    probes: list[float] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            probes.append(request(port, "GET", "/healthz")[1])
            time.sleep(0.05)

    def ask(i: int) -> tuple[int, float]:
        headers = {"X-Forwarded-For": f"10.7.{number}.{i // 2 + 1}", "Authorization": f"Bearer {tokens[i]}"}
        status, seconds, _ = request(port, "POST", "/hint", {"code": deal(first + i), "moves": ""}, headers)
        return status, seconds

    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(0.3)
    with ThreadPoolExecutor(100) as pool:
        answers = list(pool.map(ask, range(100)))
    time.sleep(2)  # and while the workers search
    done.set()
    prober.join()
    seconds = sorted(s for _, s in answers)
    codes = [status for status, _ in answers]
    statuses = {code: codes.count(code) for code in sorted(set(codes))}
    print(f"  hints round {number + 1}: 100 requests from 50 addresses: {statuses}; answer median "
          f"{statistics.median(seconds) * 1000:.0f} ms, 90th {seconds[89] * 1000:.0f} ms, worst "
          f"{seconds[-1] * 1000:.0f} ms; /healthz ({len(probes)} probes) median "
          f"{statistics.median(probes) * 1000:.0f} ms, worst {max(probes) * 1000:.0f} ms")


HANDLER = """
import json, statistics, sys, time
import engine
from api import create_app
from api.players.accounts import register

app = create_app({"DATABASE_URL": sys.argv[1], "CELERY_BROKER_URL": sys.argv[2], "CELERY_QUEUE_PREFIX": sys.argv[3],
                  "RATELIMIT_ENABLED": False, "TRUSTED_PROXIES": 1, "SOLVER_QUEUE_SIZE": 100000,
                  "SOLVER_PENDING_PER_CLIENT": 1000, "LOG_LEVEL": "WARNING"})
with app.extensions["api.platform.db"].sessions() as session:
    tokens = [register(session, f"handler-{i}")[1] for i in range(300)]
    session.commit()
client, wall, cpu = app.test_client(), [], []
for i in range(300):
    started, used = time.perf_counter(), time.process_time()
    headers = {"Authorization": "Bearer " + tokens[i], "X-Forwarded-For": f"10.8.{i // 200}.{i % 200}"}
    response = client.post("/api/v1/hint", json={"code": str(engine.GameCode("FT", "N", 30000 + i)), "moves": ""},
                           headers=headers)
    assert response.status_code == 202, response.get_data(as_text=True)
    wall.append(time.perf_counter() - started)
    cpu.append(time.process_time() - used)
print(json.dumps({"wall": statistics.median(wall[50:]), "cpu": statistics.median(cpu[50:])}))
"""


def handler(root: Path, url: str, broker: str, prefix: str) -> None:
    """The server time of queuing one hint (no worker: each request queues a new search), in
    the checkout's own process through Flask's test client: median wall and CPU time."""
    out = subprocess.run([sys.executable, "-c", HANDLER, url, broker, prefix], cwd=root,
                         env=checkout_env(root, LOG_LEVEL="WARNING"), capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"  handler: queuing a hint (POST /hint answered 202, warm process, 250 requests after 50): median "
          f"{figures['wall'] * 1000:.1f} ms wall, {figures['cpu'] * 1000:.1f} ms CPU")


def run(root: Path, args: argparse.Namespace, label: str, part: str) -> None:
    """One part on the checkout at ``root``, with a database and queues of its own."""
    from api.platform.db import scratch_postgres_database

    prefix = f"bench-sq-{os.getpid()}-{label}-{part}"
    with scratch_postgres_database(args.database_url, f"bench_queue_{os.getpid()}_{label}_{part}") as url:
        settings = {"DATABASE_URL": url, "CELERY_BROKER_URL": args.broker, "CELERY_QUEUE_PREFIX": prefix,
                    "TRUSTED_PROXIES": "1", "API_KEYS_REQUIRED": "0", "LOG_LEVEL": "WARNING",
                    "RATELIMIT_ENABLED": "0"}
        tokens = players(url, root, 100)
        key = api_key(url, root)
        print(f"{label} ({root}), {part}: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        try:
            if part == "handler":
                handler(root, url, args.broker, prefix)
                return
            with service(root, settings, args.threads) as port:
                if part == "keyed":
                    keyed(port, key, 20_000)
                for number in range(args.rounds if part == "hints" else 0):
                    hint_round(port, tokens, 10_000 + 100 * number, number)
        finally:
            drop_broker_keys(args.broker, prefix)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "handler", "keyed", "hints"), default="all")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of 100 hint requests")
    parser.add_argument("--threads", type=int, default=4, help="threads of each of the 2 gunicorn workers")
    parser.add_argument("--against", type=Path, help="another checkout to measure the same way (e.g. the last release)")
    add_service_options(parser, broker_db=13)
    args = parser.parse_args()
    for part in ("handler", "keyed", "hints") if args.part == "all" else (args.part,):
        run(ROOT, args, "this", part)
        if args.against:
            run(args.against.resolve(), args, "against", part)


if __name__ == "__main__":
    main()
