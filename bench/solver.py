"""Benchmark the solver on fixed corpora of random deals and print its figures.

    python bench/solver.py                 # the full corpora: 200 + 200 + 100 deals, 10 s / 10 s / 30 s
    python bench/solver.py --quick         # 20 + 20 + 10 deals, 2 s / 2 s / 5 s
    python bench/solver.py --yukon 50 --forty 0 --workers 2 --jsonl out.jsonl
    python bench/solver.py --combine yukon.jsonl forty.jsonl --jsonl all.jsonl   # runs of some rule sets, together
    python bench/solver.py --nodes                # node budgets instead of seconds (from the rates below)
    python bench/solver.py --rate                 # the solver's nodes a CPU second, one process, a few deals each
    python bench/solver.py --screen 100           # screening at CHALLENGE_NODES and WINNABLE_POOL_NODES
    python bench/solver.py --cpu-clock --workers 1  # time budgets in the worker's CPU seconds (a shared machine)

Node budgets (``--nodes``, or ``--yukon-nodes`` / ``--forty-nodes``) make the
figures independent of the machine's load: a deal is decided within N
positions or not, on any machine. ``NODE_BUDGETS`` are the time budgets
(10 s, 30 s) times the nodes a second ``--rate`` measured (docs/winnability.md
says when and how); on a quiet machine the time-based run is the check.

The corpora are ``bench/corpora/*.txt`` (one game code a line). They were made
by :func:`corpus` (SplitMix64 from a fixed seed, deal numbers below 2^35) and
are rebuilt from it when missing; ``--check-corpora`` checks they still match.
Classic and relaxed Yukon use the same deal numbers, so their figures compare
layout by layout.

Each deal is solved in a fresh worker process (so the peak memory of the
process is that deal's) through :func:`verifier.solving.solve_code`, which
replays every winning line before it counts.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import GameCode  # noqa: E402
from engine.rules import RULE_SETS, by_variant  # noqa: E402
from engine.shuffle import SplitMix64  # noqa: E402

CORPORA = ROOT / "bench" / "corpora"
SEED = 0x5EED_2024
MAX_DEAL = 2 ** 35
FULL = {"yukon-classic": (200, 10.0), "yukon-relaxed": (200, 10.0), "forty-thieves": (100, 30.0)}
QUICK = {"yukon-classic": (20, 2.0), "yukon-relaxed": (20, 2.0), "forty-thieves": (10, 5.0)}
#: the node budgets that stand for the time budgets of ``FULL``: the time budget times the nodes per
#: CPU second that ``--rate`` measured (docs/winnability.md, "Figures")
NODE_BUDGETS = {"yukon-classic": 1_000_000, "yukon-relaxed": 1_500_000, "forty-thieves": 3_600_000}
#: deals per rule set that ``--rate`` solves, and the node budget of each
RATE_DEALS, RATE_NODES = 8, 40_000
PREFIX = {s.variant: (s.game.letters, s.letter) for s in RULE_SETS}
#: the word naming each game in the per-game options (``--yukon``, ``--forty-seconds``): its name's first word
GAME_WORDS = {s.game.name.split("-")[0]: s.game.title for s in RULE_SETS}
if len(GAME_WORDS) != len({s.game.name for s in RULE_SETS}):
    raise ValueError(f"two games share their name's first word, which names their options: {sorted(GAME_WORDS)}")


def game_word(variant: str) -> str:
    """The word of ``variant``'s game in the per-game options: ``forty-thieves`` → ``forty``."""
    return by_variant(variant).game.name.split("-")[0]


def deal_numbers(game: str, count: int) -> list[int]:
    """``count`` distinct deal numbers for ``game`` (``YU`` or ``FT``), from a fixed seed."""
    rng = SplitMix64(SEED + (0 if game == "YU" else 1))
    numbers: list[int] = []
    while len(numbers) < count:
        n = rng.below(MAX_DEAL)
        if n not in numbers:
            numbers.append(n)
    return numbers


def corpus(variant: str, count: int) -> list[str]:
    game, letter = PREFIX[variant]
    return [str(GameCode(game, letter, n)) for n in deal_numbers(game, count)]


def load_corpus(variant: str, count: int) -> list[str]:
    """The first ``count`` codes of the stored corpus (written on first use)."""
    path = CORPORA / f"{variant}.txt"
    size = FULL[variant][0]
    if not path.exists():
        CORPORA.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(corpus(variant, size)) + "\n", encoding="utf-8")
    codes = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if count > len(codes):
        codes = corpus(variant, count)
    return codes[:count]


def solve_one(job: tuple[str, float | None, int | None, bool]) -> dict:
    import verifier.solving
    from verifier.solving import solve_code

    code, seconds, nodes, cpu_clock = job
    if cpu_clock:  # this worker's own process (a fresh one per deal): the budget counts its CPU seconds
        from functools import partial

        from engine.solver import solve

        verifier.solving.solve = partial(solve, clock=time.process_time)
    started, cpu = time.perf_counter(), time.process_time()
    answer = solve_code(code, budget_seconds=seconds, max_nodes=nodes)
    wall = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "code": code, "status": answer.status, "seconds": round(wall, 3), "budget": seconds, "budget_nodes": nodes,
        "cpu_seconds": round(time.process_time() - cpu, 3),
        "nodes": answer.search["nodes"], "positions": answer.search["positions"],
        "table_bytes": answer.search["table_bytes"], "peak_rss_mib": round(peak_kib / 1024, 1),
        "length": len(answer.actions) if answer.status == "winnable" else None, "verified": answer.verified,
        "found_length": getattr(answer, "found_length", None) if answer.status == "winnable" else None,
        "reason": answer.reason, "clock": "cpu" if cpu_clock else "wall",
    }


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return max(0.0, (centre - margin) / denom), min(1.0, (centre + margin) / denom)


def summary(variant: str, rows: list[dict]) -> dict:
    n = len(rows)
    won = sum(r["status"] == "winnable" for r in rows)
    lost = sum(r["status"] == "unwinnable" for r in rows)
    unknown = n - won - lost
    times = [seconds_of(r) for r in rows]
    lengths = [r["length"] for r in rows if r["length"] is not None]
    found = [r["found_length"] for r in rows if r.get("found_length") is not None]  # before shortening
    low, _ = wilson(won, n)  # every timeout counted as a loss
    _, high = wilson(won + unknown, n)  # every timeout counted as a win
    return {
        "variant": variant, "deals": n, "budget_seconds": rows[0]["budget"] if rows else None,
        "budget_nodes": rows[0].get("budget_nodes") if rows else None,
        "winnable": won, "unwinnable": lost, "unknown": unknown,
        "decided_share": (won + lost) / n if n else 0.0,
        "median_seconds": statistics.median(times) if times else 0.0, "max_seconds": max(times, default=0.0),
        "median_decided_seconds": statistics.median([seconds_of(r) for r in rows if r["status"] != "unknown"] or [0]),
        "cpu_clock": bool(rows) and rows[0].get("clock") == "cpu",
        "peak_rss_mib_max": max((r["peak_rss_mib"] for r in rows), default=0.0),
        "peak_rss_mib_median": statistics.median([r["peak_rss_mib"] for r in rows]) if rows else 0.0,
        "table_mib_max": round(max((r["table_bytes"] for r in rows), default=0) / 2 ** 20, 1),
        "length_median": statistics.median(lengths) if lengths else None,
        "found_length_median": statistics.median(found) if found else None,
        "length_total": sum(lengths), "found_length_total": sum(found) if len(found) == len(lengths) else None,
        "length_min": min(lengths, default=None), "length_max": max(lengths, default=None),
        "winnability_low": low, "winnability_high": high,
        "winnability_point": won / n if n else 0.0,
        "unverified_wins": sum(r["status"] == "winnable" and not r["verified"] for r in rows),
    }


def seconds_of(row: dict) -> float:
    """A deal's time as its budget counted it: CPU seconds with ``--cpu-clock``, else wall seconds."""
    return row["cpu_seconds"] if row.get("clock") == "cpu" else row["seconds"]


def table(summaries: list[dict]) -> str:
    head = ("| rule set | deals | budget | decided | winnable | unwinnable | unknown | median s | max s | "
            "peak MiB (max) | line length median (min-max) | winnability, 95% Wilson (timeouts both ways) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in summaries:
        lines.append(
            f"| {s['variant']} | {s['deals']} | {budget_text(s)} | {100 * s['decided_share']:.1f}% | "
            f"{s['winnable']} | {s['unwinnable']} | {s['unknown']} | {s['median_seconds']:.2f} | "
            f"{s['max_seconds']:.2f} | {s['peak_rss_mib_max']:.0f} | "
            f"{s['length_median']} ({s['length_min']}-{s['length_max']}) | "
            f"{100 * s['winnability_point']:.1f}% [{100 * s['winnability_low']:.1f}%, "
            f"{100 * s['winnability_high']:.1f}%] |")
    return "\n".join(lines)


def budget_text(s: dict) -> str:
    """A summary's budget: seconds, nodes, or both."""
    parts = []
    if s["budget_seconds"] is not None:
        parts.append(f"{s['budget_seconds']:g} s" + (" CPU" if s.get("cpu_clock") else ""))
    if s.get("budget_nodes") is not None:
        parts.append(f"{s['budget_nodes']:,} nodes")
    return " + ".join(parts) or "none"


def rate(deals: int, nodes: int) -> int:
    """Print the solver's nodes per CPU second on the first ``deals`` of each corpus (one
    process, warm: the deals in turn, each with ``nodes`` positions and no time limit; the
    search alone), then what shortening the lines found costs and gains."""
    from engine import Game
    from engine.solver import WINNABLE, shorten, solve

    print(f"| rule set | deals | nodes | CPU s | wall s | nodes / CPU s | node budget for "
          f"{FULL['yukon-classic'][1]:g} s / {FULL['forty-thieves'][1]:g} s | lines shortened | shortening CPU s "
          f"a line | actions before -> after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for variant, (_, seconds) in FULL.items():
        total, lines, before, after = 0, [], 0, 0
        cpu, wall = time.process_time(), time.perf_counter()
        for code in load_corpus(variant, deals):
            result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=nodes, shorten_steps=0)
            total += result.nodes
            if result.status == WINNABLE:
                lines.append((code, result.actions))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        spent = time.process_time()
        for code, line in lines:
            before += len(line)
            after += len(shorten(Game.from_code(code).position, line))
        spent = (time.process_time() - spent) / max(len(lines), 1)
        print(f"| {variant} | {deals} | {total:,} | {cpu:.1f} | {wall:.1f} | {total / cpu:,.0f} | "
              f"{int(total / cpu * seconds):,} | {len(lines)} | {spent:.2f} | {before} -> {after} |")
    print("load average (1, 5, 15 min):", " ".join(f"{x:.1f}" for x in os.getloadavg()), f"on {os.cpu_count()} CPUs")
    return 0


def screen(deals: int, nodes: int | None, variants: list[str] | None = None) -> int:
    """Print how fast challenge and winnable-pool candidates are screened: each deal solved
    as ``api.challenges.windows.search`` does (``solve_code`` at a node budget, no shortening, no time
    limit beyond the safety net), one process, the deals in turn; by default at both budgets
    the service uses, ``CHALLENGE_NODES`` (challenges) and ``WINNABLE_POOL_NODES`` (the pool);
    ``variants``: these rule sets only (default: all)."""
    from verifier.solving import solve_code

    if nodes is None:
        from api.platform.config import SETTINGS

        defaults = {s.name: s.default for s in SETTINGS}
        budgets = [int(defaults["CHALLENGE_NODES"] or 0), int(defaults["WINNABLE_POOL_NODES"] or 0)]
    else:
        budgets = [nodes]
    print("| rule set | deals | node budget | winnable | unwinnable | unknown | nodes / deal (mean) | "
          "CPU s / deal | deals / CPU s | winnable / CPU s | wall deals / s | unknown's share of the CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for budget in budgets:
        for variant in variants or FULL:
            counts = {"winnable": 0, "unwinnable": 0, "unknown": 0}
            total, undecided = 0, 0.0
            cpu, wall = time.process_time(), time.perf_counter()
            for code in load_corpus(variant, deals):
                started = time.process_time()
                answer = solve_code(code, budget_seconds=600.0, max_nodes=budget, shorten_steps=0)
                counts[answer.status] += 1
                total += answer.search["nodes"]
                if answer.status == "unknown":  # (the candidates that spend the whole budget and are passed over)
                    undecided += time.process_time() - started
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            print(f"| {variant} | {deals} | {budget:,} | {counts['winnable']} | {counts['unwinnable']} | "
                  f"{counts['unknown']} | {total / deals:,.0f} | {cpu / deals:.3f} | {deals / cpu:.1f} | "
                  f"{counts['winnable'] / cpu:.1f} | {deals / wall:.1f} | {undecided / cpu:.0%} |")
    print("load average (1, 5, 15 min):", " ".join(f"{x:.1f}" for x in os.getloadavg()), f"on {os.cpu_count()} CPUs")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small corpora and short budgets")
    for word, title in GAME_WORDS.items():
        parser.add_argument(f"--{word}", type=int, help=f"deals per {title} rule set")
        parser.add_argument(f"--{word}-seconds", type=float, help=f"budget per {title} deal")
        parser.add_argument(f"--{word}-nodes", type=int, help=f"node budget per {title} deal (no time limit)")
    parser.add_argument("--nodes", action="store_true",
                        help="node budgets (NODE_BUDGETS) instead of seconds: figures that do not depend on the load")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="time budgets count the worker's CPU seconds, not wall seconds (a shared machine)")
    parser.add_argument("--rate", action="store_true", help="print the solver's nodes per CPU second and stop")
    parser.add_argument("--screen", type=int, metavar="DEALS",
                        help="print the screening rate of challenge candidates on DEALS deals per rule set and stop")
    parser.add_argument("--screen-nodes", type=int, help="node budget of --screen (default: CHALLENGE_NODES, then "
                             "WINNABLE_POOL_NODES)")
    parser.add_argument("--only", choices=sorted(FULL), action="append", help="run only these rule sets")
    parser.add_argument("--start", type=int, default=0,
                        help="skip the first START deals of each corpus (to split a run; --combine joins the parts)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--jsonl", help="also write one JSON line per deal to this file")
    parser.add_argument("--check-corpora", action="store_true", help="check the stored corpora and stop")
    parser.add_argument("--combine", nargs="+", metavar="JSONL",
                        help="solve nothing: the figures of the per-deal lines in these files (earlier runs of some "
                             "rule sets each, e.g. with --only), written together to --jsonl when given")
    args = parser.parse_args(argv)

    if args.combine:
        return combine(args.combine, args.jsonl)
    if args.rate:
        return rate(RATE_DEALS, RATE_NODES)
    if args.screen:
        return screen(args.screen, args.screen_nodes, args.only)
    if args.check_corpora:
        ok = all(load_corpus(v, FULL[v][0]) == corpus(v, FULL[v][0]) for v in FULL)
        print("corpora match their seed" if ok else "corpora DIFFER from their seed")
        return 0 if ok else 1
    plan: dict[str, tuple[int, float | None, int | None]] = {}
    for variant, (count, seconds) in (QUICK if args.quick else FULL).items():
        word = game_word(variant).replace("-", "_")
        asked = getattr(args, word)
        count = asked if asked is not None else count
        nodes = getattr(args, f"{word}_nodes")
        if args.nodes and nodes is None:
            nodes = NODE_BUDGETS[variant]
        if nodes is not None:
            plan[variant] = (count, None, nodes)
        else:
            plan[variant] = (count, getattr(args, f"{word}_seconds") or seconds, None)
    if args.only:
        plan = {v: plan[v] for v in args.only}
    out = open(args.jsonl, "w", encoding="utf-8") if args.jsonl else None
    summaries = []
    started = time.time()
    ctx = multiprocessing.get_context("fork")
    for variant, (count, seconds, nodes) in plan.items():
        if count <= 0:
            continue
        jobs = [(code, seconds, nodes, args.cpu_clock) for code in load_corpus(variant, count)[args.start:]]
        rows: list[dict] = []
        with ctx.Pool(args.workers, maxtasksperchild=1) as pool:
            for row in pool.imap(solve_one, jobs):
                rows.append(row)
                if out:
                    out.write(json.dumps({"variant": variant, **row}) + "\n")
                    out.flush()
                print(f"{variant} {row['code']} {row['status']:10} {row['seconds']:7.2f}s "
                      f"{row['positions']:>9} positions  length {row['length']}", file=sys.stderr, flush=True)
        summaries.append(summary(variant, rows))
    if out:
        out.write(json.dumps({"summaries": summaries, "workers": args.workers, "cpus": os.cpu_count(),
                              "wall_seconds": round(time.time() - started, 1)}) + "\n")
        out.close()
    return report(summaries)


def report(summaries: list[dict]) -> int:
    """Print the figures; 1 if a winning line failed verification."""
    print(table(summaries))
    for s in summaries:
        if s.get("found_length_total"):
            print(f"{s['variant']}: shortening: {s['found_length_total']:,} actions as found, {s['length_total']:,} "
                  f"given out ({100 * (1 - s['length_total'] / s['found_length_total']):.1f}% fewer); median "
                  f"{s['found_length_median']} -> {s['length_median']}")
        if s["unverified_wins"]:
            print(f"ERROR: {s['variant']}: {s['unverified_wins']} winning lines failed verification")
            return 1
    return 0


def combine(paths: list[str], jsonl: str | None) -> int:
    """The figures of earlier runs' per-deal lines taken together (a deal from the last file
    that has it, so parts of one run split with ``--start`` join up), written to ``jsonl``
    with what each run said of itself."""
    by_code: dict[str, dict[str, dict]] = {}
    runs = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "variant" in entry:
                by_code.setdefault(entry.pop("variant"), {})[entry["code"]] = entry
            elif "summaries" in entry:
                runs.append({"file": Path(path).name, **{k: v for k, v in entry.items() if k != "summaries"}})
    rows = {variant: list(found.values()) for variant, found in by_code.items()}
    summaries = [summary(variant, rows[variant]) for variant in FULL if variant in rows]
    if jsonl:
        with open(jsonl, "w", encoding="utf-8") as out:
            for variant in (s["variant"] for s in summaries):
                out.writelines(json.dumps({"variant": variant, **row}) + "\n" for row in rows[variant])
            out.write(json.dumps({"summaries": summaries, "combined_from": runs}) + "\n")
    return report(summaries)


if __name__ == "__main__":
    sys.exit(main())
