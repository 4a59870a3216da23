"""Cold replay: ``verifier batch`` on a fresh corpus of varied deals, timed as a whole
process from start to exit (interpreter start, imports, every deal and action text new
to the process; the code's bytecode compiled beforehand, as installed). Prints its
figures, wall time and CPU time (the process and its workers); no pass/fail. This
checkout is timed as it runs by default (``--workers auto``: one process per CPU for
a long input) and in one process (``--workers 1``).

    python -m bench.cold_bench              # 1,500 games (500 per rule set), best of 3 processes
    python -m bench.cold_bench --quick      # 150 games
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .checkouts import ROOT, checkout_env
from .corpus import VARIANTS, build_corpus


def write_corpus(path: Path, games_per_variant: int, seed: int) -> int:
    """Write the JSON Lines corpus; return its number of actions."""
    actions = 0
    with path.open("w", encoding="utf-8") as out:
        for variant in VARIANTS:
            for game in build_corpus(variant, games_per_variant, seed=seed):
                actions += len(game.moves)
                out.write(json.dumps({"code": game.code, "moves": " ".join(game.moves)}) + "\n")
    return actions


def time_process(corpus: Path, runs: int, root: Path = ROOT, extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """Best wall time and best CPU time (user + system, the process and its children) of ``runs``
    fresh ``python -m verifier batch`` processes on the checkout at ``root``."""
    env = checkout_env(root)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a deployed service runs from compiled bytecode
    subprocess.run([sys.executable, "-m", "verifier", "batch", os.devnull], cwd=root, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # (writes the bytecode, untimed)
    wall = cpu = float("inf")
    for _ in range(runs):
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "verifier", "batch", str(corpus), *extra], cwd=root, env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = min(wall, time.perf_counter() - start)
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime)
    return wall, cpu


def report(games: int, runs: int, seed: int = 1717, against: Path | None = None) -> None:
    """Print the cold figures for ``games`` games (a third per rule set), best of ``runs`` processes;
    with ``against`` (another checkout, say of the previous commit, run as it runs by default),
    its figures too, runs alternating."""
    ways = [(ROOT, ()), (ROOT, ("--workers", "1"))] + ([(against, ())] if against else [])
    best = dict.fromkeys(ways, (float("inf"), float("inf")))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "cold.jsonl"
        actions = write_corpus(corpus, games // len(VARIANTS), seed)
        for _ in range(runs):
            for way in ways:
                wall, cpu = time_process(corpus, 1, *way)
                best[way] = (min(best[way][0], wall), min(best[way][1], cpu))
    print(f"cold batch, whole process (verifier batch, {games} games of varied deals, {actions} actions, "
          f"best of {runs} processes; CPU: the process and its workers):")
    for (root, extra), (wall, cpu) in best.items():
        where = ("this checkout" if root == ROOT else str(root)) + (" " + " ".join(extra) if extra else ", default")
        print(f"  {actions / wall:>12,.0f} actions/s  ({wall:.3f} s start to exit, CPU {cpu:.3f} s = "
              f"{actions / cpu:,.0f} actions/s)  [{where}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="150 games, for a smoke run")
    parser.add_argument("--games", type=int, default=None, help="games in all (default 1500, quick 150)")
    parser.add_argument("--seed", type=int, default=1717, help="seed of the corpus (not the warm corpus's)")
    parser.add_argument("--runs", type=int, default=None, help="processes per checkout (default 3, quick 1)")
    parser.add_argument("--against", type=Path, default=None, help="another checkout to time in the same run")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    report(args.games or (150 if args.quick else 1500), runs, args.seed, args.against)


if __name__ == "__main__":
    main()
