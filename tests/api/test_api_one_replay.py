"""One replay a record, and one a hint request (issue 46, item 3): a submission plays its log
once (the verdict, the effective line and the earned points come from that pass), and a hint
request once (the lines it tries are played after the replayed game). A replay is counted
where a game made from a deal's code applies its first action (:meth:`engine.rules.Rules.run`
with nothing played yet): copies of a game and games from a position are not replays.

The suite's default (embedded: tasks and searches run inside the request); every test runs
on SQLite and, with ``TEST_DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import select

import engine
from api.fairplay.evidence import pack
from api.platform.models import Record
from engine.rules import Rules
from tests.api.test_api_hint_walks import WALKS, player, walk
from tests.engine.test_engine_layouts import random_game
from verifier import play

API = "/api/v1"

pytestmark = pytest.mark.skipif(engine.BUILD == "compiled", reason="counts calls into the pure-Python interpreter")


@pytest.fixture
def replays(monkeypatch):
    """The codes of the games played from their deal's start, in order, while the test runs."""
    started: list[str] = []
    run = Rules.run

    def counted(self, game, items, canonical, text_log=False):
        if game.actions == 0 and game.code is not None:
            started.append(str(game.code))
        return run(self, game, items, canonical, text_log)

    monkeypatch.setattr(Rules, "run", counted)
    return started


def forty_thieves_with_takebacks() -> list[str]:
    """A legal Forty Thieves log with take-backs (whose earned points need the log's own replay)."""
    code = "FT1-N-AAAAAAB"
    for seed in range(200):
        actions = random_game(code, seed, 200)
        if play(code, actions).verdict.takebacks:
            return actions
    raise AssertionError("no random Forty Thieves game with a take-back")


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "FT1-N-AAAAAAB"])
def test_a_submission_replays_its_log_once(app, replays, code):
    client = app.test_client()
    actions = forty_thieves_with_takebacks() if code.startswith("FT") else random_game(code, 3, 150)
    expected = play(code, actions, line=True)
    replays.clear()
    response = client.post(f"{API}/records", json={"code": code, "moves": actions, "player": "ann"})
    assert response.status_code == 201, response.get_json()
    assert replays == [code]
    with app.extensions["api.platform.db"].sessions() as session:
        [(line, earned)] = session.execute(select(Record.line, Record.earned)).all()
    assert expected.line is not None and earned == expected.line.earned
    assert line == pack(expected.positions)


def test_a_hint_request_replays_its_log_once(make_empty_app, replays):
    app = make_empty_app()
    client = app.test_client()
    headers = player(client)
    code = WALKS[0][0]
    log = walk(client, headers, code, limit=12, win=False)[0]  # (the first hint searched; the others continue it)
    replays.clear()
    response = client.post(f"{API}/hint", json={"code": code, "moves": log}, headers=headers)
    answer = response.get_json()
    assert response.status_code == 200 and answer["continued"] is True and answer["hint"]
    assert replays == [code]


def test_a_searched_hint_replays_its_log_once_in_the_request_and_once_in_the_search(make_empty_app, replays):
    """Embedded, the search runs in the request; on the worker tier it replays the stored log text, once."""
    app = make_empty_app()
    client = app.test_client()
    code = WALKS[0][0]
    log = random_game(code, 11, 6)
    replays.clear()
    response = client.post(f"{API}/hint", json={"code": code, "moves": log}, headers=player(client))
    answer = response.get_json()
    assert response.status_code == 200 and answer["status"] == "winnable" and answer["search"]["nodes"] > 0
    assert replays == [code, code]
