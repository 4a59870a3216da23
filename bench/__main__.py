"""All the service's figures in one command: ``python -m bench``.

Runs the engine benchmark (replay, batch, deals, memory), then the HTTP
benchmark (gunicorn + PostgreSQL + wrk). The solver benchmark takes about 20 minutes on
its full corpora and runs on its own: ``python bench/solver.py``.
"""

import sys

from . import engine_bench, http_bench

if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    sys.argv = [sys.argv[0]] + (["--quick"] if quick else [])
    engine_bench.main()
    print("\n" + "=" * 72 + "\n")
    sys.argv = [sys.argv[0]] + (["--seconds", "3"] if quick else [])
    http_bench.main()
