"""Record inserts on PostgreSQL: the SQLAlchemy Core path of ``POST /records``
(:func:`api.records.store.insert_record`: the record and its boards' upkeep in one statement,
autocommit) against the raw driver SQL it replaced (``exec_driver_sql`` of a hand-written
``INSERT … ON CONFLICT DO NOTHING RETURNING id``, then the upkeep, then a commit), in one
process, the paths alternating round by round. A second pair isolates the statement
itself: a Core insert against the same raw insert, neither with upkeep.

    python -m bench.insert_bench                       # 5 rounds of 1,000 inserts per path
    python -m bench.insert_bench --rounds 3 --per-round 500

Needs PostgreSQL (``--database-url``, default ``postgresql://postgres@127.0.0.1:5432/test``;
a scratch database is created and dropped). Warm process: each path runs once before timing.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql

from api import create_app
from api.boards import upkeep
from api.platform.db import get_db, scratch_postgres_database
from api.platform.models import Record
from api.records.store import SAME_GAME, insert_record, new_record
from verifier import replay

from . import add_service_options
from .corpus import VARIANTS, build_corpus

_COLUMNS = tuple(column.name for column in Record.__table__.columns if not column.primary_key)
#: the raw statement ``POST /records`` used on PostgreSQL before the Core path
RAW_INSERT = (f"INSERT INTO records ({', '.join(_COLUMNS)}) VALUES ({', '.join(f'%({c})s' for c in _COLUMNS)}) "
              f"ON CONFLICT ({', '.join(SAME_GAME)}) DO NOTHING RETURNING id")
CORE_INSERT = (postgresql.insert(Record.__table__)  # type: ignore[arg-type]
               .on_conflict_do_nothing(index_elements=list(SAME_GAME)).returning(Record.__table__.c.id))


def core_with_upkeep(connection: Connection, values: dict[str, Any]) -> None:
    assert insert_record(connection, values) is not None


def raw_with_upkeep(connection: Connection, values: dict[str, Any]) -> None:
    with connection.begin():
        new_id = connection.exec_driver_sql(RAW_INSERT, values).scalar()
        assert new_id is not None
        upkeep.record_stored(connection, new_id)


def core_insert_only(connection: Connection, values: dict[str, Any]) -> None:
    assert connection.execute(CORE_INSERT, values).scalar() is not None


def raw_insert_only(connection: Connection, values: dict[str, Any]) -> None:
    assert connection.exec_driver_sql(RAW_INSERT, values).scalar() is not None


#: (label, path, label, path, whether the second path runs in autocommit too): the old raw path
#: stored a record and its upkeep in one transaction; every other path commits each statement
PAIRS: tuple[tuple[str, Callable[..., None], str, Callable[..., None], bool], ...] = (
    ("Core, one statement with upkeep", core_with_upkeep, "raw SQL, then upkeep", raw_with_upkeep, False),
    ("Core insert only", core_insert_only, "raw insert only", raw_insert_only, True),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=1000)
    add_service_options(parser)
    args = parser.parse_args()
    verdicts = [replay(g.code, " ".join(g.moves)) for variant in VARIANTS for g in build_corpus(variant, 5)]
    players = (f"bench-{i}" for i in itertools.count())
    games = itertools.cycle(verdicts)
    fresh = lambda: new_record(next(games), {"player": next(players)})
    print(f"record inserts on PostgreSQL, one warm process: {args.rounds} rounds x {args.per_round} inserts a path, "
          f"paths alternating")
    with scratch_postgres_database(args.database_url, f"bench_insert_{os.getpid()}") as url:
        app = create_app({"DATABASE_URL": url, "LOG_LEVEL": "WARNING"})
        with app.app_context():
            engine = get_db().engine
            for label_a, path_a, label_b, path_b, autocommit in PAIRS:
                times: dict[str, list[float]] = {label_a: [], label_b: []}
                options = {"isolation_level": "AUTOCOMMIT"}
                with engine.connect().execution_options(**options) as connection_a, engine.connect() as connection_b:
                    connection_b = connection_b.execution_options(**options) if autocommit else connection_b
                    runs = ((label_a, path_a, connection_a), (label_b, path_b, connection_b))
                    for _label, path, connection in runs:  # warm: statements built, prepared by the driver
                        for _ in range(20):
                            path(connection, fresh())
                    for round_number in range(args.rounds):
                        for label, path, connection in runs if round_number % 2 == 0 else runs[::-1]:
                            rows = [fresh() for _ in range(args.per_round)]
                            start = time.perf_counter()
                            for values in rows:
                                path(connection, values)
                            times[label].append((time.perf_counter() - start) / args.per_round * 1e6)
                a, b = statistics.median(times[label_a]), statistics.median(times[label_b])
                print(f"  {label_a:34s} {a:8.1f} µs an insert (median of rounds)")
                print(f"  {label_b:34s} {b:8.1f} µs an insert   Core/raw: {a / b:.3f}")


if __name__ == "__main__":
    main()
