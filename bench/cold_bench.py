"""Cold replay: ``verifier batch`` on a fresh corpus of varied deals, timed as a whole
process from start to exit (interpreter start, imports, every deal and action text new
to the process; the code's bytecode compiled beforehand, as installed). Prints its
figures, wall time and CPU time (the process and its workers), as medians and as ratios
to the naive reference (``bench.naive_reference``, a straightforward replay of the spec)
timed in the same run; no pass/fail. This checkout is timed as it runs by default
(``--workers auto``: one process per CPU for a long input) and in one process (``--workers
1``), each with the engine as installed (compiled, where it was built) and pure Python.

    python -m bench.cold_bench              # 1,500 games (500 per rule set), median of 5 processes
    python -m bench.cold_bench --quick      # 150 games
    python -m bench.cold_bench --longest    # also: CPU of the default's longest process (see longest())
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

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


#: how a timed process runs: a label, the command after the interpreter, and extra environment
Way = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]
BATCH = ("-m", "verifier", "batch")
PURE = (("SOLITAIRE_PURE", "1"),)
#: the processes timed, alternating: the verifier by default and in one process, compiled (where
#: installed) and pure Python, and the naive reference (a straightforward replay of the spec)
WAYS: tuple[Way, ...] = (
    ("default", BATCH, ()),
    ("--workers 1", BATCH + ("--workers", "1"), ()),
    ("pure, default", BATCH, PURE),
    ("pure, --workers 1", BATCH + ("--workers", "1"), PURE),
    ("naive reference", ("-m", "bench.naive_reference"), ()),
)
REFERENCE = "naive reference"


def time_process(corpus: Path, root: Path, argv: tuple[str, ...], env_extra: tuple[tuple[str, str], ...] = (),
                 ) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system, the process and its children) and standard output of one
    fresh ``python ARGV CORPUS`` process on the checkout at ``root``."""
    env = checkout_env(root, **dict(env_extra))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a deployed service runs from compiled bytecode
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv, str(corpus)], cwd=root, env=env, check=False,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv} failed: {done.stderr}")
    return wall, now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime, done.stdout


def agreement(verifier_out: str, reference_out: str) -> tuple[int, int]:
    """Lines on which the reference and the verifier give the same legal, won, score, moves and
    first illegal action (index and rule); and all lines."""
    def key(line: str) -> tuple[object, ...]:
        v = json.loads(line)
        error = v.get("error") or {}
        return v["legal"], v["won"], v["score"], v["moves"], error.get("index"), error.get("rule")

    pairs = list(zip(verifier_out.splitlines(), reference_out.splitlines(), strict=True))
    return sum(key(a) == key(b) for a, b in pairs), len(pairs)


def report(games: int, runs: int, seed: int = 1717, against: Path | None = None) -> None:
    """Print the cold figures for ``games`` games (a third per rule set): the median of ``runs``
    fresh processes of each way, the ways alternating; with ``against`` (another checkout, say
    of the previous commit, run as it runs by default), its figures too."""
    ways = [(ROOT, way) for way in WAYS] + ([(against, ("default", BATCH, ()))] if against else [])
    walls: dict[int, list[float]] = {i: [] for i in range(len(ways))}
    cpus: dict[int, list[float]] = {i: [] for i in range(len(ways))}
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "cold.jsonl"
        actions = write_corpus(corpus, games // len(VARIANTS), seed)
        for root, (_, argv, env_extra) in ways:  # (writes each checkout's bytecode, untimed)
            subprocess.run([sys.executable, *argv[:2], "--help"], cwd=root, env=checkout_env(root, **dict(env_extra)),
                           check=False, capture_output=True)
        for _ in range(runs):
            for i, (root, (label, argv, env_extra)) in enumerate(ways):
                wall, cpu, out = time_process(corpus, root, argv, env_extra)
                walls[i].append(wall)
                cpus[i].append(cpu)
                if root == ROOT:
                    outputs[label] = out
    print(f"cold batch, whole process ({games} games of varied deals, {actions} actions, median of {runs} "
          f"processes of each, alternating; CPU: the process and its workers; engine here: {engine_build()}):")
    reference = next(i for i, (root, way) in enumerate(ways) if root == ROOT and way[0] == REFERENCE)
    ref_wall, ref_cpu = median(walls[reference]), median(cpus[reference])
    for i, (root, (label, _, _)) in enumerate(ways):
        wall, cpu = median(walls[i]), median(cpus[i])
        where = label if root == ROOT else f"{root}, default"
        print(f"  {actions / wall:>12,.0f} actions/s  {wall:6.3f} s start to exit, CPU {cpu:6.3f} s   "
              f"{ref_wall / wall:5.1f} x the reference (CPU {ref_cpu / cpu:5.1f} x)  [{where}]")
    same, lines = agreement(outputs["default"], outputs[REFERENCE])
    print(f"  the reference and the verifier agree on {same:,} of {lines:,} lines (legal, won, score, moves, "
          f"first illegal action)")


#: ``verifier batch`` by default, then this process's own CPU (start to end, imports included) and its
#: forked children's, on standard error: the CPU of the longest process, which a machine with a free
#: core for each takes as wall time, whatever the load of a shared one
_SPLIT = ("import os, resource, sys\n"
          "from verifier.cli import main\n"
          "main(['batch', sys.argv[1]], open(os.devnull, 'w'))\n"
          "own, forked = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
          "print(own.ru_utime + own.ru_stime, forked.ru_utime + forked.ru_stime, file=sys.stderr)\n")


def longest(games: int, runs: int, seed: int = 1717) -> None:
    """Print the CPU of the default run's longest process (this one: it starts, imports, reads and
    forks before its share) and of its child, against the reference's CPU, alternating, same run."""
    refs, own, forked = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "cold.jsonl"
        write_corpus(corpus, games // len(VARIANTS), seed)
        env = checkout_env(ROOT)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for _ in range(runs):
            refs.append(time_process(corpus, ROOT, ("-m", "bench.naive_reference"))[1])
            done = subprocess.run([sys.executable, "-c", _SPLIT, str(corpus)], cwd=ROOT, env=env, check=True,
                                  capture_output=True, text=True)
            parent, child = (float(x) for x in done.stderr.split()[-2:])
            own.append(parent)
            forked.append(child)
    ref = median(refs)
    print(f"  default's longest process: CPU {median(own):6.3f} s ({ref / median(own):5.1f} x the reference's "
          f"{ref:.3f} s), its child {median(forked):6.3f} s (medians of {runs}, alternating)")


def engine_build() -> str:
    done = subprocess.run([sys.executable, "-m", "verifier", "--version"], cwd=ROOT, env=checkout_env(ROOT),
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="150 games, for a smoke run")
    parser.add_argument("--games", type=int, default=None, help="games in all (default 1500, quick 150)")
    parser.add_argument("--seed", type=int, default=1717, help="seed of the corpus (not the warm corpus's)")
    parser.add_argument("--runs", type=int, default=None, help="processes of each way (default 5, quick 1)")
    parser.add_argument("--against", type=Path, default=None, help="another checkout to time in the same run")
    parser.add_argument("--longest", action="store_true", help="also the CPU of the default's longest process")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 5)
    games = args.games or (150 if args.quick else 1500)
    report(games, runs, args.seed, args.against)
    if args.longest:
        longest(games, runs, args.seed)


if __name__ == "__main__":
    main()
