"""Bulk re-verification figures: ``flask --app api records reverify`` on PostgreSQL.

Fills a scratch database with records made from the engine benchmark's corpus
(every rule set, with undos and take-backs; each game stored under many
players), then times the re-verification of all of them, first as a dry run
(read and replay only), then stamping every record with the engine version (the
command's default). Prints records and actions per second and what a million
records would take at that rate.

    python -m bench.reverify_bench                  # 20,000 records
    python -m bench.reverify_bench --records 2000   # quicker

Needs PostgreSQL (``--database-url``, default
``postgresql://postgres@127.0.0.1:5432/test``; a scratch database is created
and dropped).
"""

from __future__ import annotations

import argparse
import os
import time

from sqlalchemy import func, select

from api import create_app
from api.platform.db import get_db, scratch_postgres_database
from api.platform.models import Record
from api.records.reverify import reverify_records
from api.records.store import new_record
from verifier import replay

from . import add_service_options
from .corpus import VARIANTS, build_corpus

MILLION = 1_000_000


def record_rows(count: int, games: int) -> tuple[list[dict], int]:
    """``count`` records' column values (the corpus's games in turn, each under a new
    player) and the number of actions they hold."""
    verdicts = [replay(g.code, " ".join(g.moves)) for variant in VARIANTS for g in build_corpus(variant, games)]
    rows, actions = [], 0
    for i in range(count):
        verdict = verdicts[i % len(verdicts)]
        rows.append(new_record(verdict, {"player": f"bench-{i}"}))
        actions += verdict.actions
    return rows, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--games", type=int, default=100, help="games per rule set the records are made from")
    add_service_options(parser)
    args = parser.parse_args()
    rows, actions = record_rows(args.records, args.games)
    print(f"records reverify on PostgreSQL, one process: {len(rows):,} records of {actions:,} actions "
          f"({actions / len(rows):.0f} a record, {args.games} games per rule set under many players)")
    with scratch_postgres_database(args.database_url, f"bench_reverify_{os.getpid()}") as url:
        app = create_app({"DATABASE_URL": url, "LOG_LEVEL": "WARNING"})
        with app.app_context():
            database = get_db()
            with database.engine.begin() as connection:
                connection.execute(Record.__table__.insert(), rows)
            with database.sessions() as session:
                assert session.scalar(select(func.count()).select_from(Record)) == len(rows)
            for label, update in (("dry run (read and replay)", False), ("stamping each record", True)):
                with database.sessions() as session:
                    start = time.perf_counter()
                    changes = list(reverify_records(session, update=update))
                    seconds = time.perf_counter() - start
                assert not changes, changes[:3]  # the same engine gives the same results
                rate = len(rows) / seconds
                print(f"  {label:28s} {rate:>8,.0f} records/s  {actions / seconds:>10,.0f} actions/s  "
                      f"1,000,000 records in {MILLION / rate / 60:.1f} min")


if __name__ == "__main__":
    main()
