"""The benchmarks (``python -m bench`` runs the usual set; docs/performance.md reads them)."""

from __future__ import annotations

import argparse
import os


def add_service_options(parser: argparse.ArgumentParser, broker_db: int | None = None,
                        broker_help: str | None = None) -> None:
    """The options of a benchmark that runs the service: ``--database-url``, the PostgreSQL
    server its scratch databases are made on (``BENCH_DATABASE_URL``), and with ``broker_db``
    ``--broker``, a Redis database of the benchmark's own (``BENCH_BROKER_URL``)."""
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL",
                                                                 "postgresql://postgres@127.0.0.1:5432/test"))
    if broker_db is not None:
        parser.add_argument("--broker", default=os.environ.get("BENCH_BROKER_URL", f"redis://127.0.0.1:6379/{broker_db}"),
                            help=broker_help)


def drop_broker_keys(broker_url: str, prefix: str) -> None:
    """Delete a benchmark's keys (``prefix*``) from its Redis broker, never the whole database."""
    import redis  # (the service's package: only the benchmarks that run the worker tier need it)

    client = redis.Redis.from_url(broker_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
