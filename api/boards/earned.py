"""Earned points for the records stored before they were kept (migration 0017): every
record's :func:`verifier.earned.of_row` from its stored log, a batch at a time."""

from __future__ import annotations

from sqlalchemy import BigInteger, Connection, Integer, String, Text, bindparam, column, select
from sqlalchemy import table as sql_table

from verifier.earned import of_row

#: records read and written per round trip by :func:`backfill`
BACKFILL_BATCH = 500


def backfill(connection: Connection) -> int:
    """Every record's earned points from its stored log, a batch at a time (migration 0017); how
    many changed. Written with its own table definitions, so that the migration runs it on its schema."""
    records = sql_table("records", column("id", BigInteger), column("code", String()), column("canonical", Text()),
                        column("score", Integer), column("takebacks", Integer), column("earned", Integer))
    after, changed = 0, 0
    while True:
        rows = connection.execute(select(records.c.id, records.c.code, records.c.canonical, records.c.score,
                                         records.c.takebacks, records.c.earned)
                                  .where(records.c.id > after).order_by(records.c.id).limit(BACKFILL_BATCH)).all()
        if not rows:
            return changed
        updates = [{"record_id": row.id, "value": value} for row in rows
                   if (value := of_row(row.code, row.canonical, row.score, row.takebacks)) != row.earned]
        if updates:
            connection.execute(records.update().where(records.c.id == bindparam("record_id"))
                               .values(earned=bindparam("value")), updates)
        changed += len(updates)
        after = rows[-1].id
