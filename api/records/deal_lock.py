"""One deal's submissions, in turn: each is judged by what the one before stored.

SQLite takes its write lock before the deal is read (:func:`lock_deal`). PostgreSQL takes no
lock at first: a record is stored only if its deal's version is still the one read with its
evidence (:func:`api.records.store.store_postgres`); a submission that lost that race holds the
deal (:func:`hold_deal`) and reads and judges again."""

from __future__ import annotations

import random
import time

from sqlalchemy import BigInteger, func, literal, select, text
from sqlalchemy.orm import Session

from api.fairplay.evidence import hash64


def lock_deal(session: Session) -> None:
    """SQLite: take the write lock before the deal is read (a write that changes nothing), so
    that submissions queue up and each judges by what the one before stored. PostgreSQL
    takes no lock at first: a record is stored only if its deal's version is still the one
    read with the evidence (:func:`api.boards.reads.store_statement`); a submission that lost that
    race holds the deal (:func:`hold_deal`) and reads and judges again."""
    if session.get_bind().dialect.name != "postgresql":
        session.execute(text("UPDATE line_bands SET band = band WHERE 0 = 1"))


def hold_deal(session: Session, code: str) -> None:
    """PostgreSQL: a transaction that holds the deal ``code`` until it ends (an advisory lock
    keyed by the deal), for a submission that lost a race for it: the others' writes give way
    (:func:`api.boards.reads.version_upsert` only tries the lock), and the submissions that wait for it
    take it in turn, so none loses again to a first attempt, however busy the deal.
    :class:`DealBusy` after :data:`HOLD_SECONDS`."""
    if session.get_bind().dialect.name != "postgresql":
        return
    autocommit = session.connection().get_execution_options().get("isolation_level") == "AUTOCOMMIT"
    # (the lost attempt wrote nothing, but in a transaction it holds the version's row: end it,
    # or it would wait for the holder that waits for that row)
    session.commit()
    if autocommit:
        session.connection(execution_options={"isolation_level": "READ COMMITTED"})
    # polled, not waited for: each statement stays short (a long one would count as a database
    # that stopped answering); the others' writes give way while it is held
    key, deadline = literal(deal_lock_key(code), BigInteger), time.monotonic() + HOLD_SECONDS
    while not session.scalar(select(func.pg_try_advisory_xact_lock(key))):
        if time.monotonic() > deadline:
            session.rollback()
            raise DealBusy(code)
        time.sleep(HOLD_POLL_SECONDS * (0.5 + random.random()))


#: longest wait for a deal other submissions hold (:func:`hold_deal`), in seconds
HOLD_SECONDS = 20
#: how often a submission that waits for a deal asks for it again (jittered), in seconds
HOLD_POLL_SECONDS = 0.03


class DealBusy(Exception):
    """The deal was held by other submissions for :data:`HOLD_SECONDS`."""


def deal_lock_key(code: str) -> int:
    """The advisory lock's key of a deal (PostgreSQL)."""
    return hash64(f"deal {code}")
