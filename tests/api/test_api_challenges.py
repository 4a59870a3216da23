"""Challenges: derivation vectors, windows, the winnable pick and its par, the CLI,
the endpoints, challenge boards and standings, the winnable pool, player statistics."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from sqlalchemy import select, update

from api.boards import upkeep
from api.challenges import windows as challenges
from api.platform.models import Challenge, Record, Solvability, SolverJob
from api.players.stats import streaks
from api.solver.searches import Budget
from verifier import replay

API = "/api/v1"
PROBLEMS = "https://solitaire-verifier.example/problems/"
UTC = UTC
#: a small node budget keeps the searches of these tests short
BUDGET = Budget(60.0, 20000)
#: the derivation key of the vectors (a service's own is CHALLENGE_KEY, or generated: secret)
KEY = b"test-key-" + b"1" * 23


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("variant, kind, first_day, index, code, other", [
    ("yukon-classic", "daily", date(2026, 12, 1), 0, "YU1-C-N3IIOUQ", "YU1-C-JLRUNPS"),
    ("yukon-classic", "daily", date(2026, 12, 1), 1, "YU1-C-EA7QFLB", "YU1-C-O7T52XH"),
    ("yukon-relaxed", "weekly", date(2026, 11, 30), 0, "YU1-R-2SN64XW", "YU1-R-COMW6P2"),
    ("forty-thieves", "daily", date(2027, 1, 1), 0, "FT1-N-LRDIUBU", "FT1-N-TBN4JWN"),
])
def test_candidate_vectors(variant, kind, first_day, index, code, other):
    """HMAC-SHA256 with the key: the same window with another key gives other candidates, and
    the unkeyed formula of before (sha256 of the same text: YU1-C-ZSJXAKN for the first) is gone."""
    assert str(challenges.candidate(variant, kind, first_day, index, KEY)) == code
    assert str(challenges.candidate(variant, kind, first_day, index, b"another-key-" + b"1" * 20)) == other
    assert str(challenges.candidate("yukon-classic", "daily", date(2026, 12, 1), 0, KEY)) != "YU1-C-ZSJXAKN"


@pytest.mark.parametrize("moment, kind, start, end", [
    (datetime(2026, 12, 1, 0, 0, tzinfo=UTC), "daily", datetime(2026, 12, 1, tzinfo=UTC),
     datetime(2026, 12, 2, tzinfo=UTC)),
    (datetime(2026, 12, 1, 23, 59, 59, 999999, tzinfo=UTC), "daily", datetime(2026, 12, 1, tzinfo=UTC),
     datetime(2026, 12, 2, tzinfo=UTC)),
    (datetime(2026, 12, 2, 1, 0, tzinfo=timezone(timedelta(hours=3))), "daily", datetime(2026, 12, 1, tzinfo=UTC),
     datetime(2026, 12, 2, tzinfo=UTC)),  # 22:00 UTC the day before
    (datetime(2026, 11, 30, 0, 0, tzinfo=UTC), "weekly", datetime(2026, 11, 30, tzinfo=UTC),
     datetime(2026, 12, 7, tzinfo=UTC)),  # a Monday
    (datetime(2026, 12, 6, 23, 59, 59, tzinfo=UTC), "weekly", datetime(2026, 11, 30, tzinfo=UTC),
     datetime(2026, 12, 7, tzinfo=UTC)),  # the Sunday after
    (datetime(2026, 12, 7, 0, 0, tzinfo=UTC), "weekly", datetime(2026, 12, 7, tzinfo=UTC),
     datetime(2026, 12, 14, tzinfo=UTC)),
])
def test_windows_at_the_day_and_week_boundaries(moment, kind, start, end):
    assert challenges.window(kind, moment) == (start, end)


def test_every_challenge_is_the_first_candidate_proved_winnable_with_its_par(app):
    day = date(2026, 12, 1)
    with app.extensions["api.platform.db"].sessions() as session:
        prepared = challenges.prepare_challenges(session, day, BUDGET, 8, KEY, ahead=0)
        assert len(prepared) == 6 and all(c is not None for c in prepared)
        for challenge in prepared:
            start, end = challenges.window(challenge.kind, datetime(2026, 12, 1, 12, tzinfo=UTC))
            assert (challenge.starts_at, challenge.ends_at) == (start, end)
            codes = challenges.candidates(challenge.variant, challenge.kind, start.date(), challenge.candidate + 1,
                                          KEY)
            assert challenge.code == str(codes[-1])
            for earlier in codes[:-1]:  # passed over: not proved within the budget
                row = session.scalar(select(Solvability).where(Solvability.code == str(earlier)))
                assert row.status in ("unknown", "unwinnable")
            row = challenges.proved_winnable(session, codes[-1])
            assert row is not None and row.verified
            verdict = replay(challenge.code, challenge.par_line.split())
            assert verdict.legal and verdict.won and verdict.moves == challenge.par
            assert challenge.par <= replay(challenge.code, row.solution.split()).moves
        # a second run finds them prepared and searches nothing more
        searches = session.scalar(select(Solvability.id).order_by(Solvability.id.desc()).limit(1))
        again = challenges.prepare_challenges(session, day, BUDGET, 8, KEY, ahead=0)
        assert [c.id for c in again] == [c.id for c in prepared]
        assert session.scalar(select(Solvability.id).order_by(Solvability.id.desc()).limit(1)) == searches
    forty = [c for c in prepared if c.variant == "forty-thieves" and c.kind == "daily"][0]
    assert forty.candidate > 0  # candidate 0 needs more than this budget: passed over


def _detour(code, line):
    """Somewhere along ``line``: a move and the move that puts the same cards back (same layout)."""
    from engine import Game

    game = Game.from_code(code)
    for at, action in enumerate(line):
        before = str(game.position).rsplit(" ", 3)[0]  # the layout, without the counters
        for first in game.legal_actions():
            game.push(first)
            for second in game.legal_actions():
                game.push(second)
                same = str(game.position).rsplit(" ", 3)[0] == before
                game.undo()
                if same:
                    game.undo()
                    return at, [str(first), str(second)]
            game.undo()
        game.push_text(action)
    return None


def test_shorten_drops_a_pair_of_moves_that_cancel():
    from verifier.solving import solve_code

    code = "YU1-C-ZSJXAKN"
    line = list(solve_code(code, budget_seconds=60, max_nodes=20000).actions)
    shortest = challenges.shorten(code, line)
    assert len(shortest) <= len(line) and replay(code, shortest).won
    assert challenges.shorten(code, shortest) == shortest
    found = _detour(code, shortest)
    assert found is not None
    at, detour = found
    longer = shortest[:at] + detour + shortest[at:]
    assert replay(code, longer).won
    assert challenges.shorten(code, longer) == shortest


def make_challenge(session, variant="forty-thieves", kind="daily", day=date(2025, 1, 1), code="FT1-N-AAAAAAB",
                   attempts_required=True):
    """A challenge; ``attempts_required=False``: one prepared before attempts existed (its board
    counts every record received in the window)."""
    start, end = challenges.window(kind, datetime.combine(day, datetime.min.time(), UTC))
    challenge = Challenge(variant=variant, kind=kind, starts_at=start, ends_at=end, code=code, candidate=0, par=90,
                          par_line="S", prepared_at=start - timedelta(hours=1), attempts_required=attempts_required)
    session.add(challenge)
    session.flush()
    upkeep.fill_challenge(session.connection(), challenge.id)
    session.commit()
    return challenge


def test_a_challenge_board_from_before_attempts_counts_records_received_inside_its_window(client, app, records):
    start = datetime(2025, 1, 1, tzinfo=UTC)
    records.create(player="early", game_code="FT1-N-AAAAAAB", score=50, received_at=start - timedelta(seconds=1))
    records.create(player="before-prep", game_code="FT1-N-AAAAAAB", score=20, received_at=start)
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = make_challenge(session, attempts_required=False)
        challenge_id = challenge.id
    records.create(player="inside", game_code="FT1-N-AAAAAAB", won=True, score=1040, moves=300,
                   received_at=start + timedelta(hours=23, minutes=59))
    records.create(player="late", game_code="FT1-N-AAAAAAB", won=True, score=1040,
                   received_at=start + timedelta(days=1))
    records.create(player="other-deal", game_code="FT1-N-AAAAAAC", score=30, received_at=start + timedelta(hours=1))
    body = client.get(f"{API}/challenges/{challenge_id}/board?player=inside").get_json()
    assert [(e["rank"], e["player"]) for e in body["entries"]] == [(1, "inside"), (2, "before-prep")]
    assert body["player"] == {"player": "inside", "rank": 1, "entries": 2, "top_percent": 50, "percentile": 50.0}
    assert body["challenge"]["final"] is True and body["challenge"]["code"] == "FT1-N-AAAAAAB"
    standings = client.get(f"{API}/standings?variant=forty-thieves").get_json()
    assert [(e["rank"], e["player"], e["points"], e["challenges_won"]) for e in standings["entries"]] == [
        (1, "inside", 3, 1), (2, "before-prep", 1, 0)]
    archive = client.get(f"{API}/challenges?variant=forty-thieves").get_json()
    assert [c["id"] for c in archive["items"]] == [challenge_id]
    assert [e["player"] for e in archive["items"][0]["podium"]] == ["inside", "before-prep"]
    assert client.get(f"{API}/challenges/{challenge_id}").get_json()["next_reset"] == "2025-01-02T00:00:00+00:00"
    assert client.get(f"{API}/challenges/999999").status_code == 404


def test_the_current_challenge_is_served_once_prepared_and_503_before(client, app):
    app.config["SOLVER_ENABLED"] = False  # no preparation in the request (embedded mode)
    response = client.get(f"{API}/challenges/daily?variant=yukon-classic")
    assert response.status_code == 503 and response.headers["Retry-After"] == "15"
    now = datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = make_challenge(session, "yukon-classic", "weekly", now.date(), "YU1-C-AAAAAAB")
        weekly_id = challenge.id
    body = client.get(f"{API}/challenges/weekly?variant=yukon-classic").get_json()
    assert body["id"] == weekly_id and body["kind"] == "weekly" and body["final"] is False
    start, end = challenges.window("weekly", now)
    assert (body["starts_at"], body["next_reset"]) == (start.isoformat(), end.isoformat())
    etag = client.get(f"{API}/challenges/weekly?variant=yukon-classic").headers["ETag"]
    assert client.get(f"{API}/challenges/weekly?variant=yukon-classic",
                      headers={"If-None-Match": etag}).status_code == 304
    assert client.get(f"{API}/challenges/daily?variant=yukon").status_code == 422


def test_the_winnable_pool(client, app):
    app.config["SOLVER_ENABLED"] = False  # no search in the request (embedded mode)
    response = client.get(f"{API}/deals/random?variant=yukon-relaxed&winnable=true")
    assert response.status_code == 503 and "Retry-After" in response.headers
    with app.extensions["api.platform.db"].sessions() as session:
        ran = challenges.refill_winnable_pool(session, "yukon-relaxed", 2, BUDGET, 10, random.Random(7))
        assert 2 <= ran <= 10
        assert challenges.pool_size(session, "yukon-relaxed", 100) == 2
        proved = set(session.scalars(select(Solvability.code).where(Solvability.status == "winnable")))
        assert challenges.refill_winnable_pool(session, "yukon-relaxed", 2, BUDGET, 10) == 0  # full: no search
    seen = set()
    for _ in range(20):
        body = client.get(f"{API}/deals/random?variant=yukon-relaxed&winnable=true").get_json()
        assert body["winnable"] is True and body["code"] in proved
        seen.add(body["code"])
    assert seen == proved
    anything = client.get(f"{API}/deals/random?variant=forty-thieves").get_json()
    assert anything["code"].startswith("FT1-N-") and anything["winnable"] is None


def test_the_cli_prepares_the_day(app):
    runner = app.test_cli_runner()
    app.config["CHALLENGE_NODES"] = 20000
    app.config["CHALLENGE_KEY"] = KEY.decode()  # (a generated key may leave a window without a winnable candidate)
    result = runner.invoke(args=["challenges", "prepare", "--day", "2026-12-01", "--ahead", "0"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 6 and "yukon-classic daily 2026-12-01: YU1-C-" in result.stdout


# -- player statistics ----------------------------------------------------------

@pytest.mark.parametrize("days, today, expected", [
    ([], date(2025, 1, 10), (0, 0)),
    ([date(2025, 1, 1), date(2025, 1, 2), date(2025, 1, 3)], date(2025, 1, 3), (3, 3)),
    ([date(2025, 1, 1), date(2025, 1, 2), date(2025, 1, 3)], date(2025, 1, 4), (3, 3)),  # today still open
    ([date(2025, 1, 1), date(2025, 1, 2), date(2025, 1, 3)], date(2025, 1, 5), (0, 3)),  # a missed day
    ([date(2025, 1, 1), date(2025, 1, 2), date(2025, 1, 4), date(2025, 1, 5)], date(2025, 1, 5), (2, 2)),
    ([date(2025, 1, 1), date(2025, 1, 3), date(2025, 1, 4), date(2025, 1, 5), date(2025, 1, 8)],
     date(2025, 1, 8), (1, 3)),
])
def test_streaks_across_missed_days(days, today, expected):
    assert streaks(days, today) == expected


def test_player_stats(client, app, records):
    with app.extensions["api.platform.db"].sessions() as session:
        for day in (1, 2, 4):
            make_challenge(session, day=date(2025, 1, day), code="FT1-N-AAAAAAB", attempts_required=False)
    for day, won in ((1, True), (2, True), (4, True)):
        records.create(player="ann", game_code="FT1-N-AAAAAAB", won=won, score=1040, moves=300 + day, takebacks=1,
                       received_at=datetime(2025, 1, day, 9, tzinfo=UTC))
    records.create(player="ann", game_code="FT1-N-AAAAAAC", score=70, moves=40,
                   received_at=datetime(2025, 1, 3, 9, tzinfo=UTC))
    records.create(player="ann", game_code="YU1-C-AAAAAAB", score=15, moves=9, takebacks=2)
    body = client.get(f"{API}/players/ann/stats").get_json()
    assert body["player"] == "ann"
    forty, yukon = body["variants"]
    assert forty == {"variant": "forty-thieves", "games": 4, "wins": 3, "win_rate": 0.75, "best_score": 1040,
                     "average_moves_to_win": 302.33, "takebacks": 3, "current_streak": 0, "best_streak": 2}
    assert yukon == {"variant": "yukon-classic", "games": 1, "wins": 0, "win_rate": 0.0, "best_score": 15,
                     "average_moves_to_win": None, "takebacks": 2, "current_streak": 0, "best_streak": 0}
    assert client.get(f"{API}/players/ann/stats?variant=yukon-classic").get_json()["variants"] == [yukon]
    assert client.get(f"{API}/players/nobody/stats").status_code == 404
    assert client.get(f"{API}/players/ann/stats?variant=x").status_code == 422
    assert client.get(f"{API}/players/{'x' * 40}/stats").status_code == 422


def test_a_submitted_record_reaches_todays_challenge_board_standings_and_stats(client, app, legal_log):
    with app.extensions["api.platform.db"].sessions() as session:
        challenge_id = make_challenge(session, "forty-thieves", "daily", datetime.now(UTC).date(), "FT1-N-AAAAAAB").id
    attempts = {}
    for player in ("ann", "bob"):
        token = client.post(f"{API}/players", json={"name": player}).get_json()["token"]
        attempt = client.post(f"{API}/challenges/{challenge_id}/attempts", headers=bearer(token)).get_json()
        attempts[player] = (token, attempt["attempt"])
    for player, length in (("ann", 3), ("bob", 5)):
        token, attempt = attempts[player]
        response = client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "attempt": attempt,
                                                        "moves": legal_log("FT1-N-AAAAAAB", length)},
                               headers=bearer(attempts[player][0]))
        assert response.status_code == 201, response.get_data(as_text=True)
    again = client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "moves": legal_log("FT1-N-AAAAAAB", 7)},
                        headers=bearer(attempts["ann"][0]))  # no attempt: the deal's boards only
    assert again.status_code == 201
    body = client.get(f"{API}/challenges/{challenge_id}/board").get_json()
    deal = client.get(f"{API}/leaderboard?variant=forty-thieves&code=FT1-N-AAAAAAB").get_json()
    assert [e["player"] for e in body["entries"]] == [e["player"] for e in deal["entries"]]
    assert [e["record_id"] for e in body["entries"]] != [e["record_id"] for e in deal["entries"]]
    assert all(e["code"] is None and e["server_elapsed_ms"] >= 0 for e in body["entries"])
    standings = client.get(f"{API}/standings?variant=forty-thieves&player=bob").get_json()
    assert sorted((e["rank"], e["player"], e["points"], e["challenges_played"]) for e in standings["entries"]) == [
        (1, "ann", 1, 1), (1, "bob", 1, 1)]
    assert standings["player"]["rank"] == 1  # equal points share the rank
    stats = client.get(f"{API}/players/ann/stats").get_json()["variants"][0]
    assert (stats["games"], stats["wins"], stats["current_streak"]) == (2, 0, 0)


# -- the worker tier's part: tasks, beat, the embedded mode ------------------------

def test_the_beat_schedule_sends_registered_tasks_to_their_queues(tmp_path):
    from api import tasks
    from api.platform.config import load_settings

    celery = tasks.make_celery({**load_settings(str(tmp_path)), "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
                                "CELERY_QUEUE_PREFIX": "beat-test"})
    schedule = celery.conf.beat_schedule
    assert {entry["task"] for entry in schedule.values()} == {tasks.PREPARE, tasks.REFILL, tasks.WEBHOOK_SWEEP,
                                                              tasks.JUDGE_SWEEP, tasks.WEBHOOK_PRUNE}
    routes = celery.conf.task_routes
    for entry in schedule.values():
        task = celery.tasks[entry["task"]]  # registered
        assert task.acks_late and task.soft_time_limit < task.time_limit
        # issue 22: refills sent every 5 minutes ran up to 600 s and overlapped; a run now ends
        # (hard limit) before the next is sent, and waits behind everything else on its queue
        assert task.time_limit < entry["schedule"]
        assert entry["options"]["expires"] == entry["schedule"] > 0
        assert entry["options"]["priority"] == tasks.LOW_PRIORITY == 9  # Redis: 0 first, 9 last
        # issue 42: the challenges' preparation has a queue of its own, the first a worker takes from
        wanted = "beat-test.challenges" if entry["task"] == tasks.PREPARE else "beat-test.bulk"
        assert routes[entry["task"]]["queue"] == wanted
    assert [queue.name for queue in celery.conf.task_queues][0] == "beat-test.challenges"


def test_a_scheduled_task_does_nothing_while_another_run_holds_its_lock(make_empty_app):
    """Issue 22: two refills at once took both worker processes. A run that finds the
    lock held ends at once; once the lock is free (or expired) the next run works."""
    from api import tasks

    app = make_empty_app(CHALLENGE_NODES=20000, WINNABLE_POOL_SIZE=1)
    with app.app_context():
        held = tasks.challenges._lock(app, tasks.REFILL)
        assert held is not None and tasks.challenges._lock(app, tasks.REFILL) is None  # one holder at a time
        assert tasks.refill_winnable_pool(variant="yukon-relaxed", searches=3) == 0
        assert tasks.prepare_challenges(ahead=0, variant="yukon-classic", kind="daily") == 0  # its own lock
        with app.extensions["api.platform.db"].sessions() as session:
            assert session.scalars(select(Solvability).where(Solvability.variant == "yukon-relaxed")).all() == []
            assert len(session.scalars(select(Challenge)).all()) == 1
            assert [job.id for job in session.scalars(select(SolverJob))] == [held]  # prepare freed its own
        tasks.challenges._release_marker(app, held)
        assert tasks.refill_winnable_pool(variant="yukon-relaxed", searches=3) >= 1
        with app.extensions["api.platform.db"].sessions() as session:
            assert session.scalars(select(SolverJob)).all() == []


def test_the_pool_is_searched_at_its_own_budget_and_challenges_at_theirs(make_empty_app):
    """The pool fixes no deal (any proved deal will do), so its searches use the smaller
    WINNABLE_POOL_NODES, from the task and the command alike; a challenge's candidates keep
    CHALLENGE_NODES, which is part of which deal a window's challenge is."""
    from api import tasks

    app = make_empty_app(CHALLENGE_NODES=20000, WINNABLE_POOL_NODES=3000, WINNABLE_POOL_SIZE=2)
    with app.app_context():
        assert tasks.refill_winnable_pool(variant="yukon-relaxed", searches=2) >= 1
    result = app.test_cli_runner().invoke(args=["challenges", "refill-pool", "--variant", "yukon-classic",
                                                "--searches", "2"])
    assert result.exit_code == 0, result.output
    with app.extensions["api.platform.db"].sessions() as session:
        pool = session.scalars(select(Solvability)).all()
        assert {row.variant for row in pool} == {"yukon-relaxed", "yukon-classic"}
        assert {row.budget_nodes for row in pool} == {3000}
    with app.app_context():
        assert tasks.prepare_challenges(ahead=0, variant="yukon-classic", kind="daily") == 0
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = session.scalars(select(Challenge)).one()
        searched = session.scalars(select(Solvability).where(Solvability.code == challenge.code)).all()
        assert [row.budget_nodes for row in searched] == [20000]


def test_the_embedded_mode_prepares_the_window_in_the_first_request(make_empty_app):
    app = make_empty_app(CHALLENGE_NODES=20000)
    client = app.test_client()
    body = client.get(f"{API}/challenges/daily?variant=yukon-classic").get_json()
    today = datetime.now(UTC).date()
    assert body["code"] is None and body["candidate"] is None and body["kind"] == "daily"  # secret while it runs
    with app.extensions["api.platform.db"].sessions() as session:
        stored = session.scalars(select(Challenge)).one()
        key = challenges.derivation_key(session, None)  # the key the service generated and stored
        codes = [str(c) for c in challenges.candidates("yukon-classic", "daily", today, stored.candidate + 1, key)]
        assert (stored.variant, stored.kind, stored.code) == ("yukon-classic", "daily", codes[-1])
        assert session.scalars(select(SolverJob)).all() == []  # the marker is freed
    assert client.get(f"{API}/challenges/daily?variant=yukon-classic").get_json()["id"] == body["id"]


def test_the_embedded_mode_searches_a_few_deals_for_an_empty_pool(make_empty_app):
    app = make_empty_app(CHALLENGE_NODES=20000)
    client = app.test_client()
    for _ in range(5):  # three random deals a request: each request most likely proves one
        response = client.get(f"{API}/deals/random?variant=yukon-relaxed&winnable=true")
        if response.status_code == 200:
            break
        assert response.status_code == 503 and "Retry-After" in response.headers
    assert response.status_code == 200 and response.get_json()["winnable"] is True
    with app.extensions["api.platform.db"].sessions() as session:
        assert challenges.pool_size(session, "yukon-relaxed", 10) >= 1
        assert session.scalars(select(SolverJob)).all() == []


def test_a_preparation_in_flight_is_not_sent_again(make_empty_app):
    """While a marker is held (a task in flight), a request sends nothing and answers 503;
    once the marker has expired (a lost task), the next request prepares the window."""
    app = make_empty_app(CHALLENGE_NODES=20000)
    client = app.test_client()
    now = datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        session.add(SolverJob(client="task:api.prepare_challenges", client_slot=0, slot=-1, kind="challenges",
                              created_at=now, expires_at=now + timedelta(minutes=5)))
        session.commit()
    # Yukon: within 20,000 positions one of a window's candidates is proved winnable (a Forty
    # Thieves window now and then has none, with the database's random key)
    response = client.get(f"{API}/challenges/weekly?variant=yukon-relaxed")
    assert response.status_code == 503 and response.headers["Retry-After"] == "15"
    with app.extensions["api.platform.db"].sessions() as session:
        assert session.scalars(select(Challenge)).all() == []
        session.execute(update(SolverJob).values(expires_at=now - timedelta(seconds=1)))
        session.commit()
    assert client.get(f"{API}/challenges/weekly?variant=yukon-relaxed").status_code == 200


def test_nothing_is_searched_for_a_request_while_the_solver_is_off(make_empty_app):
    app = make_empty_app(SOLVER_ENABLED=False)
    client = app.test_client()
    assert client.get(f"{API}/challenges/daily?variant=yukon-relaxed").status_code == 503
    assert client.get(f"{API}/deals/random?variant=forty-thieves&winnable=true").status_code == 503
    with app.extensions["api.platform.db"].sessions() as session:
        assert session.scalars(select(Solvability)).all() == []


# -- attempts, timed by the server -----------------------------------------------------

FT = "FT1-N-AAAAAAB"


def running(app, code=FT, day=None, kind="daily"):
    """Today's (or ``day``'s) forty-thieves challenge on ``code``, which needs attempts; its id."""
    with app.extensions["api.platform.db"].sessions() as session:
        return make_challenge(session, "forty-thieves", kind, day or datetime.now(UTC).date(), code).id


def player_token(client, name):
    response = client.post(f"{API}/players", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def start(client, challenge_id, token):
    return client.post(f"{API}/challenges/{challenge_id}/attempts", headers=bearer(token) if token else {})


def set_started_at(app, attempt_id, moment):
    from api.platform.models import ChallengeAttempt

    with app.extensions["api.platform.db"].sessions() as session:
        session.execute(update(ChallengeAttempt).where(ChallengeAttempt.id == attempt_id).values(started_at=moment))
        session.commit()


def test_an_attempt_hands_out_the_code_once_per_player(client, app, make_key):
    challenge_id = running(app)
    ann = player_token(client, "ann")
    assert start(client, challenge_id, None).status_code == 401
    assert start(client, challenge_id, "svp_" + "x" * 43).status_code == 401
    forbidden = start(client, challenge_id, make_key("backend"))
    assert forbidden.status_code == 403 and forbidden.get_json()["type"] == PROBLEMS + "forbidden"
    assert start(client, 999999, ann).status_code == 404
    before = datetime.now(UTC)
    response = start(client, challenge_id, ann)
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"attempt", "challenge", "code", "started_at", "ends_at"}
    assert body["code"] == FT and body["challenge"] == challenge_id
    assert before <= datetime.fromisoformat(body["started_at"]) <= datetime.now(UTC)
    again = start(client, challenge_id, ann)
    assert again.status_code == 409
    problem = again.get_json()
    assert problem["type"] == PROBLEMS + "attempt-exists"
    assert "only a player's first attempt counts" in problem["detail"]
    assert (problem["attempt"], problem["code"], problem["started_at"]) == (body["attempt"], FT, body["started_at"])
    bob = start(client, challenge_id, player_token(client, "bob"))
    assert bob.status_code == 201 and bob.get_json()["attempt"] != body["attempt"]


def test_no_attempt_outside_the_window(client, app):
    ann = player_token(client, "ann")
    closed = running(app, day=date(2025, 1, 1))
    opens = running(app, code="FT1-N-AAAAAAC", day=datetime.now(UTC).date() + timedelta(days=1))
    response = start(client, closed, ann)
    assert response.status_code == 409
    problem = response.get_json()
    assert problem["type"] == PROBLEMS + "challenge-not-running"
    assert "its window closed at 2025-01-02T00:00:00+00:00" in problem["detail"]
    # a challenge prepared ahead is not public before its window opens: as if there were none
    for answer in (start(client, opens, ann), client.get(f"{API}/challenges/{opens}"),
                   client.get(f"{API}/challenges/{opens}/board")):
        assert answer.status_code == 404 and answer.get_json()["detail"] == f"there is no challenge {opens}"


def test_a_running_challenges_code_is_withheld_from_every_public_read(client, app, legal_log):
    from api.platform.models import Challenge

    challenge_id = running(app)
    ann = player_token(client, "ann")
    attempt = start(client, challenge_id, ann).get_json()["attempt"]
    stored = client.post(f"{API}/records", json={"code": FT, "attempt": attempt, "moves": legal_log(FT, 3)},
                         headers=bearer(ann))
    assert stored.status_code == 201 and stored.get_json()["code"] == FT  # the player's own answer holds it
    record_id = stored.get_json()["id"]

    def reads():
        yield client.get(f"{API}/challenges/daily?variant=forty-thieves").get_data(as_text=True)
        yield client.get(f"{API}/challenges/{challenge_id}").get_data(as_text=True)
        yield client.get(f"{API}/challenges?variant=forty-thieves").get_data(as_text=True)  # with the podium
        yield client.get(f"{API}/challenges/{challenge_id}/board").get_data(as_text=True)
        yield client.get(f"{API}/leaderboard?variant=forty-thieves").get_data(as_text=True)
        yield client.get(f"{API}/records").get_data(as_text=True)
        yield client.get(f"{API}/records?player=ann").get_data(as_text=True)
        yield client.get(f"{API}/records/{record_id}").get_data(as_text=True)
        yield client.get("/challenges/forty-thieves").get_data(as_text=True)
        yield client.get("/players/ann").get_data(as_text=True)
        yield client.get(f"/records/{record_id}").get_data(as_text=True)

    assert [i for i, text in enumerate(reads()) if FT in text] == []
    assert client.get(f"{API}/records/{record_id}").status_code == 404
    assert client.get(f"/records/{record_id}").status_code == 200  # its spoiler-safe page (no code: above)
    board = client.get(f"{API}/challenges/{challenge_id}/board").get_json()
    assert [(e["player"], e["code"]) for e in board["entries"]] == [("ann", None)]
    with app.extensions["api.platform.db"].sessions() as session:  # the window closes
        challenge = session.get(Challenge, challenge_id)
        challenge.starts_at, challenge.ends_at = (challenge.starts_at - timedelta(days=2),
                                                  challenge.ends_at - timedelta(days=2))
        session.commit()
    texts = list(reads())
    assert all(FT in text for text in texts[1:])  # (no daily challenge runs now: the first read is 503)
    assert client.get(f"{API}/challenges/{challenge_id}").get_json()["final"] is True


def test_a_record_names_an_attempt_of_its_player_on_its_deal_and_is_its_one_game(client, app, legal_log):
    challenge_id = running(app)
    other = running(app, code="FT1-N-AAAAAAC", kind="weekly")
    ann, bob = player_token(client, "ann"), player_token(client, "bob")
    mine = start(client, challenge_id, ann).get_json()["attempt"]
    bobs = start(client, challenge_id, bob).get_json()["attempt"]
    elsewhere = start(client, other, ann).get_json()["attempt"]

    def submit(token, attempt, length=3, code=FT):
        return client.post(f"{API}/records", json={"code": code, "attempt": attempt, "moves": legal_log(code, length)},
                           headers=bearer(token))

    for attempt, words in ((bobs, f"'ann' has no attempt {bobs}"), (999999, "'ann' has no attempt 999999"),
                           (elsewhere, f"attempt {elsewhere} is at challenge {other}, whose deal is not {FT}")):
        response = submit(ann, attempt)
        assert response.status_code == 422, response.get_json()
        problem = response.get_json()
        assert problem["errors"][0]["field"] == "attempt" and words in problem["detail"]
    assert submit(ann, 0).status_code == 422
    first = submit(ann, mine)
    assert first.status_code == 201
    record = first.get_json()
    assert record["attempt"] == mine and 0 <= record["server_elapsed_ms"] < 60_000
    same = submit(ann, mine)
    assert same.status_code == 200 and same.get_json()["id"] == record["id"]  # the same game again
    second = submit(ann, mine, length=5)
    assert second.status_code == 409
    assert second.get_json()["type"] == PROBLEMS + "attempt-used" and f"record {record['id']}" in \
        second.get_json()["detail"]
    plain = client.post(f"{API}/records", json={"code": FT, "moves": legal_log(FT, 7)}, headers=bearer(bob))
    assert plain.status_code == 201 and plain.get_json()["attempt"] is None
    board = client.get(f"{API}/challenges/{challenge_id}/board").get_json()["entries"]
    assert [(e["player"], e["record_id"]) for e in board] == [("ann", record["id"])]  # bob's game had no attempt
    deal = client.get(f"{API}/leaderboard?variant=forty-thieves&code={FT}").get_json()["entries"]
    assert {e["player"] for e in deal} == {"ann", "bob"}


def test_the_board_shows_the_servers_time_and_a_longer_claim_is_a_timing_flag(client, app, legal_log):
    challenge_id = running(app)
    now = datetime.now(UTC)
    results = {}
    for length, (name, ago, claim) in enumerate((
            ("ann", timedelta(minutes=10), {"elapsed_ms": 300_000}),
            ("bob", timedelta(minutes=1), {"elapsed_ms": 300_000}),   # 5 min in 1
            ("cid", timedelta(minutes=1), {"times": [1000, 2000, 3000, 200_000]}),
            ("dee", timedelta(minutes=1), {"elapsed_ms": 5_000})), 2):  # less than the server's time is fine
        token = player_token(client, name)
        attempt = start(client, challenge_id, token).get_json()["attempt"]
        set_started_at(app, attempt, now - ago)
        moves = legal_log(FT, len(claim["times"]) if "times" in claim else length)
        response = client.post(f"{API}/records", json={"code": FT, "attempt": attempt, "moves": moves, **claim},
                               headers=bearer(token))
        assert response.status_code == 201, response.get_json()
        results[name] = response.get_json()
    ann = results["ann"]
    assert 600_000 <= ann["server_elapsed_ms"] < 660_000 and ann["flags"] == [] and ann["ranked"]
    for name in ("bob", "cid"):
        flagged = results[name]
        assert [f["flag"] for f in flagged["flags"]] == ["timing"] and flagged["status"] == "review"
        evidence = flagged["flags"][0]["evidence"]
        assert evidence["server_elapsed_ms"] == flagged["server_elapsed_ms"] < evidence["claimed_ms"]
    assert results["dee"]["ranked"]
    board = client.get(f"{API}/challenges/{challenge_id}/board").get_json()["entries"]
    assert {e["player"]: e["server_elapsed_ms"] for e in board} == {
        "ann": ann["server_elapsed_ms"], "dee": results["dee"]["server_elapsed_ms"]}


def test_a_challenge_from_before_attempts_keeps_its_code_public_and_its_window_rule(client, app, legal_log):
    with app.extensions["api.platform.db"].sessions() as session:
        challenge_id = make_challenge(session, "forty-thieves", "daily", datetime.now(UTC).date(), FT,
                                      attempts_required=False).id
    assert client.get(f"{API}/challenges/{challenge_id}").get_json()["code"] == FT
    stored = client.post(f"{API}/records", json={"code": FT, "player": "old", "moves": legal_log(FT, 3)})
    assert stored.status_code == 201 and client.get(f"{API}/records/{stored.get_json()['id']}").status_code == 200
    board = client.get(f"{API}/challenges/{challenge_id}/board").get_json()["entries"]
    assert [(e["player"], e["code"]) for e in board] == [("old", FT)]


def race(app, threads, request):
    """``request(client)`` from ``threads`` threads at once; their answers' status codes, sorted."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    barrier = threading.Barrier(threads)

    def go(index):
        client = app.test_client()
        barrier.wait()
        return request(client, index).status_code

    with ThreadPoolExecutor(threads) as pool:
        return sorted(future.result(timeout=60) for future in [pool.submit(go, n) for n in range(threads)])


def test_concurrent_attempts_of_one_player_make_one(client, app):
    from api.platform.models import ChallengeAttempt

    challenge_id = running(app)
    token = player_token(client, "ann")
    assert race(app, 6, lambda c, _: start(c, challenge_id, token)) == [201] + [409] * 5
    with app.extensions["api.platform.db"].sessions() as session:
        assert len(session.scalars(select(ChallengeAttempt)).all()) == 1


def test_concurrent_games_of_one_attempt_store_one(client, app, legal_log, count_records):
    challenge_id = running(app)
    token = player_token(client, "ann")
    attempt = start(client, challenge_id, token).get_json()["attempt"]
    logs = [legal_log(FT, 3 + n) for n in range(6)]
    statuses = race(app, 6, lambda c, n: c.post(f"{API}/records", json={"code": FT, "attempt": attempt,
                                                                         "moves": logs[n]}, headers=bearer(token)))
    assert statuses == [201] + [409] * 5 and count_records() == 1


def test_a_backup_carries_the_attempts_and_the_servers_time(client, app, legal_log, make_app, empty_database_url,
                                                             tmp_path):
    """A backup holds the attempts and each record's ``attempt`` and ``server_elapsed_ms``: a restore
    keeps the link and the server's time."""
    import json

    challenge_id = running(app, day=date(2025, 1, 1))
    with app.extensions["api.platform.db"].sessions() as session:
        from api.platform.models import ChallengeAttempt, Player

        player = Player(name="ann", skeleton_hash=None, created_at=datetime(2025, 1, 1, tzinfo=UTC))
        session.add(player)
        session.flush()
        attempt = ChallengeAttempt(challenge_id=challenge_id, player_id=player.id,
                                   started_at=datetime(2025, 1, 1, 9, tzinfo=UTC))
        session.add(attempt)
        session.commit()
        attempt_id, player_id = attempt.id, player.id
    from tests.api.conftest import RecordFactory

    RecordFactory._meta.sqlalchemy_session = app.extensions["api.platform.db"].sessions()
    RecordFactory.create(player="ann", player_id=player_id, game_code=FT, attempt_id=attempt_id,
                         server_elapsed_ms=1234, received_at=datetime(2025, 1, 1, 9, 0, 1, 234000, tzinfo=UTC))
    RecordFactory._meta.sqlalchemy_session.close()
    backup = tmp_path / "records.jsonl"
    result = app.test_cli_runner().invoke(args=["records", "export", str(backup)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(text) for text in backup.read_text(encoding="utf-8").splitlines()[1:]]
    [record] = [line["row"] for line in lines if line["table"] == "records"]
    assert (record["attempt_id"], record["server_elapsed_ms"]) == (attempt_id, 1234)
    assert [line["row"]["id"] for line in lines if line["table"] == "challenge_attempts"] == [attempt_id]
    restored = make_app(DATABASE_URL=empty_database_url)
    result = restored.test_cli_runner().invoke(args=["records", "import", str(backup)])
    assert result.exit_code == 0, result.output
    [item] = restored.test_client().get(f"{API}/records?status=all").get_json()["items"]
    assert (item["attempt"], item["server_elapsed_ms"]) == (attempt_id, 1234)
    board = client.get(f"{API}/challenges/{challenge_id}/board").get_json()["entries"]
    assert [(e["player"], e["server_elapsed_ms"]) for e in board] == [("ann", 1234)]  # (the original's board)


# -- issue 43: a challenge nobody can compute before it starts ---------------------------

def test_the_deal_is_derived_with_the_services_key_generated_once_and_backed_up(make_empty_app):
    """Without CHALLENGE_KEY the service generates a key once and keeps it in the database (and in
    backups); CHALLENGE_KEY replaces it. The same window under two keys is two different deals."""
    import io

    from api.platform.models import ServiceKey
    from api.records.backup import export_backup

    app = make_empty_app()
    day = date(2026, 12, 1)
    with app.extensions["api.platform.db"].sessions() as session:
        generated = challenges.derivation_key(session, None)
        assert len(generated) >= 32 and challenges.derivation_key(session, None) == generated
        assert session.get(ServiceKey, challenges.KEY_NAME).secret.encode() == generated
        configured = "c" * 40
        assert challenges.derivation_key(session, configured) == configured.encode()
        out = io.StringIO()
        export_backup(session, out)
    assert '"table":"service_keys"' in out.getvalue() and generated.decode() in out.getvalue()
    # two keys: other candidates, so another challenge for the same window
    with app.extensions["api.platform.db"].sessions() as session:
        first = challenges.prepare(session, "yukon-relaxed", "daily", datetime(2026, 12, 1, 12, tzinfo=UTC), BUDGET,
                                   8, generated)
        first_code = first.code
        session.delete(first)
        session.commit()
        second = challenges.prepare(session, "yukon-relaxed", "daily", datetime(2026, 12, 1, 12, tzinfo=UTC),
                                    BUDGET, 8, configured.encode())
        assert first_code != second.code
        assert challenges.candidates("yukon-relaxed", "daily", day, 8, generated)[first.candidate] == \
            engine_code(first_code)
        # the formula without a key (sha256 of the same text, as before) gives neither
        import hashlib

        text = f"yukon-relaxed/daily/{day.isoformat()}/{second.candidate}".encode()
        unkeyed = int.from_bytes(hashlib.sha256(text).digest()[:8], "big") % challenges.DEAL_NUMBERS
        assert engine_code(second.code).number != unkeyed


def engine_code(text):
    from engine import GameCode

    return GameCode.from_text(text)


def test_a_stored_challenge_keeps_its_deal_whatever_the_key(make_empty_app):
    """Challenges prepared before the key (sha256 candidates) keep their codes: a preparation run
    leaves a stored window alone, with any key."""
    app = make_empty_app()
    now = datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        old = make_challenge(session, "yukon-classic", "daily", now.date(), "YU1-C-ZSJXAKN")
        found = challenges.prepare(session, "yukon-classic", "daily", now, BUDGET, 8, KEY)
        assert (found.id, found.code) == (old.id, "YU1-C-ZSJXAKN")


def test_a_candidate_with_a_stored_record_is_passed_over(app, records):
    """Withholding a deal that has public records would point at it: such a candidate is skipped."""
    day = date(2026, 12, 1)
    first = str(challenges.candidate("yukon-relaxed", "daily", day, 0, KEY))
    records(code=first, variant="yukon-relaxed")
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = challenges.prepare(session, "yukon-relaxed", "daily", datetime(2026, 12, 1, 12, tzinfo=UTC),
                                       BUDGET, 8, KEY)
        assert challenge.candidate > 0 and challenge.code != first


def test_nothing_public_holds_the_candidate_or_an_upcoming_challenge(client, app):
    """The candidate index is withheld with the code (until the window closes), and a challenge
    prepared ahead is not public at all; once the window has closed both are shown."""
    app.config["SOLVER_ENABLED"] = False  # (no window prepared by a request here)
    today = datetime.now(UTC).date()
    with app.extensions["api.platform.db"].sessions() as session:
        now_running = make_challenge(session, "yukon-classic", "daily", today, "YU1-C-AAAAAAB")
        ahead = make_challenge(session, "yukon-classic", "daily", today + timedelta(days=1), "YU1-C-AAAAAAC")
        weekly = make_challenge(session, "yukon-classic", "weekly", today + timedelta(days=7), "YU1-C-AAAAAAD")
        for row in (now_running, ahead, weekly):
            row.candidate = 13
        session.commit()
        ids = now_running.id, ahead.id, weekly.id
    reads = [client.get(f"{API}/challenges/daily?variant=yukon-classic").get_json(),
             client.get(f"{API}/challenges/{ids[0]}").get_json(),
             *client.get(f"{API}/challenges?variant=yukon-classic").get_json()["items"],
             client.get(f"{API}/challenges/{ids[0]}/board").get_json()["challenge"]]
    assert [(body["id"], body["code"], body["candidate"]) for body in reads] == [(ids[0], None, None)] * 4
    for upcoming in ids[1:]:
        assert client.get(f"{API}/challenges/{upcoming}").status_code == 404
        assert client.get(f"{API}/challenges/{upcoming}/board").status_code == 404
    pages = [client.get("/challenges/yukon-classic").get_data(as_text=True),
             client.get(f"/challenges/yukon-classic/daily/{today + timedelta(days=1)}").get_data(as_text=True)]
    assert not any(code in page for page in pages for code in ("YU1-C-AAAAAAB", "YU1-C-AAAAAAC", "YU1-C-AAAAAAD"))
    with app.extensions["api.platform.db"].sessions() as session:
        assert challenges.secret_codes(session, datetime.now(UTC)) == {"YU1-C-AAAAAAB", "YU1-C-AAAAAAC",
                                                                       "YU1-C-AAAAAAD"}
        closed = make_challenge(session, "yukon-classic", "daily", today - timedelta(days=2), "YU1-C-AAAAAAF")
        closed.candidate = 13
        session.commit()
        closed_id = closed.id
    body = client.get(f"{API}/challenges/{closed_id}").get_json()
    assert (body["code"], body["candidate"], body["final"]) == ("YU1-C-AAAAAAF", 13, True)


def test_the_random_pool_never_hands_out_a_running_or_upcoming_challenges_deal(client, app):
    """The screening puts the challenges' deals in the pool; /deals/random leaves them out while
    they are secret (503 when the pool has nothing else), and hands them out once they close."""
    app.config["SOLVER_ENABLED"] = False
    with app.extensions["api.platform.db"].sessions() as session:
        assert challenges.refill_winnable_pool(session, "yukon-relaxed", 3, BUDGET, 20, random.Random(3)) >= 3
        pool = sorted(session.scalars(select(Solvability.code).where(Solvability.status == "winnable")))
        today = datetime.now(UTC).date()
        make_challenge(session, "yukon-relaxed", "daily", today, pool[0])
        make_challenge(session, "yukon-relaxed", "weekly", today + timedelta(days=7), pool[1])
    seen = {client.get(f"{API}/deals/random?variant=yukon-relaxed&winnable=true").get_json()["code"]
            for _ in range(30)}
    assert seen == set(pool[2:])
    with app.extensions["api.platform.db"].sessions() as session:
        make_challenge(session, "yukon-relaxed", "daily", today + timedelta(days=1), pool[2])
    assert client.get(f"{API}/deals/random?variant=yukon-relaxed&winnable=true").status_code == 503
    close_every_window(app)
    seen = {client.get(f"{API}/deals/random?variant=yukon-relaxed&winnable=true").get_json()["code"]
            for _ in range(40)}
    assert seen == set(pool)


def test_a_cached_card_frames_or_page_of_a_record_answers_404_once_its_deal_is_a_challenge(client, app, legal_log):
    """Cached while the deal was an ordinary one, a record's card, frames and page are checked
    against the withheld set each time they are served: 404 while the deal is a running (or
    upcoming) challenge's, with or without the client's ETag; served again once it closes."""
    stored = client.post(f"{API}/records", json={"code": FT, "player": "ann", "moves": legal_log(FT, 6)})
    assert stored.status_code == 201
    record_id = stored.get_json()["id"]
    urls = [f"/records/{record_id}/card.png", f"/records/{record_id}/frames.json", f"/records/{record_id}",
            f"/records/{record_id}/frames.json?step=3"]
    tags = {}
    for url in urls:
        first = client.get(url)
        assert first.status_code == 200 and client.get(url).status_code == 200  # (the second from the cache)
        tags[url] = first.headers["ETag"]
        assert client.get(url, headers={"If-None-Match": tags[url]}).status_code == 304
    for day in (datetime.now(UTC).date() + timedelta(days=1), datetime.now(UTC).date()):  # upcoming, then running
        with app.extensions["api.platform.db"].sessions() as session:
            session.execute(Challenge.__table__.delete())
            session.commit()
            make_challenge(session, "forty-thieves", "daily", day, FT)
        for url in urls:
            # (the record page and card may be the spoiler-safe sealed ones of a record received in the running
            # window: no deal, no log, no board; never the cached ones)
            sealed = (f"/records/{record_id}", f"/records/{record_id}/card.png")
            allowed = {404, 200} if url in sealed and day == datetime.now(UTC).date() else {404}
            for answer in (client.get(url), client.get(url, headers={"If-None-Match": tags[url]})):
                assert answer.status_code in allowed and FT.encode() not in answer.get_data(), url
                assert answer.headers.get("ETag") != tags[url], url
    close_every_window(app)
    assert [client.get(url).status_code for url in urls] == [200] * len(urls)


def test_a_record_received_before_a_running_challenge_on_its_deal_has_no_page(client, app, legal_log):
    """The spoiler-safe page is for records received inside the running window; an older record of
    the same deal answers 404, so that no page ties it to the running challenge's deal."""
    stored = client.post(f"{API}/records", json={"code": FT, "player": "ann", "moves": legal_log(FT, 6)})
    record_id = stored.get_json()["id"]
    with app.extensions["api.platform.db"].sessions() as session:
        session.execute(update(Record).where(Record.id == record_id)
                        .values(received_at=datetime.now(UTC) - timedelta(days=3)))
        session.commit()
        make_challenge(session, "forty-thieves", "daily", datetime.now(UTC).date(), FT)
    page = client.get(f"/records/{record_id}")
    assert page.status_code == 404 and FT not in page.get_data(as_text=True)
    close_every_window(app)
    assert client.get(f"/records/{record_id}").status_code == 200


def close_every_window(app):
    """Every stored challenge's window moved a month back: closed."""
    with app.extensions["api.platform.db"].sessions() as session:
        for challenge in session.scalars(select(Challenge)):
            challenge.starts_at -= timedelta(days=30)
            challenge.ends_at -= timedelta(days=30)
        session.commit()


# -- issue 42: a challenge ready before its window opens ---------------------------------

def test_a_run_prepares_todays_daily_challenges_first_then_the_next_days_and_weeks():
    sunday = date(2026, 12, 6)
    windows = [(variant, kind, challenges.window(kind, moment)[0].date())
               for variant, kind, moment in challenges.plan(sunday, 1)]
    variants = ["yukon-classic", "yukon-relaxed", "forty-thieves"]
    monday = date(2026, 11, 30)
    assert windows == ([(v, "daily", sunday) for v in variants] + [(v, "weekly", monday) for v in variants]
                       + [(v, "daily", date(2026, 12, 7)) for v in variants]
                       + [(v, "weekly", date(2026, 12, 7)) for v in variants])
    # a window a request waits for goes first; on a Tuesday the next week's still comes
    tuesday = [(v, k, challenges.window(k, m)[0].date())
               for v, k, m in challenges.plan(date(2026, 12, 8), 1, first=("forty-thieves", "weekly"))]
    assert tuesday[0] == ("forty-thieves", "weekly", date(2026, 12, 7))
    assert ("yukon-classic", "weekly", date(2026, 12, 14)) in tuesday and len(tuesday) == len(set(tuesday)) == 12
    assert challenges.plan(sunday, 0, "yukon-classic", "daily") == [
        ("yukon-classic", "daily", datetime(2026, 12, 6, 12, tzinfo=UTC))]


def test_the_beats_run_leaves_the_next_days_and_weeks_challenges_ready_before_they_open(make_empty_app):
    """The beat's preparation (its own kwargs) stores, besides the running windows' challenges,
    the next day's and the next week's, whose windows have not opened: at midnight (and on
    Monday) the endpoint answers at once, never 503."""
    from api import tasks

    app = make_empty_app(CHALLENGE_NODES=20000)
    kwargs = tasks.BEAT_SCHEDULE["prepare-challenges"]["kwargs"]
    with app.app_context():
        assert tasks.prepare_challenges(**kwargs, variant="yukon-relaxed") == 0
    now = datetime.now(UTC)
    with app.extensions["api.platform.db"].sessions() as session:
        stored = {(c.kind, c.starts_at) for c in session.scalars(select(Challenge))}
    tomorrow = challenges.window("daily", now + timedelta(days=1))[0]
    next_week = challenges.window("weekly", now + timedelta(days=7))[0]
    assert tomorrow > now and next_week > now
    assert stored == {("daily", challenges.window("daily", now)[0]), ("daily", tomorrow),
                      ("weekly", challenges.window("weekly", now)[0]), ("weekly", next_week)}
    client = app.test_client()
    app.config["SOLVER_ENABLED"] = False  # nothing is prepared by the requests below
    assert client.get(f"{API}/challenges/daily?variant=yukon-relaxed").status_code == 200
    with app.extensions["api.platform.db"].sessions() as session:  # tomorrow: its window is already there
        assert challenges.current(session, "yukon-relaxed", "daily", tomorrow) is not None
        assert challenges.current(session, "yukon-relaxed", "weekly", next_week) is not None


def test_the_embedded_mode_prepares_in_a_thread_of_its_own_from_the_first_request(make_empty_app, monkeypatch):
    """Without a broker a serving process runs the beat's preparation in a thread started by its
    first request; a request meanwhile answers 503 at once (the run holds the lock)."""
    import threading

    from api import tasks

    started, release = threading.Event(), threading.Event()

    def slow_run(self):
        with self.app.app_context(), tasks.singleton(self.app, tasks.PREPARE, None):
            started.set()
            release.wait(30)
        return 0

    monkeypatch.setattr(tasks.Preparer, "run_once", slow_run)
    app = make_empty_app(CHALLENGE_NODES=20000)
    app.testing = False  # a serving process (tests' apps start no thread)
    tasks.init_app(app)
    client = app.test_client()
    threads = lambda: [t.name for t in threading.enumerate()].count("challenge-preparer")
    before = threads()
    try:
        client.get(f"{API}/healthz")
        assert started.wait(30)
        response = client.get(f"{API}/challenges/daily?variant=yukon-classic")
        assert response.status_code == 503 and response.headers["Retry-After"] == "15"
        client.get(f"{API}/healthz")  # a second request starts no second thread
        assert threads() == before + 1
    finally:
        release.set()
