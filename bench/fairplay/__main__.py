"""``python -m bench.fairplay``: the false-positive rates of the fair-play flags on honest play,
and which attacks of issue 21 are caught.

    python -m bench.fairplay                                  # 2,000 games, seed 2026, 50,000 nodes
    python -m bench.fairplay --games 300 --nodes 5000 --json out.json
    python -m bench.fairplay --database-url postgresql://postgres@127.0.0.1:5432/scratch   # an empty database
    python -m bench.fairplay --report out.json                # the tables of a saved report again
    python -m bench.fairplay --sweep --deals 2 --players 100  # the copy threshold from data (no service)

It plays an honest corpus (:mod:`bench.fairplay.policies`), starts a fresh service on a
temporary SQLite database (or the empty database given), lets the service search every deal
within the node budget, registers a player per honest person, submits the corpus interleaved,
runs the attacks (:mod:`bench.fairplay.attacks`) and prints Markdown tables for
``docs/fair-play.md``, then how long each part took. ``--sweep`` measures instead, without a
service, how many honest games on popular deals and how many copies of part of a game each
copy threshold would flag (:mod:`bench.fairplay.sweep`).
"""

from __future__ import annotations

import argparse
import json
import os

from . import sweep
from .attacks import ATTACKS
from .measure import RULE_SETS, prefix, run
from .report import summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fairplay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000, help="honest games (default 2000)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--nodes", type=int, default=50_000, help="the service's solver and hint budget, in nodes")
    parser.add_argument("--database-url", help="an empty database (default: a temporary SQLite file)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes playing the honest games while the service searches their deals "
                             "(the figures do not depend on it)")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="which attacks, comma-separated (default all)")
    parser.add_argument("--attack-rule-sets", default=",".join(map(prefix, RULE_SETS)),
                        help="the rule sets the attacks are run on, comma-separated (default all)")
    parser.add_argument("--json", metavar="OUT", help="write the whole report (every record's state) here")
    parser.add_argument("--report", metavar="IN", help="print the tables of a report written by --json, and stop")
    parser.add_argument("--sweep", action="store_true",
                        help="the copy threshold sweep on popular deals instead (no service; --json, --report too)")
    parser.add_argument("--deals", type=int, default=2, help="--sweep: popular deals per rule set (default 2)")
    parser.add_argument("--players", type=int, default=100, help="--sweep: players on each (default 100)")
    parser.add_argument("--victims", type=int, default=5,
                        help="--sweep: winning games copied per deal (default 5; the solver's line if none won)")
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report, encoding="utf-8") as saved:
            report = json.load(saved)
        print(sweep.markdown(report) if "victims" in report else summary(report))
        return
    if args.sweep:
        report = sweep.run(args.deals, args.players, args.victims, args.seed, args.nodes, args.workers)
        print(sweep.markdown(report))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(report, out, indent=1)
        return
    kinds = tuple(k for k in args.attacks.split(",") if k)
    unknown = set(kinds) - set(ATTACKS)
    if unknown:
        parser.error(f"no attack {', '.join(sorted(unknown))}; the attacks are {', '.join(ATTACKS)}")
    known = {prefix(r): r for r in RULE_SETS}
    asked = [text for text in args.attack_rule_sets.split(",") if text]
    if not set(asked) <= set(known):
        parser.error(f"--attack-rule-sets: the rule sets are {', '.join(known)}")
    rule_sets = tuple(known[text] for text in asked)
    report = run(args.games, args.seed, args.database_url, args.nodes, args.workers, kinds, rule_sets)
    print(summary(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
