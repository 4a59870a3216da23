"""The worker tier with real Celery workers (``celery --app api.tasks worker`` in
subprocesses) on the machine's Redis, and RabbitMQ: tasks end to end, the fair
queue (per client and global), a worker killed mid-search, the health probe under
solver load, and re-verification split into ranges.

These tests need Redis at ``redis://127.0.0.1:6379`` (RabbitMQ for one); without
it they are skipped, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC

from sqlalchemy import select

import engine
from api.platform.models import HintAnswer, Record, Solvability
from tests.api.celery_tier import RABBITMQ_URL, ROOT, Tier, require_broker
from tests.api.solver_places import places_taken
from tests.play import play_greedy
from verifier import replay

API = "/api/v1"
WINNABLE_YUKON = "YU1-C-AAAAAAB"
UNWINNABLE = "YU1-C-RNXZ6DA"
HARD = "FT1-N-K37R6LJ"                     # undecided after 2,000,000 positions
HARD_TOO = "FT1-N-FBGPQZ6"
#: workers start in seconds and searches run their budget: wait this long at most
WAIT_SECONDS = 90


def player(app) -> dict[str, str]:
    """The header of a new player's token (hints are for players)."""
    from api.players.accounts import register

    with app.extensions["api.platform.db"].sessions() as session:
        token = register(session, f"tier-{os.getpid()}-{time.monotonic_ns()}")[1]
        session.commit()
    return {"Authorization": f"Bearer {token}"}


def wait_for(client, url: str, timeout: float = WAIT_SECONDS, headers: dict[str, str] | None = None):
    """GET ``url`` until it is no longer 202 (every 0.2 s)."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(url, headers=headers)
        if response.status_code != 202:
            return response
        assert response.get_json()["status"] == "pending"
        assert time.monotonic() < deadline, f"{url}: still pending after {timeout} s"
        time.sleep(0.2)


def solvability_url(code: str) -> str:
    return f"{API}/deals/{code}/solvability"


def from_ip(ip: str) -> dict[str, str]:
    return {"X-Forwarded-For": ip}


def test_searches_and_hints_run_on_a_worker_and_are_stored(tier):
    app = tier.app()
    tier.worker()
    client = app.test_client()
    response = client.get(solvability_url(WINNABLE_YUKON))
    assert response.status_code == 202 and response.headers["Retry-After"] == "5"
    body = wait_for(client, solvability_url(WINNABLE_YUKON)).get_json()
    assert body["status"] == "winnable" and "solution" not in body  # the line itself is for admin keys
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
        admin = {"Authorization": f"Bearer {create_key(session, 'tier-admin', admin=True)[1]}"}
    line = client.get(solvability_url(WINNABLE_YUKON), headers=admin).get_json()["solution"]
    assert replay(WINNABLE_YUKON, line).won and len(line.split()) == body["solution_actions"]

    who = player(app)
    response = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": "T7:TS>T2"}, headers=who)
    assert response.status_code == 202
    pending = response.get_json()
    assert (pending["status"], pending["hint"], pending["after_actions"]) == ("pending", None, 1)
    assert response.headers["Location"] == pending["poll"] == f"{API}/hints/{pending['id']}"
    assert response.headers["Retry-After"] == "5"
    answered = wait_for(client, pending["poll"], headers=who)
    assert answered.status_code == 200
    body = answered.get_json()
    assert body["status"] == "winnable" and body["id"] == pending["id"]
    assert replay(WINNABLE_YUKON, ["T7:TS>T2", body["hint"]]).legal
    again = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON.lower(), "moves": ["T7:TS>T2"]}, headers=who)
    assert again.status_code == 200 and again.get_json() == body  # stored: answered at once
    assert places_taken(app.extensions["api.solver"]) == 0


def test_each_client_has_at_most_its_places_and_the_queue_is_bounded(tier):
    """No worker at first: the searches wait in the queue, holding their places
    (anonymous clients: half of the 6, so 3)."""
    app = tier.app(TRUSTED_PROXIES=1, SOLVER_PENDING_PER_CLIENT=2, SOLVER_QUEUE_SIZE=6, SOLVER_BUDGET_NODES=2000)
    client = app.test_client()
    ann, bob, eve = from_ip("10.0.0.1"), from_ip("10.0.0.2"), from_ip("10.0.0.3")
    ann_player = {**ann, **player(app)}  # a player token is no client of its own: still ann's IP
    assert client.get(solvability_url(HARD), headers=ann).status_code == 202
    assert client.post(f"{API}/hint", json={"code": HARD, "moves": ""}, headers=ann_player).status_code == 202
    for refused in (client.get(solvability_url(HARD_TOO), headers=ann),
                    client.post(f"{API}/hint", json={"code": HARD, "moves": "S"}, headers=ann_player)):
        assert refused.status_code == 429
        assert refused.get_json()["type"].endswith("/rate-limited")
        assert "a client may have 2 searches waiting or running" in refused.get_json()["detail"]
        assert int(refused.headers["Retry-After"]) >= 1
    # asking about a pending search takes no place
    assert client.get(solvability_url(HARD), headers=ann).status_code == 202
    assert client.get(solvability_url(HARD), headers=eve).status_code == 202
    assert client.get(solvability_url(UNWINNABLE), headers=bob).status_code == 202  # the third place
    full = client.get(solvability_url(HARD_TOO), headers=eve)
    assert full.status_code == 503 and full.headers["Retry-After"] == "10"
    assert "all 3 of the places anonymous clients may hold" in full.get_json()["detail"]
    with app.extensions["api.platform.db"].sessions() as session:  # nothing was stored for the refused requests
        assert sorted(session.scalars(select(Solvability.code))) == sorted([HARD, UNWINNABLE])
        assert [h.log for h in session.scalars(select(HintAnswer))] == [""]
    assert places_taken(app.extensions["api.solver"]) == 3
    tier.worker()  # the waiting searches run; their places come free
    assert wait_for(client, solvability_url(UNWINNABLE)).get_json()["status"] == "unwinnable"
    assert wait_for(client, solvability_url(HARD)).get_json()["status"] == "unknown"
    deadline = time.monotonic() + WAIT_SECONDS
    while places_taken(app.extensions["api.solver"]):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert client.get(solvability_url(HARD_TOO), headers=eve).status_code == 202


def test_a_search_of_a_killed_worker_is_done_by_another(tier):
    """acks_late: the task of a worker killed mid-search stays unacknowledged and is
    handed to the next worker after the visibility timeout."""
    # (3 s is the safety net under the visibility timeout; the node budget ends the search on a fast machine)
    settings = {"SOLVER_BUDGET_SECONDS": 3, "SOLVER_BUDGET_NODES": 1_000_000, "CELERY_VISIBILITY_TIMEOUT": 12}
    tier.settings.update(settings)
    app = tier.app()
    first = tier.worker()
    client = app.test_client()
    assert client.get(solvability_url(HARD)).status_code == 202
    deadline = time.monotonic() + WAIT_SECONDS
    while not any("api.solve_deal" in line and "received" in line for line in first.output):
        assert time.monotonic() < deadline, "".join(first.output)
        time.sleep(0.1)
    time.sleep(0.5)  # the search is running
    first.kill()
    [row] = rows(app, Solvability)
    assert (row.status, row.attempts) == ("pending", 1)
    second = tier.worker()
    body = wait_for(client, solvability_url(HARD)).get_json()
    assert body["status"] == "unknown" and "ran out" in body["reason"]
    assert any("api.solve_deal" in line and "received" in line for line in second.output)
    [row] = rows(app, Solvability)
    assert row.attempts == 1  # redone by the broker, not started again by a request
    assert places_taken(app.extensions["api.solver"]) == 0


def rows(app, model):
    with app.extensions["api.platform.db"].sessions() as session:
        return list(session.scalars(select(model).order_by(model.id)))


def candidate_answers(app, variant: str, kind: str, day) -> list[str | None]:
    """The solver's answers (None: not searched) for the candidates of a challenge window. They
    come from the database's own random key: within 20,000 positions a Forty Thieves deal is
    seldom won, and now and then none of a window's 16 is, so the window is left unprepared."""
    from api.challenges.windows import candidates, derivation_key

    with app.extensions["api.platform.db"].sessions() as session:
        key = derivation_key(session, None)
    searched = {row.code: row.status for row in rows(app, Solvability)}
    count = app.config["CHALLENGE_CANDIDATES"]
    return [searched.get(str(code)) for code in candidates(variant, kind, day, count, key)]


def test_a_rabbitmq_broker_works_too(empty_database_url):
    require_broker(RABBITMQ_URL, "RabbitMQ")
    tier = Tier(empty_database_url, broker_url=RABBITMQ_URL)
    try:
        app = tier.app()
        tier.worker()
        client = app.test_client()
        assert client.get(solvability_url(UNWINNABLE)).status_code == 202
        assert wait_for(client, solvability_url(UNWINNABLE)).get_json()["status"] == "unwinnable"
        who = player(app)
        response = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": ""}, headers=who)
        assert response.status_code == 202
        assert wait_for(client, response.headers["Location"], headers=who).get_json()["status"] == "winnable"
    finally:
        tier.close()


# -- health under solver load ----------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(port: int, method: str, path: str, body: str | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, float]:
    """One request on a new connection: its status and how long the answer took."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        response.read()
        return response.status, time.perf_counter() - started
    finally:
        connection.close()


def test_health_answers_while_searches_are_in_flight(tier):
    """gunicorn with 4 threads, a worker searching, and 100 hint and solvability requests
    from 5 clients: the liveness probe keeps answering, and the clients' limits hold the
    rest back. (How fast it answers depends on the machine: ``bench.solver_queue_bench``
    measures it; no test here asserts seconds.)"""
    tier.settings.update(SOLVER_BUDGET_SECONDS=60, SOLVER_BUDGET_NODES=20000, SOLVER_HINT_NODES=10000)
    who = player(tier.app())  # (and migrates the database)
    tier.worker()
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CELERY_", "SOLVER_"))}
    env.update({key: str(value) for key, value in tier.settings.items() if value is not None})
    env.update(RATELIMIT_ENABLED="0", TRUSTED_PROXIES="1", LOG_LEVEL="WARNING", API_KEYS_REQUIRED="0",
               PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "--workers", "1", "--worker-class", "gthread",
                               "--threads", "4", "--bind", f"127.0.0.1:{port}", "api:create_app()"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if call(port, "GET", f"{API}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.2)
        probes: list[float] = []
        done = threading.Event()

        def probe() -> None:
            while not done.is_set():
                status, seconds = call(port, "GET", f"{API}/healthz")
                assert status == 200
                probes.append(seconds)
                time.sleep(0.05)

        prober = threading.Thread(target=probe)
        prober.start()
        codes = [str(engine.GameCode("FT", "N", n)) for n in range(1000, 1050)]

        def one(i: int) -> int:
            client = {"X-Forwarded-For": f"10.1.0.{i % 5 + 1}"}
            if i % 2:
                client.update(who)
                return call(port, "POST", f"{API}/hint", f'{{"code": "{codes[i // 2]}", "moves": ""}}', client)[0]
            return call(port, "GET", solvability_url(codes[i // 2]), headers=client)[0]

        with ThreadPoolExecutor(10) as pool:
            statuses = list(pool.map(one, range(100)))
        time.sleep(1)  # and while the worker goes on searching
        done.set()
        prober.join()
        assert set(statuses) <= {200, 202, 429, 503}, statuses
        assert statuses.count(202) >= 10  # searches were queued …
        assert 429 in statuses            # … and the clients' limits held the rest back
        assert len(probes) >= 10  # every probe was answered 200 (checked as it went)
    finally:
        os.killpg(server.pid, 9)
        server.wait(10)


# -- re-verification on the tier -------------------------------------------------

def test_reverify_sends_id_ranges_to_the_workers(tier, legal_log):
    from api.records.store import new_record

    app = tier.app()
    code = "FT1-N-AAAAAAB"
    verdict = replay(code, "T7:AS>F1 T10:6H>T9 T10:AC>F4 T10:AH>F2 S")
    with app.extensions["api.platform.db"].sessions() as session:
        for i in range(7):
            session.add(Record(**{**new_record(verdict, {"player": f"p{i}"}), "engine_version": "0.9.0"}))
        changed = Record(**{**new_record(verdict, {"player": "cheat"}), "score": 999})
        session.add(changed)
        session.commit()
        changed_id = changed.id
    tier.worker(concurrency=2)
    result = app.test_cli_runner().invoke(args=["records", "reverify", "--chunk", "3"])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines == [f"record {changed_id} (cheat, {code}): score 999 -> 30",
                     f"re-verified 8 records with engine {engine.__version__} (rules {engine.RULES_VERSION}): "
                     f"7 unchanged, 1 changed"]
    assert "sent 3 ranges of 3 ids to the worker tier" in result.stderr
    assert "3 of 3 ranges done: 8 records re-verified" in result.stderr  # progress, a line a range
    assert {r.engine_version for r in rows(app, Record) if r.id != changed_id} == {engine.__version__}


def test_a_valid_api_key_is_a_client_of_its_own_and_random_tokens_are_not(tier):
    from api.platform.auth import create_key

    app = tier.app(SOLVER_PENDING_PER_CLIENT=1)
    with app.extensions["api.platform.db"].sessions() as session:
        token = create_key(session, "ann-laptop")[1]
    client = app.test_client()
    assert client.get(solvability_url(HARD)).status_code == 202                       # the IP's place
    assert client.get(solvability_url(HARD_TOO), headers={"Authorization": f"Bearer {token}"}).status_code == 202
    for number in range(3):  # made-up keys are refused before they could take a place
        response = client.get(solvability_url(UNWINNABLE), headers={"Authorization": f"Bearer sv_made_up_{number}"})
        assert response.status_code == 401
    assert client.get(solvability_url(UNWINNABLE)).status_code == 429  # and the IP has used its place
    assert places_taken(app.extensions["api.solver"]) == 2


def test_a_hint_goes_ahead_of_the_searches_waiting(tier):
    """One worker process, four long searches queued, then a hint: the hint is the next
    task the worker takes (the hints queue first), not the last."""
    app = tier.app(TRUSTED_PROXIES=1, SOLVER_BUDGET_NODES=100_000)
    client = app.test_client()
    codes = [str(engine.GameCode("FT", "N", n)) for n in range(2000, 2004)]
    for number, code in enumerate(codes):
        assert client.get(solvability_url(code), headers=from_ip(f"10.3.0.{number}")).status_code == 202
    tier.worker()
    who = {**from_ip("10.3.1.1"), **player(app)}
    response = client.post(f"{API}/hint", json={"code": WINNABLE_YUKON, "moves": ""}, headers=who)
    assert response.status_code == 202
    assert wait_for(client, response.headers["Location"], headers=who).status_code == 200
    with app.extensions["api.platform.db"].sessions() as session:
        answered = session.scalars(select(Solvability).where(Solvability.status != "pending")).all()
    assert len(answered) <= 2, [row.code for row in answered]  # at most the running search (and one more)


def test_an_unprepared_challenge_window_sends_its_preparation_once_and_is_served_after(tier):
    """No worker yet: the request answers 503 at once and leaves one preparation task
    queued (a second request sends none); a worker started later proves the window."""
    from api.platform.models import Challenge, SolverJob

    app = tier.app(CHALLENGE_NODES=20000)
    client = app.test_client()
    url = f"{API}/challenges/daily?variant=yukon-classic"
    for _ in range(3):
        response = client.get(url)
        assert response.status_code == 503 and response.headers["Retry-After"] == "15"
    assert [(job.client, job.slot) for job in rows(app, SolverJob)] == [("task:api.prepare_challenges", -1)]
    assert places_taken(app.extensions["api.solver"]) == 0  # the marker takes no user's place
    tier.worker(CHALLENGE_NODES=20000)
    deadline = time.monotonic() + WAIT_SECONDS
    while (response := client.get(url)).status_code == 503:
        assert time.monotonic() < deadline, "the challenge was not prepared"
        time.sleep(0.5)
    body = response.get_json()
    assert response.status_code == 200 and body["code"] is None  # (secret while the window runs)
    assert [c.code[:6] for c in rows(app, Challenge) if c.id == body["id"]] == ["YU1-C-"]
    while rows(app, SolverJob):  # the task frees its marker when it has prepared today's and the next ones
        assert time.monotonic() < deadline, "the preparation did not end"
        time.sleep(0.5)
    from datetime import datetime

    from api.challenges.windows import plan, window

    today = datetime.now(UTC).date()
    windows = {(variant, kind, window(kind, moment)[0]) for variant, kind, moment in plan(today, 1)}
    assert len(windows) in (12, 9)  # today's, tomorrow's daily and the next week's weekly (9 on a Sunday)
    prepared = {(c.variant, c.kind, c.starts_at) for c in rows(app, Challenge)}
    assert prepared <= windows
    # a window without a challenge is one whose every candidate the budget could not prove winnable
    for variant, kind, start in windows - prepared:
        tried = candidate_answers(app, variant, kind, start.date())
        assert None not in tried and "winnable" not in tried, (variant, kind, start, tried)
    assert ("yukon-classic", "daily", window("daily", datetime.now(UTC))[0]) in prepared


def test_a_fresh_service_prepares_todays_challenges_before_anything_else(tier):
    """Issue 42: a fresh deployment taking records answered 503 for the daily challenge for
    minutes, its preparation queued behind everything else. Four long searches are queued
    first, then the beat's first message (sent as it starts); the one worker process takes the
    preparation first, from its queue of its own: today's daily challenges are stored while
    every search still waits."""
    from datetime import datetime

    from api import tasks
    from api.challenges.windows import window
    from api.platform.models import Challenge

    app = tier.app(TRUSTED_PROXIES=1, SOLVER_BUDGET_NODES=100_000, CHALLENGE_NODES=20000)
    client = app.test_client()
    codes = [str(engine.GameCode("FT", "N", n)) for n in range(3000, 3004)]
    for number, code in enumerate(codes):
        assert client.get(solvability_url(code), headers=from_ip(f"10.4.0.{number}")).status_code == 202
    tasks.prepare_at_start(app.extensions["api.celery"])
    tier.worker(CHALLENGE_NODES=20000)
    today = window("daily", datetime.now(UTC))[0]

    def unprepared() -> set[str]:
        """The variants whose daily is neither stored nor given up (every candidate searched, none
        proved winnable)."""
        stored = {c.variant for c in rows(app, Challenge) if c.kind == "daily" and c.starts_at == today}
        return {variant for variant in engine.BY_VARIANT if variant not in stored and not all(
            answer not in (None, "pending", "winnable") for answer in candidate_answers(app, variant, "daily",
                                                                                      today.date()))}

    deadline = time.monotonic() + 3 * WAIT_SECONDS
    while unprepared():
        assert time.monotonic() < deadline, "today's daily challenges were not prepared"
        time.sleep(0.5)
    searched = [row for row in rows(app, Solvability) if row.code in codes]
    assert [row.status for row in searched] == ["pending"] * 4, [(row.code, row.status) for row in searched]
    dailies = {c.variant for c in rows(app, Challenge) if c.kind == "daily" and c.starts_at == today}
    assert "yukon-classic" in dailies and dailies <= set(engine.BY_VARIANT)
    for variant in dailies:
        served = client.get(f"{API}/challenges/daily?variant={variant}")
        assert served.status_code == 200 and served.get_json()["code"] is None


def test_a_key_is_accepted_and_served_first_while_32_anonymous_addresses_hold_the_queue(tier):
    """Issue 22: 32 addresses x 2 searches held all 64 places and a game backend with an API
    key got 503 on 35 of 35 requests. Now the anonymous half fills, the rest of them are
    503, the key's search is accepted, and the first worker process to be free runs it."""
    from api.platform.auth import create_key

    app = tier.app(TRUSTED_PROXIES=1, SOLVER_BUDGET_NODES=3000)
    client = app.test_client()
    codes = [str(engine.GameCode("FT", "N", n)) for n in range(3000, 3064)]
    statuses = [client.get(solvability_url(code), headers=from_ip(f"10.4.0.{i // 2}")).status_code
                for i, code in enumerate(codes)]
    assert statuses.count(202) == 32 and statuses.count(503) == 32, statuses  # anonymous: half the places
    with app.extensions["api.platform.db"].sessions() as session:
        backend = {"Authorization": f"Bearer {create_key(session, 'game-backend')[1]}"}
    keyed = str(engine.GameCode("YU", "C", 4242))
    assert client.get(solvability_url(keyed), headers=backend).status_code == 202
    tier.worker()
    answer = wait_for(client, solvability_url(keyed), headers=backend).get_json()
    assert answer["status"] in ("winnable", "unwinnable", "unknown")
    with app.extensions["api.platform.db"].sessions() as session:
        answered = session.scalars(select(Solvability).where(Solvability.status != "pending")
                                   .order_by(Solvability.solved_at)).all()
    assert answered[0].code == keyed, [row.code for row in answered]  # ahead of the 32 waiting searches


def test_with_fairplay_judge_worker_a_record_is_judged_by_a_worker_and_joins_its_board(tier):
    """``FAIRPLAY_JUDGE=worker`` end to end: the web process's ask goes through the broker, a worker
    judges the record (a copy of another player's earlier game as well), and the boards follow."""
    app = tier.app(FAIRPLAY_JUDGE="worker")
    tier.worker()
    client = app.test_client()
    code = "FT1-N-AAAAAAB"
    log = play_greedy(code, 80)  # (long enough that its very log again is a copy)
    stored = [client.post(f"{API}/records", json={"code": code, "moves": log, "player": name}).get_json()
              for name in ("tier-ann", "tier-bob")]
    assert [[found["flag"] for found in record["flags"]] for record in stored] == [["pending"], ["pending"]]
    deadline = time.monotonic() + WAIT_SECONDS
    while any(found["flag"] == "pending" for record in stored for found in record["flags"]):
        assert time.monotonic() < deadline, f"still waiting for their judgement: {stored}"
        time.sleep(0.2)
        stored = [client.get(f"{API}/records/{record['id']}").get_json() for record in stored]
    assert [record["ranked"] for record in stored] == [True, False]
    assert stored[1]["copy_of"] == stored[0]["id"]
    board = client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"]
    assert [entry["player"] for entry in board] == ["tier-ann"]
