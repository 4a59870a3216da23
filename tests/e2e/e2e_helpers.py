"""Helpers for the browser tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine import Game

#: a player's name with markup in it (at most 32 characters, as the API allows)
MARKUP_NAME = '<img src=x onerror="alert(1)">&'
#: a name of one 32-character word; its player's page has ranked, copied and in-review records, statistics
#: and challenge ranks
LONG_NAME = "Hubert_Blaine_Wolfeschlegelstein"
#: today's Yukon relaxed daily challenge's deal (tests/e2e/conftest.py), which some tests make secret for a while
RELAXED_CODE = "YU1-R-AAAAAB7"


def todays_relaxed_daily(app: Any, **values: Any) -> int:
    """Today's Yukon relaxed daily challenge given ``values`` (its columns: ``attempts_required=True`` makes
    its deal secret, as a challenge played by attempts); its id."""
    from datetime import UTC, datetime

    from sqlalchemy import select

    from api.challenges.windows import window
    from api.platform.models import Challenge

    start = window("daily", datetime.now(UTC))[0]
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = session.scalars(select(Challenge).where(
            Challenge.variant == "yukon-relaxed", Challenge.kind == "daily", Challenge.starts_at == start)).one()
        for column, value in values.items():
            setattr(challenge, column, value)
        session.commit()
        return challenge.id


def play_randomly(code: str, length: int, seed: str) -> list[str]:
    """``length`` legal actions on ``code``'s deal chosen at random: each player of an attempt plays their own
    game (the same log twice would be a copy, off the board)."""
    game, rng = Game.from_code(code), random.Random(seed)
    return [str(game.push(rng.choice(list(game.legal_actions())))) for _ in range(length)]


def play_attempt(app: Any, name: str, challenge_id: int) -> dict[str, Any]:
    """A record of challenge ``challenge_id`` (secret: played by attempts) by a new player ``name``."""
    client = app.test_client()
    token = client.post("/api/v1/players", json={"name": name}).get_json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    started = client.post(f"/api/v1/challenges/{challenge_id}/attempts", headers=headers)
    assert started.status_code == 201, started.get_data(as_text=True)
    code = started.get_json()["code"]
    response = client.post("/api/v1/records", headers=headers, json={
        "code": code, "attempt": started.get_json()["attempt"], "moves": " ".join(play_randomly(code, 30, name))})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


@contextmanager
def secret_relaxed_daily(app: Any) -> Iterator[int]:
    """Today's Yukon relaxed daily challenge made one with attempts (its deal secret) for a while; its id."""
    try:
        yield todays_relaxed_daily(app, attempts_required=True)
    finally:
        todays_relaxed_daily(app, attempts_required=False)
