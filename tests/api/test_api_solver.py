"""The solver behind the API: ``GET /deals/{code}/solvability`` (stored answers, pending
rows, lost searches started again), ``POST /hint`` and ``GET /hints/{id}``.

These tests run in the embedded mode (no ``CELERY_BROKER_URL``, the suite's
default): the tasks run eagerly inside the request, with node budgets, so that
they are fast and deterministic. ``test_api_worker_tier.py`` runs them on real
Celery workers.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import inspect, select
from sqlalchemy.exc import IntegrityError

import api.records.store
import api.solver.hints
import api.solver.queue
import api.solver.searches
import engine
from api.platform.config import ConfigError, load_settings
from api.platform.db import Database, alembic_config
from api.platform.models import Solvability
from api.solver.queue import Solver
from api.solver.searches import MAX_ATTEMPTS
from tests.api.solver_places import places_taken
from verifier import replay
from verifier.solving import solve_code

API = "/api/v1"
PROBLEMS = "https://solitaire-verifier.example/problems/"
WINNABLE_YUKON = "YU1-C-AAAAAAB"           # won after about 1,300 nodes
WINNABLE_FORTY = "FT1-N-AAAAAAB"           # won after about 16,000 nodes
UNWINNABLE = "YU1-C-RNXZ6DA"               # 8D is stuck above 9C, 9S and 2D: lost at the start
HARD = "FT1-N-K37R6LJ"                     # undecided after 2,000,000 positions
HARD_TOO = "FT1-N-FBGPQZ6"
BOTH = pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)
#: a worker process needs about a second to start; a search runs its budget: wait this long at most
WAIT_SECONDS = 60


def credentials(app) -> dict[str, str]:
    """An admin key and a player token in ``app``'s database, made once per app: the
    solvability answers here are read as an admin (who sees the line) and hints asked as a player."""
    made = app.extensions.setdefault("test_credentials", {})
    if not made:
        from api.platform.auth import create_key
        from api.players.accounts import register

        with app.extensions["api.platform.db"].sessions() as session:
            made["admin"] = create_key(session, f"admin-{uuid.uuid4().hex[:12]}", admin=True)[1]
            made["player"] = register(session, f"solver-fan-{uuid.uuid4().hex[:8]}")[1]
            session.commit()
    return made


def solvability(client, code: str, **kwargs):
    headers = {"Authorization": f"Bearer {credentials(client.application)['admin']}", **kwargs.pop("headers", {})}
    return client.get(f"{API}/deals/{code}/solvability", headers=headers, **kwargs)


def post_hint(client, **kwargs):
    headers = {"Authorization": f"Bearer {credentials(client.application)['player']}", **kwargs.pop("headers", {})}
    return client.post(f"{API}/hint", headers=headers, **kwargs)


def wait_for_answer(client, code: str, timeout: float = WAIT_SECONDS):
    """Ask again until the answer is no longer pending (every 0.1 s; Retry-After is for real clients)."""
    deadline = time.monotonic() + timeout
    while True:
        response = solvability(client, code)
        if response.status_code != 202:
            return response
        assert response.get_json()["status"] == "pending"
        assert time.monotonic() < deadline, f"{code}: still pending after {timeout} s"
        time.sleep(0.1)


def rows(app) -> list[Solvability]:
    with app.extensions["api.platform.db"].sessions() as session:
        return list(session.scalars(select(Solvability).order_by(Solvability.id)))


def add_row(app, **values) -> Solvability:
    """A row as a request would have written it (for lost and failed searches)."""
    solver: Solver = app.extensions["api.solver"]
    code = engine.GameCode.from_text(values.pop("code", WINNABLE_YUKON))
    moment = datetime.now(UTC)
    row = Solvability(code=str(code), variant=code.variant, budget=solver.deals.budget.key,
                      budget_seconds=solver.deals.budget.seconds, budget_nodes=solver.deals.budget.nodes,
                      engine_version=engine.__version__, rules_version=engine.RULES_VERSION, status="pending",
                      reason="the search is queued or running (attempt 1 of at most 3)", verified=False, attempts=1,
                      requested_at=moment, queued_at=moment)
    for name, value in values.items():
        setattr(row, name, value)
    with app.extensions["api.platform.db"].sessions() as session:
        session.add(row)
        session.commit()
    return row


@pytest.fixture
def no_search(monkeypatch):
    """Fail the test if a search starts (inside the request) from now on."""

    def refuse(*args, **kwargs):
        raise AssertionError("a search was started")

    monkeypatch.setattr(api.solver.searches, "solve_code", refuse)


# -- answers ---------------------------------------------------------------

@pytest.mark.parametrize("code, nodes", [(WINNABLE_YUKON, 10000), ("YU1-R-AAAAAAB", 10000), ("YU1-C-AAAAAAC", 10000),
                                         (WINNABLE_FORTY, 30000)])
def test_a_winnable_deal_comes_with_a_solution_that_replays_as_a_win(make_empty_app, code, nodes):
    client = make_empty_app(SOLVER_BUDGET_NODES=nodes).test_client()
    response = solvability(client, code.lower())
    assert response.status_code == 200
    body = response.get_json()
    assert (body["code"], body["status"], body["verified"]) == (code, "winnable", True)
    verdict = replay(code, body["solution"])
    assert verdict.legal and verdict.won, verdict.error
    assert verdict.canonical_text == body["solution"]  # the canonical log
    assert body["solution_actions"] == verdict.actions == len(body["solution"].split())
    assert body["reason"] == f"a winning line of {body['solution_actions']} actions"
    assert 0 < body["search"]["nodes"] <= nodes and body["search"]["positions"] > 0
    assert body["budget"] == {"seconds": 60.0, "nodes": nodes}
    assert (body["engine_version"], body["rules_version"]) == (engine.__version__, engine.RULES_VERSION)
    assert datetime.fromisoformat(body["requested_at"]) <= datetime.fromisoformat(body["solved_at"])


def test_an_unwinnable_deal_says_what_the_proof_covered(client):
    body = solvability(client, UNWINNABLE).get_json()
    assert body["status"] == "unwinnable"
    assert (body["solution"], body["solution_actions"], body["verified"]) == (None, None, False)
    assert "no position reachable from here is won" in body["reason"]
    assert "foundation to column (take-backs)" in body["coverage"]["moves"]
    assert body["coverage"]["left_out"] == []
    assert body["coverage"]["undo"].startswith("undo:")


def test_a_deal_undecided_within_the_budget_is_unknown_with_the_reason(make_empty_app):
    client = make_empty_app(SOLVER_BUDGET_NODES=50).test_client()
    body = solvability(client, HARD).get_json()
    assert (body["status"], body["solution"]) == ("unknown", None)
    assert "the node budget of 50 positions ran out" in body["reason"]
    assert body["search"]["nodes"] == 50


def test_answers_are_stored_and_served_from_the_database(app, client, monkeypatch):
    first = solvability(client, WINNABLE_YUKON)
    assert first.status_code == 200
    monkeypatch.setattr(api.solver.searches, "solve_code", lambda *a, **k: pytest.fail("searched again"))
    again = solvability(client, " yu1-c-aaaaaab ")
    assert again.status_code == 200
    assert again.get_json() == first.get_json()
    [row] = rows(app)
    assert (row.code, row.status, row.attempts, row.budget) == (WINNABLE_YUKON, "winnable", 1, "60s+10000n")
    assert row.statistics == first.get_json()["search"]


def test_each_budget_and_engine_version_has_its_own_answer(make_empty_app, make_app, monkeypatch):
    small = make_empty_app(SOLVER_BUDGET_NODES=50)
    assert solvability(small.test_client(), WINNABLE_FORTY).get_json()["status"] == "unknown"
    large = make_app(SOLVER_BUDGET_NODES=30000)  # the same database
    assert solvability(large.test_client(), WINNABLE_FORTY).get_json()["status"] == "winnable"
    assert solvability(small.test_client(), WINNABLE_FORTY).get_json()["status"] == "unknown"  # still stored
    monkeypatch.setattr(engine, "__version__", "99.0.0")
    body = solvability(large.test_client(), WINNABLE_FORTY).get_json()
    assert (body["status"], body["engine_version"]) == ("winnable", "99.0.0")
    assert [(r.budget, r.engine_version, r.status) for r in rows(large)] == [
        ("60s+50n", "1.0.0", "unknown"), ("60s+30000n", "1.0.0", "winnable"), ("60s+30000n", "99.0.0", "winnable")]


def test_bad_codes_and_parameters_are_refused(client):
    response = solvability(client, "YU1-C-AAAAAA8")
    assert response.status_code == 422
    body = response.get_json()
    assert body["type"] == PROBLEMS + "invalid-code"
    assert body["errors"][0]["part"] == "deal" and body["errors"][0]["position"] == 13
    response = solvability(client, WINNABLE_YUKON, query_string={"budget": "100"})
    assert response.status_code == 422
    assert response.get_json()["errors"] == [{"field": "budget", "message": "Unknown field."}]
    assert client.post(f"{API}/deals/{WINNABLE_YUKON}/solvability").status_code == 405


def test_the_table_allows_one_row_per_code_budget_and_engine(app):
    add_row(app)
    with pytest.raises(IntegrityError):
        add_row(app)
    add_row(app, budget="1s")  # another budget
    add_row(app, code=UNWINNABLE)


# -- lost and failing searches (inside the request) --------------------------

def test_a_stale_pending_row_is_claimed_by_one_request_and_searched_again(app, client):
    add_row(app, queued_at=datetime.now(UTC) - timedelta(hours=1))
    body = solvability(client, WINNABLE_YUKON).get_json()
    assert body["status"] == "winnable"
    [row] = rows(app)
    assert row.attempts == 2


def test_a_fresh_pending_row_is_left_to_its_search(app, client, no_search):
    add_row(app)
    response = solvability(client, WINNABLE_YUKON)
    assert response.status_code == 202 and response.headers["Retry-After"] == "5"
    assert response.get_json()["reason"] == "the search is queued or running (attempt 1 of at most 3)"
    assert rows(app)[0].attempts == 1


def test_a_row_released_after_a_failure_is_searched_again_at_once(app, client):
    add_row(app, queued_at=None, reason="attempt 1 failed: BrokenPipeError: gone")
    assert solvability(client, WINNABLE_YUKON).get_json()["status"] == "winnable"
    assert rows(app)[0].attempts == 2


def test_a_search_that_keeps_failing_ends_unknown_with_the_error(app, client, monkeypatch):
    def broken(*args, **kwargs):
        raise MemoryError("the table did not fit")

    monkeypatch.setattr(api.solver.searches, "solve_code", broken)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        response = solvability(client, WINNABLE_YUKON)
        assert response.status_code == 500
        [row] = rows(app)
        assert row.attempts == attempt
    assert row.status == "unknown" and row.queued_at is not None
    body = solvability(client, WINNABLE_YUKON).get_json()
    assert body["status"] == "unknown"
    assert body["reason"] == "the search failed 3 times; last: MemoryError: the table did not fit"


def test_a_lost_search_is_given_up_after_the_last_attempt(app, client, no_search):
    add_row(app, attempts=MAX_ATTEMPTS, queued_at=datetime.now(UTC) - timedelta(hours=1),
            reason="the search is queued or running (attempt 3 of at most 3)")
    response = solvability(client, WINNABLE_YUKON)
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "unknown" and body["solved_at"] is not None
    assert body["reason"].startswith("the search did not end after 3 attempts")


def test_an_answer_is_stored_once(app):
    row = add_row(app)
    solver: Solver = app.extensions["api.solver"]
    answer = solve_code(WINNABLE_YUKON, max_nodes=10000).to_json()
    assert solver.store(solver.deals, row.id, answer) is True
    assert solver.store(solver.deals, row.id, {**answer, "status": "unknown", "reason": "late"}) is False
    assert rows(app)[0].status == "winnable"
    with pytest.raises(ValueError, match="not a storable answer"):
        solver.store(solver.deals, row.id, {**answer, "verified": False})


# -- switched off, rate limits -------------------------------------------------

def test_with_the_solver_switched_off_stored_answers_are_still_served(app, client, make_app):
    assert solvability(client, WINNABLE_YUKON).status_code == 200
    client = make_app(SOLVER_ENABLED=False).test_client()  # the same database
    assert solvability(client, WINNABLE_YUKON).get_json()["status"] == "winnable"
    response = solvability(client, UNWINNABLE)
    assert response.status_code == 503
    assert "switched off" in response.get_json()["detail"]
    response = post_hint(client, json={"code": WINNABLE_YUKON, "moves": ""})
    assert response.status_code == 503
    assert post_hint(client, json={"code": "nope", "moves": ""}).status_code == 422
    assert [row.code for row in rows(app)] == [WINNABLE_YUKON]


def test_searches_count_against_the_solver_rate_limit_and_stored_answers_do_not(make_empty_app):
    client = make_empty_app(RATELIMIT_ENABLED=True, RATELIMIT_SOLVER="2 per minute").test_client()
    assert solvability(client, WINNABLE_YUKON).status_code == 200       # search 1
    for _ in range(3):
        assert solvability(client, WINNABLE_YUKON).status_code == 200   # stored: free
    assert post_hint(client, json={"code": WINNABLE_YUKON, "moves": ""}).status_code == 200  # the deal's line: free
    assert post_hint(client, json={"code": UNWINNABLE, "moves": ""}).status_code == 200  # search 2
    assert post_hint(client, json={"code": UNWINNABLE, "moves": ""}).status_code == 200  # stored
    for response in (post_hint(client, json={"code": UNWINNABLE, "moves": "T2:TH>T1"}),
                     solvability(client, UNWINNABLE)):
        assert response.status_code == 429
        assert response.get_json()["type"] == PROBLEMS + "rate-limited"
        assert "the solver's limit is 2 per 1 minute" in response.get_json()["detail"]
        assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert solvability(client, WINNABLE_YUKON).status_code == 200
    other = make_empty_app(RATELIMIT_ENABLED=True, RATELIMIT_SOLVER="2 per minute").test_client()
    assert solvability(other, UNWINNABLE).status_code == 200  # another app, another count (memory://)


# -- hints -----------------------------------------------------------------------

def hint(client, code, moves):
    return post_hint(client, json={"code": code, "moves": moves})


def poll_hint(client, path):
    return client.get(path, headers={"Authorization": f"Bearer {credentials(client.application)['player']}"})


@pytest.mark.parametrize("moves", ["", [], "T7:TS>T2 T6:6D>T2", ["T7:TS>T2", {"from": "T6", "card": "6D", "to": "T2"}]])
def test_a_hint_is_the_next_action_of_a_winning_line(client, moves):
    response = hint(client, WINNABLE_YUKON.lower(), moves)
    assert response.status_code == 200
    body = response.get_json()
    played = moves.split() if isinstance(moves, str) else moves
    assert (body["code"], body["status"], body["after_actions"]) == (WINNABLE_YUKON, "winnable", len(played))
    assert body["hint"] and body["line_length"] >= 1
    after = replay(WINNABLE_YUKON, [*played, body["hint"]])
    assert after.legal, after.error
    assert solve_code(WINNABLE_YUKON, after.canonical, max_nodes=5000).status == "winnable"
    left_out = body["coverage"]["left_out"]
    if played:  # undo could go back into the log: that is not covered
        assert len(left_out) == 1 and left_out[0].startswith("undo back into the given log")
    else:
        assert left_out == []


def test_a_hint_for_a_won_game_says_so(client):
    solution = solve_code(WINNABLE_YUKON, max_nodes=10000).actions
    body = hint(client, WINNABLE_YUKON, " ".join(solution)).get_json()
    assert (body["status"], body["hint"], body["line_length"]) == ("winnable", None, None)
    assert body["reason"] == "the game is already won: there is nothing left to play"
    assert body["after_actions"] == len(solution)


def test_no_hint_when_the_deal_is_lost_or_undecided(client):
    body = hint(client, UNWINNABLE, "").get_json()
    assert (body["status"], body["hint"]) == ("unwinnable", None)
    assert body["reason"].startswith("no winning line from here")
    body = hint(client, UNWINNABLE, "T2:TH>T1").get_json()
    assert body["status"] == "unwinnable" and "undo back into the log was not examined" in body["reason"]
    assert body["coverage"]["left_out"][0].startswith("undo back into the given log")
    body = hint(client, HARD, "S").get_json()
    assert (body["status"], body["hint"]) == ("unknown", None)
    assert body["reason"].startswith("no hint: the node budget of 10000 positions ran out")


def test_an_illegal_log_is_422_with_the_verdict(client):
    response = hint(client, WINNABLE_YUKON, "T7:TS>T2 T7:TS>T1")
    assert response.status_code == 422
    body = response.get_json()
    assert body["type"] == PROBLEMS + "illegal-log"
    assert (body["verdict"]["error"]["index"], body["verdict"]["error"]["kind"]) == (1, "rule")
    assert body["verdict"]["canonical"] == "T7:TS>T2"
    response = hint(client, WINNABLE_YUKON, "T7>>T2")
    assert response.get_json()["verdict"]["error"]["kind"] == "syntax"
    finnish = post_hint(client, json={"code": WINNABLE_YUKON, "moves": "T7:TS>T2 T7:TS>T1"},
                          headers={"Accept-Language": "fi"})
    assert finnish.status_code == 422 and finnish.headers["Content-Language"] == "fi"
    assert finnish.get_json()["verdict"]["error"]["message"] != body["verdict"]["error"]["message"]


@pytest.mark.parametrize("body, field", [
    ({"code": WINNABLE_YUKON}, "moves"),
    ({"moves": ""}, "code"),
    ({"code": WINNABLE_YUKON, "moves": 7}, "moves"),
    ({"code": WINNABLE_YUKON, "moves": "", "budget_seconds": 60}, "budget_seconds"),
])
def test_hint_requests_are_validated(client, body, field):
    response = post_hint(client, json=body)
    assert response.status_code == 422
    assert field in [error["field"] for error in response.get_json()["errors"]]


def test_hint_bodies_must_be_json_and_codes_valid(client):
    assert post_hint(client, data="code=x", content_type="text/plain").status_code == 415
    response = hint(client, "FT1-X-AAAAAAB", "")
    assert response.status_code == 422 and response.get_json()["type"] == PROBLEMS + "invalid-code"


# -- schema and settings ---------------------------------------------------------

@BOTH
def test_migration_0003_adds_and_removes_the_solvability_table(empty_database_url):
    database = Database(empty_database_url)
    try:
        database.upgrade("0002")
        with database.engine.connect() as connection:
            assert "solvability" not in inspect(connection).get_table_names()
        database.upgrade()
        with database.engine.connect() as connection:
            columns = {c["name"] for c in inspect(connection).get_columns("solvability")}
        assert {"code", "budget", "status", "solution", "statistics", "coverage", "attempts", "queued_at"} <= columns
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0002")
        with database.engine.connect() as connection:
            assert "solvability" not in inspect(connection).get_table_names()
    finally:
        database.dispose()


def test_solver_settings_have_defaults(tmp_path):
    settings = load_settings(str(tmp_path), environ={})
    assert {name: settings[name] for name in settings if name.startswith("SOLVER_")} == {
        "SOLVER_ENABLED": True, "SOLVER_BUDGET_SECONDS": 10.0, "SOLVER_BUDGET_NODES": None,
        "SOLVER_QUEUE_SIZE": 64, "SOLVER_STALE_SECONDS": 300.0, "SOLVER_HINT_SECONDS": 2.0,
        "SOLVER_HINT_NODES": None, "SOLVER_PENDING_PER_CLIENT": 2, "SOLVER_UNKNOWN_SECONDS": 86400.0,
        "SOLVER_HINT_KEEP_SECONDS": 3600.0, "SOLVER_WORKER_MAX_MEMORY_MB": 1500, "SOLVER_TASK_PLACES": 2}
    assert {name: settings[name] for name in settings if name.startswith("CELERY_")} == {
        "CELERY_BROKER_URL": None, "CELERY_RESULT_BACKEND": None, "CELERY_QUEUE_PREFIX": "solitaire-verifier",
        "CELERY_VISIBILITY_TIMEOUT": 600.0}
    assert settings["RATELIMIT_SOLVER"] == "30 per minute"
    env = {"SOLVER_BUDGET_SECONDS": "0.5", "SOLVER_BUDGET_NODES": "2000", "SOLVER_HINT_NODES": "none",
           "SOLVER_ENABLED": "off", "CELERY_BROKER_URL": "redis://cache:6379/3", "SOLVER_PENDING_PER_CLIENT": "5"}
    settings = load_settings(str(tmp_path), environ=env)
    assert (settings["SOLVER_BUDGET_SECONDS"], settings["SOLVER_BUDGET_NODES"], settings["SOLVER_HINT_NODES"],
            settings["SOLVER_ENABLED"], settings["SOLVER_PENDING_PER_CLIENT"]) == (0.5, 2000, None, False, 5)
    assert settings["CELERY_RESULT_BACKEND"] == "redis://cache:6379/3"  # results next to the tasks
    rabbit = load_settings(str(tmp_path), environ={"CELERY_BROKER_URL": "amqp://guest:guest@127.0.0.1:5672//"})
    assert (rabbit["CELERY_BROKER_URL"], rabbit["CELERY_RESULT_BACKEND"]) == (
        "amqp://guest:guest@127.0.0.1:5672//", "rpc://")


@pytest.mark.parametrize("env, name", [
    ({"CELERY_BROKER_URL": "http://127.0.0.1:6379"}, "CELERY_BROKER_URL"),
    ({"CELERY_BROKER_URL": "127.0.0.1:6379"}, "CELERY_BROKER_URL"),
    ({"CELERY_VISIBILITY_TIMEOUT": "10"}, "CELERY_VISIBILITY_TIMEOUT"),  # not longer than a search's hard limit
    ({"CELERY_QUEUE_PREFIX": "a b"}, "CELERY_QUEUE_PREFIX"),
    ({"SOLVER_PENDING_PER_CLIENT": "0"}, "SOLVER_PENDING_PER_CLIENT"),
    ({"SOLVER_UNKNOWN_SECONDS": "never"}, "SOLVER_UNKNOWN_SECONDS"),
    ({"SOLVER_HINT_KEEP_SECONDS": "0"}, "SOLVER_HINT_KEEP_SECONDS"),
    ({"SOLVER_WORKER_MAX_MEMORY_MB": "lots"}, "SOLVER_WORKER_MAX_MEMORY_MB"),
    ({"SOLVER_BUDGET_SECONDS": "0"}, "SOLVER_BUDGET_SECONDS"),
    ({"SOLVER_BUDGET_SECONDS": "inf"}, "SOLVER_BUDGET_SECONDS"),
    ({"SOLVER_BUDGET_NODES": "0"}, "SOLVER_BUDGET_NODES"),
    ({"SOLVER_HINT_SECONDS": "soon"}, "SOLVER_HINT_SECONDS"),
    ({"SOLVER_QUEUE_SIZE": "0"}, "SOLVER_QUEUE_SIZE"),
    ({"SOLVER_STALE_SECONDS": "10"}, "SOLVER_STALE_SECONDS"),  # not longer than the 10 s budget
    ({"SOLVER_ENABLED": "perhaps"}, "SOLVER_ENABLED"),
    ({"RATELIMIT_SOLVER": "lots"}, "RATELIMIT_SOLVER"),
])
def test_bad_solver_settings_name_the_variable(tmp_path, env, name):
    with pytest.raises(ConfigError, match=name):
        load_settings(str(tmp_path), environ=env)


# -- the worker tier's side, in the embedded mode ----------------------------------

def test_racing_first_requests_share_one_search(make_empty_app):
    app = make_empty_app(TRUSTED_PROXIES=1)
    solver: Solver = app.extensions["api.solver"]
    sent = []
    send = solver.send

    def counting_send(kind, budget, keyed):
        sent.append(kind)
        return send(kind, budget, keyed)

    solver.send = counting_send
    barrier = threading.Barrier(8)
    statuses = []

    def ask(number):
        client = app.test_client()
        barrier.wait()
        # (no key: each asker is a client of its own, by its IP)
        statuses.append(client.get(f"{API}/deals/{WINNABLE_YUKON}/solvability",
                                   headers={"X-Forwarded-For": f"10.0.0.{number}"}).status_code)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(statuses) == 8 and set(statuses) <= {200, 202}
    assert len(sent) == 1
    [row] = rows(app)
    assert (row.attempts, row.status) == (1, "winnable")
    assert places_taken(solver) == 0


def test_a_hint_has_an_id_to_poll_and_is_stored(client, monkeypatch):
    response = hint(client, WINNABLE_YUKON, "T7:TS>T2")
    assert response.status_code == 200  # the embedded mode searched it at once
    body = response.get_json()
    assert body["poll"] == f"{API}/hints/{body['id']}"
    polled = poll_hint(client, body["poll"])
    assert polled.status_code == 200 and polled.get_json() == body
    monkeypatch.setattr(api.solver.hints, "hint_played", lambda *a, **k: pytest.fail("searched again"))
    again = hint(client, WINNABLE_YUKON, [{"from": "T7", "card": "TS", "to": "T2"}])  # the same canonical log
    assert again.status_code == 200 and again.get_json() == body


def test_an_unknown_hint_id_is_404(client):
    for path in (f"{API}/hints/1", f"{API}/hints/9223372036854775807", f"{API}/hints/h_" + "A" * 22,
                 f"{API}/hints/99999999999999999999999", f"{API}/hints/abc", f"{API}/hints/" + "x" * 300):
        response = poll_hint(client, path)
        assert response.status_code == 404
        assert "there is no such hint for this player" in response.get_json()["detail"]


def test_a_pending_hint_is_answered_202_with_where_to_poll(app, client):
    from api.platform.models import HintAnswer

    moment = datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        row = HintAnswer(code=WINNABLE_YUKON, log_hash=api.records.store.log_hash(""), log="", after_actions=0,
                         budget=app.extensions["api.solver"].hints.budget.key, engine_version=engine.__version__,
                         rules_version=engine.RULES_VERSION, status="pending", reason="queued", attempts=1,
                         requested_at=moment, queued_at=moment)
        session.add(row)
        session.commit()
    token = hint(client, WINNABLE_YUKON, "").get_json()["id"]
    for response in (hint(client, WINNABLE_YUKON, ""), poll_hint(client, f"{API}/hints/{token}")):
        assert response.status_code == 202
        assert response.headers["Location"] == f"{API}/hints/{token}" and response.headers["Retry-After"] == "5"
        body = response.get_json()
        assert (body["status"], body["hint"], body["search"], body["id"]) == ("pending", None, None, token)


def test_unknown_answers_expire_and_the_deal_is_searched_again(make_empty_app):
    app = make_empty_app(SOLVER_BUDGET_NODES=50, SOLVER_UNKNOWN_SECONDS=60)
    client = app.test_client()
    assert solvability(client, WINNABLE_FORTY).get_json()["status"] == "unknown"
    with app.extensions["api.platform.db"].sessions() as session:  # a minute passes
        session.scalars(select(Solvability)).one().solved_at -= timedelta(seconds=61)
        session.commit()
    body = solvability(client, WINNABLE_FORTY).get_json()
    assert body["status"] == "unknown"
    [row] = rows(app)
    assert row.attempts == 1 and datetime.now(UTC) - row.solved_at < timedelta(seconds=30)  # a new search


def test_the_cleanup_deletes_expired_unknown_answers_and_hints_only(make_empty_app):
    app = make_empty_app(SOLVER_UNKNOWN_SECONDS=60, SOLVER_HINT_KEEP_SECONDS=60)
    client = app.test_client()
    assert solvability(client, WINNABLE_YUKON).get_json()["status"] == "winnable"
    add_row(app, code=HARD, status="unknown", solved_at=datetime.now(UTC) - timedelta(seconds=61))
    add_row(app, code=HARD_TOO, status="unknown", solved_at=datetime.now(UTC))
    old = hint(client, WINNABLE_YUKON, "").get_json()["id"]
    from api.platform.models import HintAnswer

    with app.extensions["api.platform.db"].sessions() as session:
        session.scalars(select(HintAnswer)).one().solved_at -= timedelta(seconds=61)
        session.commit()
    app.extensions["api.solver"].cleanup()
    assert [(r.code, r.status) for r in rows(app)] == [(WINNABLE_YUKON, "winnable"), (HARD_TOO, "unknown")]
    assert poll_hint(client, f"{API}/hints/{old}").status_code == 404


def test_a_broker_that_does_not_answer_gives_503_and_takes_nothing(make_empty_app):
    app = make_empty_app(CELERY_BROKER_URL="redis://127.0.0.1:9/0")  # nothing listens there
    client = app.test_client()
    response = solvability(client, WINNABLE_YUKON)
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"
    assert "broker did not take the search" in response.get_json()["detail"]
    [row] = rows(app)
    assert (row.status, row.queued_at) == ("pending", None)  # the next request sends it again
    assert places_taken(app.extensions["api.solver"]) == 0
    response = hint(client, WINNABLE_YUKON, "")
    assert response.status_code == 503 and places_taken(app.extensions["api.solver"]) == 0


@BOTH
def test_migration_0004_keeps_stored_answers(empty_database_url):
    from sqlalchemy import text

    database = Database(empty_database_url)
    try:
        database.upgrade("0003")
        with database.engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO solvability (code, variant, budget, budget_seconds, engine_version, rules_version, status,"
                " reason, verified, attempts, requested_at) VALUES ('YU1-C-AAAAAAB', 'yukon-classic', '10s', 10,"
                " '1.0.0', 1, 'unknown', 'ran out', false, 1, '2025-01-01T00:00:00+00:00')"))
        database.upgrade()
        with database.engine.connect() as connection:
            tables = set(inspect(connection).get_table_names())
            assert {"solver_jobs", "hints"} <= tables
            assert connection.execute(text("SELECT code, status, reason FROM solvability")).all() == [
                ("YU1-C-AAAAAAB", "unknown", "ran out")]
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0003")
        with database.engine.connect() as connection:
            assert not {"solver_jobs", "hints"} & set(inspect(connection).get_table_names())
            assert connection.execute(text("SELECT count(*) FROM solvability")).scalar() == 1
    finally:
        database.dispose()


def test_a_search_stopped_at_the_soft_time_limit_is_stored_unknown(app, client, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    def too_long(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(api.solver.searches, "solve_code", too_long)
    monkeypatch.setattr(api.solver.hints, "hint_played", too_long)
    body = solvability(client, WINNABLE_YUKON).get_json()
    assert (body["status"], body["search"]) == ("unknown", None)
    assert body["reason"] == "the search went past its time limit on the worker (budget 60 s)"
    body = hint(client, WINNABLE_YUKON, "T7:TS>T2").get_json()
    assert (body["status"], body["hint"], body["after_actions"]) == ("unknown", None, 1)
    assert "went past its time limit" in body["reason"]
    assert places_taken(app.extensions["api.solver"]) == 0


# -- hints belong to their player (issue 21) -----------------------------------------

def new_player(app) -> dict[str, str]:
    from api.players.accounts import register

    with app.extensions["api.platform.db"].sessions() as session:
        token = register(session, f"p-{uuid.uuid4().hex[:10]}")[1]
        session.commit()
    return {"Authorization": f"Bearer {token}"}


def test_a_hint_id_is_a_random_token_readable_by_its_player_only(app, client):
    import re

    ann, bob = new_player(app), new_player(app)
    first = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": ""}, headers=ann).get_json()
    assert re.fullmatch(r"h_[A-Za-z0-9_-]{22}", first["id"]) and first["poll"] == f"{API}/hints/{first['id']}"
    again = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": ""}, headers=ann).get_json()
    assert again["id"] == first["id"]  # the same player, the same position: the same token
    theirs = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": ""}, headers=bob).get_json()
    assert theirs["id"] != first["id"] and theirs["hint"] == first["hint"]  # one search, a token each
    other = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": "T7:TS>T2"}, headers=ann).get_json()
    assert other["id"] not in (first["id"], theirs["id"])
    assert client.get(first["poll"], headers=ann).get_json() == first
    assert client.get(theirs["poll"], headers=bob).status_code == 200
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
        key = create_key(session, f"backend-{uuid.uuid4().hex[:8]}")[1]
    for headers in (bob, {}, {"Authorization": f"Bearer {key}"}):  # another player, anonymous, an API key
        response = client.get(first["poll"], headers=headers)
        assert response.status_code == 404, headers
        assert "there is no such hint for this player" in response.get_json()["detail"]
    assert client.get(first["poll"], headers={"Authorization": "Bearer svp_not_a_real_token"}).status_code == 401
    from api.platform.models import Hint

    with app.extensions["api.platform.db"].sessions() as session:  # only what was handed over is logged
        handed = sorted(h.player_id for h in session.scalars(select(Hint)))
    assert handed == sorted([_player_id(app, ann)] * 4 + [_player_id(app, bob)] * 2)


def _player_id(app, headers) -> int:
    from api.players.accounts import player_for_token

    with app.extensions["api.platform.db"].sessions() as session:
        return player_for_token(session, headers["Authorization"].split()[1]).id


# -- the fair queue (issue 22): keys first, round-robin by client, anonymous at most half --

def queue_app(make_empty_app, monkeypatch, **config):
    """An app whose searches wait in the queue (tickets are not sent) and whose searches,
    run by :meth:`Solver.run_next`, are recorded and answered ``unknown`` at once."""
    app = make_empty_app(TRUSTED_PROXIES=1, **config)
    solver: Solver = app.extensions["api.solver"]
    solver.send = lambda kind, budget, keyed: None
    searched: list[str] = []

    def record(code, *args, **kwargs):
        searched.append(str(code))
        return type("Answer", (), {"to_json": lambda self: {
            "status": "unknown", "verified": False, "solution": None, "solution_actions": None, "search": None,
            "coverage": None, "reason": "recorded"}})()

    monkeypatch.setattr(api.solver.searches, "solve_code", record)
    return app, solver, searched


def keys(app, *names):
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
        return [{"Authorization": f"Bearer {create_key(session, name)[1]}"} for name in names]


def deal(number: int) -> str:
    return str(engine.GameCode("FT", "N", number))


def test_keys_are_served_first_in_turn_and_anonymous_clients_hold_half_the_places(make_empty_app, monkeypatch):
    app, solver, searched = queue_app(make_empty_app, monkeypatch, SOLVER_QUEUE_SIZE=8, SOLVER_TASK_PLACES=1)
    client = app.test_client()
    ask = lambda number, headers: client.get(f"{API}/deals/{deal(number)}/solvability", headers=headers)
    for number, ip in enumerate(["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2"]):
        assert ask(number, {"X-Forwarded-For": ip}).status_code == 202
    refused = ask(4, {"X-Forwarded-For": "10.0.0.3"})  # the anonymous half (4 of 8) is taken
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
    assert "all 4 of the places anonymous clients may hold" in refused.get_json()["detail"]
    first, second = keys(app, "backend-one", "backend-two")
    for number, headers in [(10, first), (11, first), (20, second)]:
        assert ask(number, headers).status_code == 202  # issue 22: keys were refused 503 here
    assert ask(12, first).status_code == 429  # a key has its own limit of 2, like anyone
    assert ask(3, second).status_code == 202  # a key asks for an anonymous search: it moves up, no place taken
    assert places_taken(solver) == 7
    while solver.run_next("deal", f"runner-{len(searched)}") is not None:
        pass
    # keys first, each key's first search, then each one's second; then the anonymous clients in turn
    assert searched == [deal(10), deal(20), deal(3), deal(11), deal(0), deal(2), deal(1)]
    assert places_taken(solver) == 0
    assert ask(4, {"X-Forwarded-For": "10.0.0.3"}).status_code == 202  # places free again


def test_a_ticket_handed_out_again_runs_the_same_job(make_empty_app, monkeypatch):
    """acks_late: a worker died mid-search; the broker gives its ticket to another worker,
    which runs the job the ticket took (not the next one in the queue)."""
    app, solver, searched = queue_app(make_empty_app, monkeypatch)
    client = app.test_client()
    for number in range(2):
        assert client.get(f"{API}/deals/{deal(number)}/solvability",
                          headers={"X-Forwarded-For": f"10.0.1.{number}"}).status_code == 202
    job = solver._take_job("deal", "ticket-a")  # taken, then the worker died
    assert job is not None and solver._take_job("deal", "ticket-a").id == job.id
    assert solver.run_next("deal", "ticket-a") == "unknown" and searched == [deal(0)]
    assert solver.run_next("deal", "ticket-b") == "unknown" and searched == [deal(0), deal(1)]
    assert solver.run_next("deal", "ticket-c") is None


@BOTH
def test_migration_0010_keeps_answers_hints_and_places(empty_database_url):
    """Upgrade from the migration's own down_revision with data in that schema: nothing is lost."""
    import importlib.util

    from sqlalchemy import text

    path = api.solver.queue.__file__.rsplit("/api/", 1)[0] + "/migrations/versions/0010_search_queue.py"
    spec = importlib.util.spec_from_file_location("migration_0010", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    database = Database(empty_database_url)
    try:
        database.upgrade(module.down_revision)
        moment = "'2026-11-30T12:00:00+00:00'"
        with database.engine.begin() as connection:
            for statement in (
                "INSERT INTO solvability (code, variant, budget, budget_seconds, engine_version, rules_version, status,"
                f" reason, verified, attempts, requested_at) VALUES ('YU1-C-AAAAAAB', 'yukon-classic', '10s', 10,"
                f" '1.0.0', 1, 'unknown', 'ran out', false, 1, {moment})",
                "INSERT INTO hint_answers (code, log_hash, log, after_actions, budget, engine_version, rules_version,"
                " status, reason, answer, attempts, requested_at, solved_at) VALUES ('YU1-C-AAAAAAB', 'abc', '', 0,"
                f" '2s', '1.0.0', 1, 'winnable', 'a line', '{{\"hint\": \"S\"}}', 1, {moment}, {moment})",
                f"INSERT INTO players (name, created_at) VALUES ('ann', {moment})",
                "INSERT INTO hints (player_id, code, at, actions, position) VALUES"
                f" ((SELECT id FROM players), 'YU1-C-AAAAAAB', {moment}, 0, 'the start')",
                "INSERT INTO solver_jobs (client, client_slot, slot, kind, created_at, expires_at) VALUES"
                f" ('ip:10.0.0.1', 0, 3, 'deal', {moment}, {moment})",
            ):
                connection.execute(text(statement))
        database.upgrade(module.revision)
        with database.engine.connect() as connection:
            assert connection.execute(text("SELECT code, status, reason FROM solvability")).all() == [
                ("YU1-C-AAAAAAB", "unknown", "ran out")]
            assert connection.execute(text("SELECT code, status, reason FROM hint_answers")).all() == [
                ("YU1-C-AAAAAAB", "winnable", "a line")]
            assert connection.execute(text("SELECT code, position FROM hints")).all() == [
                ("YU1-C-AAAAAAB", "the start")]
            assert connection.execute(text(
                "SELECT client, slot, kind, priority, turn, target, attempt, started_at, runner FROM solver_jobs")
            ).all() == [("ip:10.0.0.1", 3, "deal", 1, 0, None, 0, None, None)]  # a place without a search
            assert connection.execute(text("SELECT count(*) FROM hint_requests")).scalar() == 0
        with database.engine.begin() as connection:
            command.downgrade(alembic_config(connection), module.down_revision)
        with database.engine.connect() as connection:
            assert "hint_requests" not in inspect(connection).get_table_names()
            assert connection.execute(text("SELECT client, slot FROM solver_jobs")).all() == [("ip:10.0.0.1", 3)]
            assert connection.execute(text("SELECT count(*) FROM hint_answers")).scalar() == 1
    finally:
        database.dispose()


def test_the_tickets_of_keys_go_to_the_queue_taken_first(make_empty_app, monkeypatch, tmp_path):
    from api import tasks
    from api.solver.searches import Budget

    app = make_empty_app(CELERY_QUEUE_PREFIX="sq")
    celery, sent = app.extensions["api.celery"], []
    for name in (tasks.SEARCH, tasks.HINT):
        monkeypatch.setattr(celery.tasks[name], "apply_async", lambda *a, name=name, **k: sent.append((name, k)))
    send = tasks.sender(app)
    send("deal", Budget(10), True)
    send("hint", Budget(2), False)
    assert sent[0][0] == tasks.SEARCH and sent[0][1]["queue"] == "sq.keys"
    assert sent[0][1]["soft_time_limit"] == 14.5 and sent[0][1]["time_limit"] == 17.5
    assert sent[1][0] == tasks.HINT and "queue" not in sent[1][1]  # routed to sq.hints
    settings = {**load_settings(str(tmp_path)), "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
                "CELERY_QUEUE_PREFIX": "sq"}
    worker_side = tasks.make_celery(settings)
    assert [queue.name for queue in worker_side.conf.task_queues] == ["sq.challenges", "sq.keys", "sq.hints",
                                                                      "sq.searches", "sq.bulk", "sq.webhooks"]
    assert worker_side.conf.task_routes[tasks.HINT]["queue"] == "sq.hints"
