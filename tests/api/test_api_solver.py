"""The solver behind the API: ``GET /deals/{code}/solvability`` (stored answers, searches
in worker processes, pending rows, lost searches started again) and ``POST /hint``.

Most tests run the search inside the request (``SOLVER_WORKERS=0``, the suite's
default) with node budgets, so that they are fast and deterministic; the tests
marked *worker* start the real pool of worker processes and poll for the answer.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from alembic import command
from sqlalchemy import inspect, select
from sqlalchemy.exc import IntegrityError

import api.solving
import engine
from api.config import ConfigError, load_settings
from api.db import Database, alembic_config
from api.models import Solvability
from api.solving import MAX_ATTEMPTS, Solver
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
        from api.auth import create_key
        from api.players import register

        with app.extensions["api.db"].sessions() as session:
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
    with app.extensions["api.db"].sessions() as session:
        return list(session.scalars(select(Solvability).order_by(Solvability.id)))


def add_row(app, **values) -> Solvability:
    """A row as a request would have written it (for lost and failed searches)."""
    solver: Solver = app.extensions["api.solver"]
    code = engine.GameCode.from_text(values.pop("code", WINNABLE_YUKON))
    moment = datetime.now(timezone.utc)
    row = Solvability(code=str(code), variant=code.variant, budget=solver.budget.key,
                      budget_seconds=solver.budget.seconds, budget_nodes=solver.budget.nodes,
                      engine_version=engine.__version__, rules_version=engine.RULES_VERSION, status="pending",
                      reason="the search is queued or running (attempt 1 of at most 3)", verified=False, attempts=1,
                      requested_at=moment, queued_at=moment)
    for name, value in values.items():
        setattr(row, name, value)
    with app.extensions["api.db"].sessions() as session:
        session.add(row)
        session.commit()
    return row


@pytest.fixture
def no_search(monkeypatch):
    """Fail the test if a search starts (inside the request) from now on."""

    def refuse(*args, **kwargs):
        raise AssertionError("a search was started")

    monkeypatch.setattr(api.solving, "solve_code", refuse)


@pytest.fixture
def worker_app(make_empty_app, make_app):
    """``worker_app(**config)``: an app whose searches run in a real pool of worker
    processes (the first one made in a test empties the tables, the next ones share
    them); the pools are stopped after the test."""
    apps = []

    def make(**config):
        app = (make_app if apps else make_empty_app)(**{"SOLVER_WORKERS": 1, **config})
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["api.solver"].shutdown()


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
    assert body["budget"] == {"seconds": 10.0, "nodes": nodes}
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
    monkeypatch.setattr(api.solving, "solve_code", lambda *a, **k: pytest.fail("searched again"))
    again = solvability(client, " yu1-c-aaaaaab ")
    assert again.status_code == 200
    assert again.get_json() == first.get_json()
    [row] = rows(app)
    assert (row.code, row.status, row.attempts, row.budget) == (WINNABLE_YUKON, "winnable", 1, "10s+10000n")
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
        ("10s+50n", "1.0.0", "unknown"), ("10s+30000n", "1.0.0", "winnable"), ("10s+30000n", "99.0.0", "winnable")]


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


# -- the worker processes --------------------------------------------------

def test_worker_the_search_runs_in_another_process_while_requests_are_answered(worker_app):
    app = worker_app(SOLVER_BUDGET_SECONDS=1.5, SOLVER_BUDGET_NODES=None)
    client = app.test_client()
    response = solvability(client, HARD)
    assert response.status_code == 202
    assert response.headers["Retry-After"] == "1"
    body = response.get_json()
    assert (body["status"], body["solution"], body["search"], body["solved_at"]) == ("pending", None, None, None)
    assert body["budget"] == {"seconds": 1.5, "nodes": None}
    assert multiprocessing.active_children(), "no worker process"
    # other requests are answered while the search runs
    assert client.get(f"{API}/deals/{WINNABLE_YUKON}").status_code == 200
    assert client.post(f"{API}/verify", json={"code": HARD, "moves": "S"}).status_code == 200
    assert solvability(client, HARD).status_code == 202
    answered = datetime.now(timezone.utc)
    body = wait_for_answer(client, HARD).get_json()
    assert body["status"] == "unknown" and "time budget of 1.5 s ran out" in body["reason"]
    assert body["search"]["seconds"] >= 1.4
    assert datetime.fromisoformat(body["solved_at"]) > answered  # the search ended after the other answers
    [row] = rows(app)
    assert (row.attempts, row.status) == (1, "unknown")
    assert app.extensions["api.solver"].jobs == 0


def test_worker_racing_first_requests_share_one_search(worker_app, monkeypatch):
    app = worker_app()
    started = []
    original = Solver._start

    def counting_start(self, row):
        started.append(row.id)
        return original(self, row)

    monkeypatch.setattr(Solver, "_start", counting_start)
    barrier = threading.Barrier(8)
    statuses = []

    def ask():
        client = app.test_client()
        barrier.wait()
        statuses.append(solvability(client, WINNABLE_YUKON).status_code)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(statuses) == 8 and set(statuses) <= {200, 202}
    assert len(started) == 1
    body = wait_for_answer(app.test_client(), WINNABLE_YUKON).get_json()
    assert body["status"] == "winnable" and replay(WINNABLE_YUKON, body["solution"]).won
    [row] = rows(app)
    assert row.attempts == 1


def test_worker_a_search_lost_in_a_restart_is_started_again_after_the_stale_time(worker_app):
    settings = {"SOLVER_BUDGET_SECONDS": 1, "SOLVER_BUDGET_NODES": None, "SOLVER_STALE_SECONDS": 60}
    first = worker_app(**settings)
    assert solvability(first.test_client(), HARD).status_code == 202
    first.extensions["api.solver"].shutdown()  # the web process goes down; its search dies with it
    [row] = rows(first)
    assert (row.status, row.attempts) == ("pending", 1)
    client = worker_app(**settings).test_client()  # the web process after the restart
    body = solvability(client, HARD).get_json()
    assert (body["status"], body["reason"]) == ("pending", row.reason)  # not stale yet: left alone
    assert rows(first)[0].attempts == 1
    with first.extensions["api.db"].sessions() as session:  # a minute passes
        session.get(Solvability, row.id).queued_at -= timedelta(seconds=61)
        session.commit()
    body = solvability(client, HARD).get_json()
    assert body["status"] == "pending" and "attempt 2 of at most 3" in body["reason"]
    body = wait_for_answer(client, HARD).get_json()
    assert body["status"] == "unknown" and "time budget of 1.0 s ran out" in body["reason"]
    assert rows(first)[0].attempts == 2


def test_worker_a_full_queue_is_answered_503_with_retry_after(worker_app):
    app = worker_app(SOLVER_QUEUE_SIZE=1, SOLVER_BUDGET_SECONDS=1.5, SOLVER_BUDGET_NODES=None)
    client = app.test_client()
    assert solvability(client, HARD).status_code == 202
    response = solvability(client, HARD_TOO)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"
    assert response.get_json()["detail"] == "the solver is busy: all 1 places for searches in this process are " \
                                            "taken; ask again in 2 s"
    assert [row.code for row in rows(app)] == [HARD]  # nothing stored for the refused deal
    assert solvability(client, HARD).status_code == 202  # the running search is still answered
    assert wait_for_answer(client, HARD).status_code == 200
    assert solvability(client, HARD_TOO).status_code == 202  # room again


# -- lost and failing searches (inside the request) --------------------------

def test_a_stale_pending_row_is_claimed_by_one_request_and_searched_again(app, client):
    add_row(app, queued_at=datetime.now(timezone.utc) - timedelta(hours=1))
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

    monkeypatch.setattr(api.solving, "solve_code", broken)
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
    add_row(app, attempts=MAX_ATTEMPTS, queued_at=datetime.now(timezone.utc) - timedelta(hours=1),
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
    assert solver.store(row.id, answer) is True
    assert solver.store(row.id, {**answer, "status": "unknown", "reason": "late"}) is False
    assert rows(app)[0].status == "winnable"
    with pytest.raises(ValueError, match="not a storable answer"):
        solver.store(row.id, {**answer, "verified": False})


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
    assert post_hint(client, json={"code": WINNABLE_YUKON, "moves": ""}).status_code == 200  # search 2
    for response in (post_hint(client, json={"code": WINNABLE_YUKON, "moves": ""}),
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
        "SOLVER_ENABLED": True, "SOLVER_WORKERS": 1, "SOLVER_BUDGET_SECONDS": 10.0, "SOLVER_BUDGET_NODES": None,
        "SOLVER_QUEUE_SIZE": 16, "SOLVER_STALE_SECONDS": 300.0, "SOLVER_HINT_SECONDS": 2.0,
        "SOLVER_HINT_NODES": None}
    assert settings["RATELIMIT_SOLVER"] == "30 per minute"
    env = {"SOLVER_WORKERS": "0", "SOLVER_BUDGET_SECONDS": "0.5", "SOLVER_BUDGET_NODES": "2000",
           "SOLVER_HINT_NODES": "none", "SOLVER_ENABLED": "off"}
    settings = load_settings(str(tmp_path), environ=env)
    assert (settings["SOLVER_WORKERS"], settings["SOLVER_BUDGET_SECONDS"], settings["SOLVER_BUDGET_NODES"],
            settings["SOLVER_HINT_NODES"], settings["SOLVER_ENABLED"]) == (0, 0.5, 2000, None, False)


@pytest.mark.parametrize("env, name", [
    ({"SOLVER_WORKERS": "-1"}, "SOLVER_WORKERS"),
    ({"SOLVER_WORKERS": "many"}, "SOLVER_WORKERS"),
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
