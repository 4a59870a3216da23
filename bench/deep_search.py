"""How far past the bench's budgets a deal's answer lies: the solver run on each deal with
node and table caps far above the service's, no time limit, one JSON line a deal (answer,
positions examined, distinct positions, CPU seconds). docs/winnability.md ("Issue 25, eighth
round") reads it.

    python -m bench.deep_search YU1-C-TO56NCA --depth --nodes 60000000 --table 20000000
    python -m bench.deep_search FT1-N-K37R6LJ --nodes 20000000 --table 8000000

``--depth``: the complete depth-first search alone (what decides a lost classic deal);
without it, the solver as the service runs it (beams, then the complete search). Size
``--table`` to the memory at hand: the process peaked at 0.53 GB for 3.65 million distinct
positions of a classic deal depth-first (about 150 bytes each) and at 5.55 GB for 4.8 million
of a Forty Thieves deal with the beams (about 1,150 bytes each).
"""

from __future__ import annotations

import argparse
import json
import time

from engine import Game
from engine.solver import solve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("codes", nargs="+", metavar="CODE")
    parser.add_argument("--nodes", type=int, default=20_000_000, help="positions examined at most (a deal)")
    parser.add_argument("--table", type=int, default=8_000_000, help="distinct positions remembered at most")
    parser.add_argument("--depth", action="store_true", help="the complete depth-first search alone")
    args = parser.parse_args(argv)
    for code in args.codes:
        started = time.process_time()
        result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=args.nodes,
                       max_table=args.table, method="depth" if args.depth else "best", shorten_steps=0)
        print(json.dumps({"code": code, "status": result.status, "nodes": result.nodes,
                          "positions": result.positions, "cpu_seconds": round(time.process_time() - started, 1),
                          "length": len(result.actions), "reason": result.reason}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
