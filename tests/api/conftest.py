"""Fixtures for the API tests: factory_boy factories for the models, and legal
logs played from the engine's own list of legal actions."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import factory
import pytest
from factory.alchemy import SQLAlchemyModelFactory

import engine
from api.platform.models import Record
from engine import Game, GameCode

START = datetime(2025, 1, 1, tzinfo=UTC)


class RecordFactory(SQLAlchemyModelFactory):
    """A stored record. The log is a stand-in (unique per record): these rows feed
    the queries (leaderboard, listing); submissions go through the API."""

    class Meta:
        model = Record
        sqlalchemy_session_persistence = "commit"

    class Params:
        game_code = "YU1-C-AAAAAAB"

    player = factory.Sequence(lambda n: f"player{n}")
    code = factory.LazyAttribute(lambda o: str(GameCode.from_text(o.game_code)))
    variant = factory.LazyAttribute(lambda o: GameCode.from_text(o.game_code).variant)
    number = factory.LazyAttribute(lambda o: GameCode.from_text(o.game_code).number)
    canonical = factory.Sequence(lambda n: f"T{n % 7 + 1}>F # stand-in {n}")
    log_hash = factory.LazyAttribute(lambda o: hashlib.sha256(o.canonical.encode()).hexdigest())
    won = False
    score = 0
    moves = 10
    actions = factory.LazyAttribute(lambda o: o.moves)
    undos = 0
    takebacks = 0
    foundation_cards = factory.LazyAttribute(lambda o: (52 if o.variant != "forty-thieves" else 104) if o.won else 0)
    elapsed_ms = None
    client = None
    engine_version = engine.__version__
    rules_version = engine.RULES_VERSION
    # strictly increasing, so that "earlier submission" is well defined
    received_at = factory.Sequence(lambda n: START + timedelta(seconds=n))
    verified_at = factory.LazyAttribute(lambda o: o.received_at)
    submitted_by = None
    status = "visible"


@pytest.fixture
def records(app: Any) -> Iterator[type[RecordFactory]]:
    """``records(...)`` / ``records.create_batch(...)``: rows in the app's database."""
    session = app.extensions["api.platform.db"].sessions()
    RecordFactory._meta.sqlalchemy_session = session
    RecordFactory.reset_sequence()
    try:
        yield RecordFactory
    finally:
        RecordFactory._meta.sqlalchemy_session = None
        session.close()


def play_legal(code: str, length: int, skip: int = 0) -> list[str]:
    """``length`` legal actions on ``code``'s deal: each time the first legal action
    not undone right away, after taking the ``skip``-th one first (to vary logs)."""
    game = Game.from_code(code)
    played: list[str] = []
    while len(played) < length:
        options = game.legal_actions()
        assert options, f"{code}: no legal action after {played}"
        action = options[min(skip, len(options) - 1)] if not played else options[0]
        played.append(str(game.push(action)))
    return played


@pytest.fixture
def legal_log() -> Any:
    """``legal_log(code, length, skip=0)``: a legal log as canonical text actions."""
    return play_legal


@pytest.fixture
def count_records(app: Any) -> Any:
    """``count_records()``: how many rows the records table holds."""
    from sqlalchemy import func, select

    def count() -> int:
        with app.extensions["api.platform.db"].sessions() as session:
            return session.scalar(select(func.count()).select_from(Record))

    return count


# -- the worker tier (Celery on the machine's Redis) ---------------------------

@pytest.fixture
def tier(empty_database_url: str) -> Iterator[Any]:
    """A :class:`tests.api.celery_tier.Tier` on Redis with a database of its own (PostgreSQL
    when ``TEST_DATABASE_URL`` is set, else SQLite): ``tier.app(**config)``,
    ``tier.worker(concurrency=1)``; workers are killed and Redis keys deleted after the test."""
    from tests.api.celery_tier import BROKER_URL, Tier, require_broker

    require_broker(BROKER_URL, "Redis")
    made = Tier(empty_database_url)
    try:
        yield made
    finally:
        made.close()
