"""Where the time of a request goes: the profiles behind docs/performance.md.

    pip install -e '.[bench]'      # pyinstrument and line_profiler
    python -m bench.profile        # 2,000 requests each, in one process, on a scratch PostgreSQL database
    python -m bench.profile --solve FT1-N-K37R6LJ --nodes 300000    # the solver instead

Prints, for ``POST /verify`` and ``POST /records`` with the HTTP benchmark's
typical 150-action log (called through the WSGI app, no HTTP server), pyinstrument's
call tree; then line_profiler's cost per line of the rules interpreter
(``Rules._apply``) and of compiling a text seen anew (``Rules.compile_text``), on the
same requests, most expensive lines first. With ``--solve``: where a search of that
many positions on that deal spends its time (cProfile, by function).
"""

from __future__ import annotations

import argparse
import os

from api.platform.db import scratch_postgres_database

from . import add_service_options
from .http_bench import typical_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=15, help="lines of each function to show")
    parser.add_argument("--solve", metavar="CODE", help="profile the solver on this deal instead")
    parser.add_argument("--nodes", type=int, default=300_000, help="the solver's node budget (with --solve)")
    add_service_options(parser)
    args = parser.parse_args()
    if args.solve:
        profile_solver(args.solve, args.nodes, args.lines)
        return
    try:
        from line_profiler import LineProfiler
        from pyinstrument import Profiler
    except ImportError:
        raise SystemExit("needs pyinstrument and line_profiler: pip install -e '.[bench]'") from None
    from api import create_app
    from engine.rules.base import Rules

    code, log = typical_log()
    with scratch_postgres_database(args.database_url, f"bench_profile_{os.getpid()}") as url:
        app = create_app({"DATABASE_URL": url, "LOG_LEVEL": "WARNING", "API_KEYS_REQUIRED": False,
                          "RATELIMIT_ENABLED": False})
        client = app.test_client()
        counter = iter(range(10 ** 9))

        def verify() -> None:
            client.post("/api/v1/verify", json={"code": code, "moves": log})

        def record() -> None:
            response = client.post("/api/v1/records", json={"code": code, "moves": log, "player": f"p{next(counter)}"})
            assert response.status_code == 201, response.get_data(as_text=True)

        lines = LineProfiler(Rules._apply, Rules.compile_text)
        for name, request in (("POST /verify", verify), ("POST /records", record)):
            for _ in range(50):
                request()  # warm: prepared statements, caches
            profiler = Profiler(interval=0.0002)
            profiler.start()
            for _ in range(args.requests):
                request()
            profiler.stop()
            print(f"\n{'=' * 30} {name}: {args.requests} requests, pyinstrument {'=' * 30}")
            print(profiler.output_text(color=False, show_all=False))
            lines.runcall(lambda: [request() for _ in range(args.requests // 4)])
    print(f"\n{'=' * 30} line_profiler: the replay, both requests {'=' * 30}")
    stats = lines.get_stats()
    for (path, first, function), timings in stats.timings.items():
        total = sum(t for _, _, t in timings) or 1
        source = open(path).read().splitlines()
        print(f"\n{function} ({os.path.relpath(path)}:{first}): share of its time, per line")
        for number, hits, t in sorted(timings, key=lambda x: -x[2])[:args.lines]:
            print(f"  {100 * t / total:5.1f}%  {hits:>8} hits  {number:4d}  {source[number - 1].strip()[:90]}")


def profile_solver(code: str, nodes: int, lines: int) -> None:
    """cProfile of one search (no time limit: the node budget makes it repeatable), by own time."""
    import cProfile
    import pstats

    from engine import Game
    from engine.solver import solve

    position = Game.from_code(code).position
    profiler = cProfile.Profile()
    result = profiler.runcall(solve, position, budget_seconds=None, max_nodes=nodes)
    print(f"solve {code}, {nodes:,} positions at most: {result.status} after {result.nodes:,} positions "
          f"({result.positions:,} distinct), {result.seconds:.1f} s under the profiler\n")
    pstats.Stats(profiler).strip_dirs().sort_stats("tottime").print_stats(lines)


if __name__ == "__main__":
    main()
