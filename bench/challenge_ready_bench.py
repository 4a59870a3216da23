"""The time to the first daily challenge on a fresh deployment taking records (issue 42).

A new scratch PostgreSQL database (nothing prepared, no derivation key yet), then the
documented layout started at once: gunicorn (``--workers 2 --worker-class gthread
--threads 4``), the users worker (``-Q <prefix>.keys,<prefix>.hints,<prefix>.searches
--concurrency 2``), the bulk worker (``-Q <prefix>.challenges,<prefix>.bulk --concurrency 1``)
and the beat. From the moment they are launched, records arrive at ``--rate`` a second
(new random deals, legal logs of 20 to 60 actions, from 200 players) and every variant's
``GET /api/v1/challenges/daily`` is asked every half second. Prints, per variant, the
seconds from the launch to the first 200 and the 503s before it, and the records stored.

``--mode embedded``: the same without a broker, workers or beat (gunicorn ``--workers 1
--threads 8``, the embedded mode): the serving process prepares in a thread of its own.

    python -m bench.challenge_ready_bench                        # the worker tier, 40 records a second
    python -m bench.challenge_ready_bench --mode embedded --rate 10
    python -m bench.challenge_ready_bench --set FAIRPLAY_JUDGE=worker    # every record judged on the bulk queue
    python -m bench.challenge_ready_bench --root /path/to/a/built/copy   # that checkout's code (compiled engine)

Needs PostgreSQL (``--database-url``: a scratch database is created and dropped) and, for the
worker tier, Redis (``--broker``). The figure depends on the engine's build (pure Python
screens several times slower: ``engine.BUILD_NOTE`` is printed) and on the machine's load.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from engine import BY_VARIANT, Game, GameCode

from . import add_service_options, drop_broker_keys
from .checkouts import ROOT, checkout_build, checkout_env
from .http_bench import free_port

PREFIX = "/api/v1"
#: how often each variant's daily challenge is asked for, and how long the bench waits at most
POLL_EVERY, GIVE_UP = 0.5, 600.0
#: the distinct records made beforehand (then sent again: answered as resubmissions)
DISTINCT = 3000


def call(port: int, method: str, path: str, body: Any = None) -> int:
    """One request on a new connection: its status (0 when the server is not up yet)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, PREFIX + path, body=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status
    except OSError:
        return 0
    finally:
        connection.close()


def random_logs(count: int, seed: int) -> list[dict[str, str]]:
    """``count`` records' bodies: each a new random deal of a random variant, 20 to 60 legal actions."""
    rng = random.Random(seed)
    out = []
    variants = list(BY_VARIANT)
    for number in range(count):
        rules = BY_VARIANT[rng.choice(variants)]
        code = GameCode(rules.game, rules.letter, rng.randrange(2 ** 35))
        game, played = Game.from_code(code), []
        for _ in range(rng.randint(20, 60)):
            options = game.legal_actions()
            if not options:
                break
            played.append(str(game.push(rng.choice(options))))
        out.append({"code": str(code), "player": f"load-{number % 200}", "moves": " ".join(played)})
    return out


def commands(mode: str, prefix: str, port: int, schedule: str) -> list[list[str]]:
    """The processes of the deployment: gunicorn, and on the worker tier the two workers and the beat."""
    celery = [sys.executable, "-m", "celery", "--app", "api.tasks"]
    worker = [*celery, "worker", "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
              "--without-heartbeat"]
    if mode == "embedded":
        return [[sys.executable, "-m", "gunicorn", "--workers", "1", "--worker-class", "gthread", "--threads", "8",
                 "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "api:create_app()"]]
    return [
        [sys.executable, "-m", "gunicorn", "--workers", "2", "--worker-class", "gthread", "--threads", "4",
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "api:create_app()"],
        [*worker, "-Q", f"{prefix}.keys,{prefix}.hints,{prefix}.searches", "--concurrency", "2",
         "-n", f"users-{prefix}@%h"],
        [*worker, "-Q", f"{prefix}.challenges,{prefix}.bulk", "--concurrency", "1", "-n", f"bulk-{prefix}@%h"],
        [*celery, "beat", "--loglevel", "WARNING", "--schedule", schedule],
    ]


@contextmanager
def deployment(root: Path, mode: str, settings: dict[str, str]) -> Any:
    """The deployment's processes, launched now; yields (port, the launch's monotonic time)."""
    port = free_port()
    env = {key: value for key, value in checkout_env(root, **settings).items() if not key.startswith("TEST_")}
    with tempfile.TemporaryDirectory() as folder:
        launched = time.monotonic()
        started = [subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
                   for command in commands(mode, settings["CELERY_QUEUE_PREFIX"], port, f"{folder}/beat")]
        try:
            yield port, launched
        finally:
            for process in started:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)
                process.wait(10)


class Load:
    """Records sent at ``rate`` a second (from a few threads) until stopped."""

    def __init__(self, port: int, bodies: list[dict[str, str]], rate: float) -> None:
        """``bodies`` sent in turn, again from the first once all were sent."""
        self.port, self.bodies, self.rate = port, bodies, rate
        self.statuses: dict[int, int] = {}
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _send(self, body: dict[str, str]) -> None:
        status = call(self.port, "POST", "/records", body)
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def _run(self) -> None:
        started = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            for number in range(int(self.rate * GIVE_UP)):
                if self.stop.is_set():
                    break
                body = self.bodies[number % len(self.bodies)]
                time.sleep(max(0.0, started + number / self.rate - time.monotonic()))
                pool.submit(self._send, body)


def first_challenges(port: int, launched: float) -> dict[str, tuple[float | None, int]]:
    """Per variant: the seconds from the launch to the first 200 of its daily challenge, and the 503s before."""
    first: dict[str, float | None] = dict.fromkeys(BY_VARIANT)
    unready = dict.fromkeys(BY_VARIANT, 0)
    while any(seconds is None for seconds in first.values()) and time.monotonic() - launched < GIVE_UP:
        for variant in [v for v, seconds in first.items() if seconds is None]:
            status = call(port, "GET", f"/challenges/daily?variant={variant}")
            if status == 200:
                first[variant] = time.monotonic() - launched
            elif status == 503:
                unready[variant] += 1
        time.sleep(POLL_EVERY)
    return {variant: (first[variant], unready[variant]) for variant in BY_VARIANT}


def run(root: Path, args: argparse.Namespace) -> None:
    from api.platform.db import scratch_postgres_database

    prefix = f"bench-ready-{os.getpid()}"
    bodies = random_logs(DISTINCT, args.seed)
    with scratch_postgres_database(args.database_url, f"bench_ready_{os.getpid()}") as url:
        settings = {"DATABASE_URL": url, "CELERY_QUEUE_PREFIX": prefix, "API_KEYS_REQUIRED": "0",
                    "RATELIMIT_ENABLED": "0", "LOG_LEVEL": "WARNING", "CELERY_BROKER_URL": ""}
        if args.mode == "worker":
            settings["CELERY_BROKER_URL"] = args.broker
        settings.update(item.split("=", 1) for item in args.set)
        subprocess.run([sys.executable, "-m", "flask", "--app", "api", "db", "upgrade"], cwd=root, check=True,
                       env=checkout_env(root, **settings), capture_output=True)
        print(f"{args.mode} mode, {args.rate:g} records/s, {' '.join(args.set) or 'default settings'}, "
              f"engine {checkout_build(root)}, "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        try:
            with deployment(root, args.mode, settings) as (port, launched):
                load = Load(port, bodies, args.rate)
                load.thread.start()
                found = first_challenges(port, launched)
                load.stop.set()
                elapsed = time.monotonic() - launched
                for variant, (seconds, unready) in found.items():
                    shown = "not within the bench's limit" if seconds is None else f"{seconds:.1f} s"
                    print(f"  {variant}: first daily challenge {shown} after the launch ({unready} answers 503 before)")
                with load.lock:
                    print(f"  records sent in {elapsed:.0f} s: {json.dumps(load.statuses, sort_keys=True)} "
                          f"(status: count; 0: the server was not up yet)")
        finally:
            if args.mode == "worker":
                drop_broker_keys(args.broker, prefix)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("worker", "embedded"), default="worker")
    parser.add_argument("--rate", type=float, default=40.0, help="records sent a second")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the deployment (e.g. FAIRPLAY_JUDGE=worker: each record judged on the bulk "
                             "queue); repeatable")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose code runs (default: this one)")
    add_service_options(parser, broker_db=12)
    args = parser.parse_args()
    run(args.root.resolve(), args)


if __name__ == "__main__":
    main()
