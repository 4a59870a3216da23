"""Hints that lead to a win over HTTP (issue 42, item 1): a player following ``POST /hint``
from the empty log wins, each hint's ``line_length`` one less than the one before (each
answer keeps the rest of its line, keyed by the position its hint reaches, and the next
hint there continues it); the deal's stored line serves from the start; a player who leaves
the line gets a new one that never goes back to a position already played.

The suite's default (embedded: searches run inside the request, node budgets only); every
test runs on SQLite and, with ``TEST_DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from api.platform.models import HintAnswer
from engine import Game
from verifier import replay

API = "/api/v1"
#: one deal of each rule set that the hint budget wins, and that budget; YU1-R-YTJ4DJX looped
#: (``T3:3C>T4 T4:3C>T3`` forever, after 60 hints) when every hint was a new search
WALKS = [("YU1-C-AAAAAAB", 10_000), ("YU1-R-YTJ4DJX", 10_000), ("FT1-N-AAAAAAB", 30_000)]


def player(client, name: str = "walker") -> dict[str, str]:
    token = client.post(f"{API}/players", json={"name": name}).get_json()["token"]
    return {"Authorization": f"Bearer {token}"}


def walk(client, headers, code, log=(), limit=400, win=True):
    """Follow the hints from ``log`` until there is none (``win``), or ``limit`` of them; the log
    played and each answer."""
    log, answers = list(log), []
    while len(answers) < limit:
        response = client.post(f"{API}/hint", json={"code": code, "moves": log}, headers=headers)
        assert response.status_code == 200, response.get_json()
        answer = response.get_json()
        assert answer["status"] == "winnable", answer
        answers.append(answer)
        if answer["hint"] is None:
            return log, answers
        log.append(answer["hint"])
    assert not win, f"no win after {limit} hints: ... {' '.join(log[-12:])}"
    return log, answers


@pytest.mark.parametrize(("code", "nodes"), WALKS)
def test_following_the_hints_wins_and_each_line_is_one_action_shorter(make_empty_app, code, nodes):
    app = make_empty_app(SOLVER_HINT_NODES=nodes)
    client = app.test_client()
    log, answers = walk(client, player(client), code)
    assert replay(code, log).won and answers[-1]["reason"].startswith("the game is already won")
    lengths = [a["line_length"] for a in answers[:-1]]
    assert lengths == list(range(lengths[0], 0, -1)), lengths
    assert [a["continued"] for a in answers[:-1]] == [False] + [True] * (len(lengths) - 1)
    assert all(a["search"]["nodes"] == 0 for a in answers[1:-1])  # continued: no search at all
    with app.extensions["api.platform.db"].sessions() as session:  # one answer a position, each keeping its line
        assert session.scalar(select(func.count()).select_from(HintAnswer)) == len(answers)


def test_from_the_start_the_hints_follow_the_deals_stored_line(make_empty_app):
    app = make_empty_app()
    client = app.test_client()
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
        admin = {"Authorization": f"Bearer {create_key(session, 'boss', admin=True)[1]}"}
    code = WALKS[0][0]
    deal = client.get(f"{API}/deals/{code}/solvability", headers=admin).get_json()
    log, answers = walk(client, player(client), code)
    assert log == deal["solution"].split()
    assert answers[0]["continued"] is True and answers[0]["line_length"] == deal["solution_actions"]


def test_a_player_who_leaves_the_line_gets_a_new_line_that_never_goes_back(make_empty_app):
    app = make_empty_app()
    client = app.test_client()
    headers = player(client)
    code = WALKS[1][0]
    log = walk(client, headers, code, limit=30, win=False)[0]
    game, path = Game.from_code(code), []
    for action in log[:-1]:
        path.append(game.position.layout())
        game.push_text(action)
    path.append(game.position.layout())
    hinted = log[-1]
    off = next(str(a) for a in game.legal_actions() if str(a) != hinted)
    game.push_text(off)
    log = log[:-1] + [off]
    answer = client.post(f"{API}/hint", json={"code": code, "moves": log}, headers=headers).get_json()
    assert answer["status"] == "winnable" and answer["continued"] is False and answer["search"]["nodes"] > 0
    with app.extensions["api.platform.db"].sessions() as session:
        line = session.scalar(select(HintAnswer.line).where(HintAnswer.log == " ".join(log)))
    assert line.split()[0] == answer["hint"]
    for action in line.split():
        game.push_text(action)
        assert game.position.layout() not in path
    assert game.is_won
    rest, answers = walk(client, headers, code, log)  # and from there, one action shorter each time
    lengths = [a["line_length"] for a in answers[:-1]]
    assert lengths == list(range(len(line.split()), 0, -1)) and replay(code, rest).won


def test_a_continued_hint_replaces_a_pending_search_and_the_line_stays_private(make_empty_app):
    """A search on its way for the position a hint leads to is answered by the hint's line at
    once; no answer shows the line itself (only its first action)."""
    from datetime import UTC, datetime

    import engine
    from api.records.store import log_hash

    app = make_empty_app()
    client = app.test_client()
    headers = player(client)
    code = WALKS[0][0]
    first = client.post(f"{API}/hint", json={"code": code, "moves": []}, headers=headers).get_json()
    after = first["hint"]
    solver = app.extensions["api.solver"]
    with app.extensions["api.platform.db"].sessions() as session:
        session.add(HintAnswer(code=code, log_hash=log_hash(after), log=after, after_actions=1,
                               budget=solver.hints.budget.key, engine_version=engine.__version__,
                               rules_version=engine.RULES_VERSION, status="pending", reason="queued", attempts=1,
                               requested_at=datetime.now(UTC), queued_at=datetime.now(UTC)))
        session.commit()
    second = client.post(f"{API}/hint", json={"code": code, "moves": [after]}, headers=headers)
    assert second.status_code == 200
    body = second.get_json()
    assert body["continued"] is True and body["line_length"] == first["line_length"] - 1
    assert "line" not in body and "next_key" not in body and "line" not in first


def there_and_back(game: Game) -> list[str]:
    """Two actions from ``game``'s position that come back to it (a card moved and moved back)."""
    before = game.position.layout()
    for there in map(str, game.legal_actions()):
        game.push_text(there)
        for back in map(str, game.legal_actions()):
            game.push_text(back)
            home = game.position.layout() == before
            game.undo()
            if home:
                game.undo()
                return [there, back]
        game.undo()
    raise AssertionError("no move comes back")


def test_a_new_line_joins_the_line_kept_for_the_position_its_hint_reaches(make_empty_app):
    """Someone asked about the log ``[a]`` before (their answer keeps a line of its own, here a
    longer one); a new search from the start whose hint is ``a`` takes that line as its rest,
    so the player who plays ``a`` gets an answer exactly one action shorter."""
    from datetime import UTC, datetime

    import engine
    from api.records.store import log_hash
    from verifier.solving import hint_code, position_key

    app = make_empty_app()
    client = app.test_client()
    code = WALKS[0][0]
    first = hint_code(code, [], max_nodes=10_000, budget_seconds=60)  # what the service's search will say
    after = [first.action]
    rest = list(hint_code(code, after, max_nodes=10_000, budget_seconds=60).line)
    game = Game.from_code(code)
    game.push_text(first.action)
    detour = [*there_and_back(game), *rest]  # a winning line too, two actions longer
    game.push_text(detour[0])
    now = datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        session.add(HintAnswer(code=code, log_hash=log_hash(first.action), log=first.action, after_actions=1,
                               budget=app.extensions["api.solver"].hints.budget.key,
                               engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
                               status="winnable", reason="kept", attempts=1, requested_at=now, solved_at=now,
                               line=" ".join(detour), next_key=position_key(game.position),
                               answer={"code": code, "status": "winnable", "hint": detour[0], "reason": "kept",
                                       "line_length": len(detour), "after_actions": 1, "continued": False,
                                       "search": None, "coverage": None}))
        session.commit()
    headers = player(client)
    start = client.post(f"{API}/hint", json={"code": code, "moves": []}, headers=headers).get_json()
    assert start["hint"] == first.action and start["continued"] is False
    assert start["line_length"] == len(detour) + 1 != len(first.line)
    log, answers = walk(client, headers, code, after)
    assert [a["line_length"] for a in answers[:-1]] == list(range(len(detour), 0, -1)) and replay(code, log).won


@pytest.mark.parametrize(("code", "nodes"), [WALKS[1]])
def test_on_the_worker_tier_the_walk_wins_with_one_search(tier, code, nodes):
    """Celery workers on Redis (the production layout): the first hint is a search on a worker
    (202, then polled), every hint after it continues its line at once (200, no worker needed)."""
    import time

    app = tier.app(SOLVER_HINT_NODES=nodes)
    worker = tier.worker()
    client = app.test_client()
    headers = player(client)
    response = client.post(f"{API}/hint", json={"code": code, "moves": []}, headers=headers)
    deadline = time.monotonic() + 90
    while response.status_code == 202:
        assert time.monotonic() < deadline, "the first hint is still pending"
        time.sleep(0.2)
        response = client.get(response.get_json()["poll"], headers=headers)
    first = response.get_json()
    assert first["status"] == "winnable" and first["continued"] is False
    worker.kill()  # the rest of the walk needs no worker
    log, answers = walk(client, headers, code, [first["hint"]])
    assert [a["line_length"] for a in answers[:-1]] == list(range(first["line_length"] - 1, 0, -1))
    assert replay(code, log).won


def test_any_log_that_reaches_the_position_continues_the_line(make_empty_app):
    """The line is kept by position, not by log text: another player whose log reaches the same
    cards another way (here with an undo and the action again) gets the same line's next action."""
    app = make_empty_app()
    client = app.test_client()
    code = WALKS[0][0]
    log, answers = walk(client, player(client), code, limit=6, win=False)
    other = [log[0], "U", *log[:5]]  # the same position after the fifth action, by another log
    assert replay(code, other).position.split()[:5] == replay(code, log[:5]).position.split()[:5]
    response = client.post(f"{API}/hint", json={"code": code, "moves": other}, headers=player(client, "another"))
    body = response.get_json()
    assert response.status_code == 200 and body["continued"] is True and body["after_actions"] == 7
    assert (body["hint"], body["line_length"]) == (log[5], answers[4]["line_length"] - 1)
