"""Engine and verifier figures: replay throughput (warm, then a cold whole process),
batch throughput, deals per second and peak memory of one long replay. Prints its
figures; no pass/fail.

    python -m bench.engine_bench            # full run (a minute or two)
    python -m bench.engine_bench --quick    # smaller corpus
    python -m bench.engine_bench --against ../old-checkout   # warm replay and cold batch of both, alternating
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from engine import Game, GameCode
from engine.rules.base import _shuffled
from verifier import replay
from verifier.batch import run_batch

from . import cold_bench
from .checkouts import ROOT, checkout_env, say_builds
from .corpus import VARIANTS, build_corpus, long_game


def best_of(runs: int, fn) -> float:
    """The fastest of ``runs`` timings of ``fn()`` in seconds (least disturbed by noise)."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


#: the warm replay timed in a checkout's own process: only ``verifier.replay``, which every
#: checkout has, so that another commit's code is timed by the same loop
WARM = """
import json, sys, time
from verifier import replay
texts = json.load(open(sys.argv[1]))
runs = int(sys.argv[2])
best = {}
for variant, games in texts.items():
    assert all(replay(c, t).legal for c, t in games)
    for _ in range(runs):
        start = time.perf_counter()
        for c, t in games:
            replay(c, t)
        best[variant] = min(best.get(variant, 1e9), time.perf_counter() - start)
print(json.dumps(best))
"""


def warm_against(texts: dict[str, list[tuple[str, str]]], actions: dict[str, int], runs: int, other: Path) -> None:
    """The warm replay of this checkout and of ``other``, each in a process of its own, the two
    alternating ``runs`` times (each process times every rule set ``runs`` times, best kept)."""
    roots = [ROOT, other.resolve()]
    say_builds(roots)
    best: dict[Path, dict[str, float]] = {root: {} for root in roots}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "texts.json"
        path.write_text(json.dumps(texts))
        for _ in range(runs):
            for root in roots:
                out = subprocess.run([sys.executable, "-c", WARM, str(path), str(runs)], cwd=root,
                                     env=checkout_env(root),
                                     check=True, capture_output=True, text=True).stdout
                for variant, seconds in json.loads(out).items():
                    best[root][variant] = min(best[root].get(variant, float("inf")), seconds)
    print(f"\nwarm replay, this checkout against {other} (each its own process, alternating, best of {runs * runs}):")
    for variant in texts:
        mine, theirs = (actions[variant] / best[root][variant] for root in roots)
        print(f"  {variant:14s} {mine:>12,.0f} actions/s against {theirs:>12,.0f}  ({mine / theirs:.2f} x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small corpus, for a smoke run")
    parser.add_argument("--games", type=int, default=None, help="games per rule set (default 400, quick 40)")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout (say of the previous commit): its warm replay and cold batch too")
    args = parser.parse_args()
    games = args.games or (40 if args.quick else 400)
    runs = 2 if args.quick else 5

    print(f"python {platform.python_version()} on {platform.machine()}, {games} games per rule set, best of {runs}")
    corpora = {variant: build_corpus(variant, games) for variant in VARIANTS}

    print("\nreplay throughput, single process (verifier.replay on text-form logs):")
    texts_of: dict[str, list[tuple[str, str]]] = {}
    actions_of: dict[str, int] = {}
    for variant, corpus in corpora.items():
        actions = sum(len(g.moves) for g in corpus)
        undos = sum(g.moves.count("U") for g in corpus)
        takebacks = sum(1 for g in corpus for m in g.moves if m.startswith("F"))
        texts = texts_of[variant] = [(g.code, " ".join(g.moves)) for g in corpus]
        actions_of[variant] = actions
        assert all(replay(c, t).legal for c, t in texts)
        seconds = best_of(runs, lambda: [replay(c, t) for c, t in texts])
        print(f"  {variant:14s} {actions / seconds:>12,.0f} actions/s  ({actions} actions, {undos} undos, "
              f"{takebacks} take-backs, {len(corpus)} games)")

    if args.against:
        warm_against(texts_of, actions_of, runs, args.against)

    print()
    cold_bench.report(150 if args.quick else 1500, 1 if args.quick else 5, against=args.against)

    print("\nbatch (JSON Lines in and out, all rule sets mixed):")
    lines = [json.dumps({"id": i, "code": g.code, "moves": " ".join(g.moves)})
             for i, corpus in enumerate(corpora.values()) for g in corpus]
    total_actions = sum(len(g.moves) for corpus in corpora.values() for g in corpus)
    for workers in (1, 2):
        seconds = best_of(max(1, runs // 2), lambda: run_batch(lines, io.StringIO(), workers=workers))
        print(f"  workers={workers}: {total_actions / seconds:>12,.0f} actions/s, {len(lines) / seconds:,.0f} logs/s")

    print("\ndeals generated per second (Game.from_code, shuffle cache cleared):")
    for variant, (game_letter, rules_letter) in VARIANTS.items():
        codes = [GameCode(game_letter, rules_letter, n) for n in range(2000)]

        def fresh_deals() -> None:
            _shuffled.cache_clear()  # every deal shuffled anew, not served from the cache
            for code in codes:
                Game.from_code(code)

        seconds = best_of(runs, fresh_deals)
        print(f"  {variant:14s} {len(codes) / seconds:>10,.0f} deals/s")

    print("\npeak memory replaying one long game (tracemalloc, above the starting point):")
    for variant in VARIANTS:
        game = long_game(variant, 5000)
        text = " ".join(game.moves)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        verdict = replay(game.code, text)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        print(f"  {variant:14s} {len(game.moves)} actions ({game.moves.count('U')} undos): peak {peak / 1024:,.0f} KiB"
              f" (legal={verdict.legal})")


if __name__ == "__main__":
    main()
