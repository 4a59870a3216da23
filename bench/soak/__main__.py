"""The production layout under load, as one command: what an operator can plan on.

    python -m bench.soak --rate 40 --minutes 10          # ramp, then 40 records/s for 10 minutes
    python -m bench.soak --rate 30 --minutes 5 --faults  # a pool process, a web process and the receiver lost
    python -m bench.soak --no-ramp --rate 20 --minutes 1 # a quick look

It starts the layout as deploy/ describes it (:mod:`bench.soak.layout`: gunicorn with
gunicorn.conf.py, a Celery worker of 2 processes, one of 2 for the webhook deliveries, the
beat, the Redis broker ``--broker``, a fresh PostgreSQL database on ``--database-url``'s
server, a webhook receiver checking the Standard Webhooks signatures), or uses a running one (``--attach URL`` with its
database, broker and an admin key). It sends honest games (:mod:`bench.soak.games`: per-action
times, popular and new deals, every rule set of the registry) with reads and hints
(:mod:`bench.soak.traffic`), ramps (``--ramp-from`` … ``--ramp-to``, ``--ramp-seconds`` a
step) to the highest rate whose records keep p99 <= 300 ms with no error, then holds
``--rate`` for ``--minutes``, printing a table a minute (p50/p95/p99 per endpoint, errors,
queue depths, records waiting for a judgement, RSS per process, database connections).
After the load it waits for the drain and checks the invariants
(:mod:`bench.soak.invariants`); it exits 1 when one breaks. Only loopback addresses; every
loop is bounded, and it stops by itself.

Needs PostgreSQL and Redis (the README's setup); the games are played once and cached
(``--cache``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import engine
from api.platform.db import postgres_database_url, scratch_postgres_database
from bench import add_service_options

from . import games as soak_games
from . import invariants
from .layout import Layout, attach_layout, make_env, register_players, start_layout
from .run import challenges_ready, hold, ramp, seen, summary, write_json
from .traffic import Client, Load, Samples
from .watch import Watch

#: games are played in batches of this many (a cached file serves every run that needs fewer)
BATCH = 1000
#: registered players who ask for hints
HINT_PLAYERS = 40


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=40, help="records a second to hold (default 40)")
    parser.add_argument("--minutes", type=float, default=10, help="minutes to hold it (default 10)")
    parser.add_argument("--faults", action="store_true", help="kill a pool process, a gunicorn worker, and take "
                        "the webhook receiver down for 60 s during the hold")
    parser.add_argument("--no-ramp", dest="ramp", action="store_false", help="hold at once")
    parser.add_argument("--ramp-from", type=float, default=20)
    parser.add_argument("--ramp-to", type=float, default=60)
    parser.add_argument("--ramp-step", type=float, default=10)
    parser.add_argument("--ramp-seconds", type=float, default=20)
    parser.add_argument("--challenge-wait", type=float, default=180,
                        help="seconds to wait at the start for the worker tier to prove the daily challenges' deals")
    parser.add_argument("--warmup", type=float, default=1.0, help="minutes of the hold before memory growth counts")
    parser.add_argument("--max-growth", type=float, default=1.0, help="MB a minute a process may grow after warm-up")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--cache", type=Path, default=soak_games.default_cache(), help="where played games are kept")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1)),
                        help="processes that play the games (once; low priority)")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="the Celery worker's processes (deploy: 2)")
    parser.add_argument("--webhook-concurrency", type=int, default=2,
                        help="the webhook deliveries' worker's processes (deploy: 2)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for every tier (e.g. --set FAIRPLAY_JUDGE=worker --set WEB_CONCURRENCY=2)")
    parser.add_argument("--sample-web", action="store_true",
                        help="the web processes sample their request threads' stacks (bench.soak.sampler); "
                             "printed at the end")
    parser.add_argument("--trace-worker", action="store_true",
                        help="the worker's pool processes trace their allocations (bench.soak.memory; slower): "
                             "the growth by line is printed at the end")
    parser.add_argument("--attach", metavar="URL", default=None,
                        help="a running service on this machine (e.g. http://127.0.0.1:8000; it needs "
                             "WEBHOOK_ALLOW_PRIVATE=1): nothing is started but the receiver, no fault is made, and "
                             "--database-url, --broker and --queue-prefix are the service's")
    parser.add_argument("--admin-key", default=os.environ.get("SOAK_ADMIN_KEY"), help="with --attach: an admin key "
                        "(SOAK_ADMIN_KEY)")
    parser.add_argument("--api-key", default=os.environ.get("SOAK_API_KEY"), help="with --attach: the key records are "
                        "submitted with (SOAK_API_KEY)")
    parser.add_argument("--queue-prefix", default="solitaire-verifier", help="with --attach: CELERY_QUEUE_PREFIX")
    parser.add_argument("--keep", type=Path, default=None, help="keep the processes' logs and the figures here")
    add_service_options(parser, broker_db=13, broker_help="the Redis database of the broker and the rate limits "
                        "(the run's keys have a prefix of their own, deleted at the end)")
    args = parser.parse_args(argv)
    if not all("=" in item for item in args.set):
        parser.error("--set takes NAME=VALUE")
    if args.attach:
        if urlsplit(args.attach).hostname not in ("127.0.0.1", "localhost", "::1"):
            parser.error("--attach: only a service on a loopback address")
        if not (args.admin_key and args.api_key) or args.faults or args.set or args.sample_web or args.trace_worker:
            parser.error("--attach needs --admin-key and --api-key, and takes no --faults, --set, --sample-web or "
                         "--trace-worker")
    return args


def needed(args: argparse.Namespace) -> int:
    steps = 0.0
    if args.ramp:
        rate = args.ramp_from
        while rate <= args.ramp_to:
            steps += rate * args.ramp_seconds
            rate += args.ramp_step
    total = int(steps + args.rate * args.minutes * 60) + 1
    return -(-total // BATCH) * BATCH


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    games = soak_games.load(needed(args), args.seed, args.cache, args.jobs)
    print(f"bench.soak: {len(games):,} honest games ready; engine {engine.BUILD_NOTE}; {os.cpu_count()} CPUs; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-")))
        if args.keep:
            stack.callback(lambda: shutil.copytree(workdir, args.keep, dirs_exist_ok=True))
        if args.attach:
            layout = Layout(workdir, postgres_database_url(args.database_url), args.broker, args.queue_prefix, {},
                            web_port=urlsplit(args.attach).port or 80, admin_key=args.admin_key,
                            api_key=args.api_key, attached=True)
            stack.callback(layout.stop)
            return soak(args, layout, games)
        database = stack.enter_context(scratch_postgres_database(args.database_url, f"soak_{os.getpid()}"))
        extra = dict(item.split("=", 1) for item in args.set)
        prefix = f"soak{os.getpid()}"
        layout = Layout(workdir, database, args.broker, prefix, make_env(database, args.broker, prefix, extra))
        stack.callback(layout.stop)
        return soak(args, layout, games)
    return 1


def soak(args: argparse.Namespace, layout: Layout, games: list[soak_games.SoakGame]) -> int:
    began = time.monotonic()
    if layout.attached:
        attach_layout(layout)
        print(f"attached to {layout.base}", flush=True)
    else:
        start_layout(layout, args.worker_concurrency, args.sample_web, args.webhook_concurrency, args.trace_worker)
        print(f"layout up in {time.monotonic() - began:.0f} s: gunicorn at {layout.base}; processes "
              f"{', '.join(sorted(layout.pids()))}; settings {' '.join(args.set) or 'as deploy/'}", flush=True)
    ready = challenges_ready(layout, args.challenge_wait)
    print("daily challenges: " + (f"ready after {ready:.0f} s" if ready is not None else
                                  f"not ready after {args.challenge_wait:g} s"), flush=True)
    samples = Samples()
    load = Load(Client(layout.web_port), layout.tag, layout.api_key, register_players(layout, HINT_PLAYERS), samples)
    watch = Watch(layout.database_url, args.broker, layout.prefix, layout.pids)
    try:
        index = 0
        if args.ramp:
            rates = []
            rate = args.ramp_from
            while rate <= args.ramp_to:
                rates.append(rate)
                rate += args.ramp_step
            print(f"ramp: {len(rates)} steps of {args.ramp_seconds:g} s", flush=True)
            index, steps = ramp(load, games, samples, rates, args.ramp_seconds)
            held = [s.rate for s in steps if s.held]
            print(f"highest rate held (records p99 <= 300 ms, no error): "
                  f"{max(held):g}/s" if held else "no rate of the ramp was held", flush=True)
            from .run import drain

            after = drain(watch, 300)
            print(f"drained after the ramp in {after:.0f} s" if after is not None else "NOT drained after the ramp")
        warm = (time.monotonic() - watch.started) / 60 + args.warmup
        result = hold(layout, load, games, index, samples, watch, args.rate, args.minutes, args.faults)
        figures = summary(result, samples)
        findings = invariants.check(seen(layout, samples, watch, warm), args.max_growth)
    finally:
        watch.close()
    if args.sample_web:
        from .sampler import summary as sampled

        print("\nwhere the web processes' request threads were (wall-clock samples, ramp and hold):\n"
              + sampled(layout.samples_dir))
    if args.trace_worker:
        from .memory import summary as traced

        print("\nthe worker's pool processes' allocations, from the first minute to the last (tracemalloc):\n"
              + traced(layout.memory_dir))
    text, ok = invariants.report(findings)
    print("\ninvariants:\n" + text)
    write_json(layout.workdir / "figures.json", {"args": vars(args), **figures, "faults": result.faults,
                                                 "findings": [f.__dict__ for f in findings]})
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
