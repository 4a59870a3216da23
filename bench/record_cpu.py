"""A record's CPU in one warm process: ``POST /records`` of the HTTP bench's honest games
(new players, each of another deal, with per-action times) through Flask's test client, on
a scratch PostgreSQL database and a Redis broker (no worker runs), then ``GET /healthz`` as
many times; prints the CPU of each a request.

    python -m bench.record_cpu --records 1000
    PYTHONPATH=../old python bench/record_cpu.py     # another checkout's code (its bench.http_bench too)

For figures a shared machine does not disturb, count instructions: the difference of two
runs under valgrind, divided by the difference of their counts (the start-up cancels out):

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        python -m bench.record_cpu --records 1 --healthz 0       # then --records 201
    (… --records 0 --healthz 1, then --healthz 401, for healthz's)
"""

from __future__ import annotations

import argparse
import os
import time

#: records sent before the measured ones (caches, prepared statements, the first deals' asks)
WARM = 100
#: games made for every run up to this many records
SENT = 1000


def measure(args: argparse.Namespace) -> None:
    """This process: send ``WARM + args.records`` records, then ``args.healthz`` health checks."""
    import redis

    from api.platform.db import scratch_postgres_database
    from bench.http_bench import record_bodies  # (absolute: run as a file, another checkout's)

    # (as many games whatever the count, so that two runs' difference holds no corpus building)
    bodies = record_bodies(games=WARM + max(args.records, SENT)).splitlines()
    os.environ.update(API_KEYS_REQUIRED="0", RATELIMIT_ENABLED="0", LOG_LEVEL="WARNING",
                      CELERY_BROKER_URL=args.broker)
    with scratch_postgres_database(args.database_url, f"record_cpu_{os.getpid()}") as url:
        os.environ["DATABASE_URL"] = url
        from api import create_app

        client = create_app().test_client()

        def send(index: int) -> None:
            response = client.post("/api/v1/records", data=bodies[index].replace("{{N}}", str(index)),
                                   content_type="application/json")
            assert response.status_code == 201, response.get_data(as_text=True)[:300]

        try:
            for index in range(WARM):
                send(index)
            started = time.process_time()
            for index in range(WARM, WARM + args.records):
                send(index)
            records = time.process_time() - started
            started = time.process_time()
            for _ in range(args.healthz):
                client.get("/api/v1/healthz")
            healthz = time.process_time() - started
        finally:
            redis.Redis.from_url(args.broker).flushdb()  # (the asks the records sent)
    for name, seconds, count in (("POST /records", records, args.records), ("GET /healthz", healthz, args.healthz)):
        if count:
            print(f"{name:14s} {1000 * seconds / count:7.3f} ms of CPU a request ({count})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--healthz", type=int, default=1000)
    # (bench.add_service_options's two options, written out: this file also runs against another
    # checkout's packages, whose bench may predate that function)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--broker", default=os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/14"))
    measure(parser.parse_args())


if __name__ == "__main__":
    main()
