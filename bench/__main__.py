"""All the service's figures in one command: ``python -m bench``.

Runs the engine benchmark (replay, batch, deals, memory), then the HTTP
benchmark (gunicorn + PostgreSQL + wrk), then bulk re-verification of stored
records (PostgreSQL), then the worker tier (Celery workers with 1 and 2 processes:
searches a minute at a fixed node budget, re-verification records a second). The solver benchmark takes about 20 minutes on
its full corpora and runs on its own: ``python bench/solver.py``.
"""

import sys

from . import engine_bench, http_bench, reverify_bench, worker_bench

#: each part, with the arguments of its quick run
PARTS = ((engine_bench, ["--quick"]), (http_bench, ["--seconds", "3"]), (reverify_bench, ["--records", "2000"]),
         (worker_bench, ["--deals", "8", "--records", "4000"]))

if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    program = sys.argv[0]
    for number, (part, quick_args) in enumerate(PARTS):
        if number:
            print("\n" + "=" * 72 + "\n")
        sys.argv = [program] + (quick_args if quick else [])
        part.main()
