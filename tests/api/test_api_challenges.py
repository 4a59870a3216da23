"""Challenges: derivation vectors, windows, the winnable pick and its par, the CLI,
the endpoints, challenge boards and standings, the winnable pool, player statistics."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone

import pytest
from sqlalchemy import select, update

from api import boards, challenges
from api.models import Challenge, Solvability, SolverJob
from api.solving import Budget
from api.stats import streaks
from verifier import replay

API = "/api/v1"
PROBLEMS = "https://solitaire-verifier.example/problems/"
UTC = timezone.utc
#: a small node budget keeps the searches of these tests short
BUDGET = Budget(60.0, 20000)


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("variant, kind, first_day, index, code", [
    ("yukon-classic", "daily", date(2026, 12, 1), 0, "YU1-C-ZSJXAKN"),
    ("yukon-classic", "daily", date(2026, 12, 1), 1, "YU1-C-TAKM2VW"),
    ("yukon-relaxed", "weekly", date(2026, 11, 30), 0, "YU1-R-Y5USG5H"),
    ("forty-thieves", "daily", date(2027, 1, 1), 0, "FT1-N-CWLLZAP"),
])
def test_candidate_vectors(variant, kind, first_day, index, code):
    assert str(challenges.candidate(variant, kind, first_day, index)) == code


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
    with app.extensions["api.db"].sessions() as session:
        prepared = challenges.prepare_challenges(session, day, BUDGET, 8, ahead=0)
        assert len(prepared) == 6 and all(c is not None for c in prepared)
        for challenge in prepared:
            start, end = challenges.window(challenge.kind, datetime(2026, 12, 1, 12, tzinfo=UTC))
            assert (challenge.starts_at, challenge.ends_at) == (start, end)
            codes = challenges.candidates(challenge.variant, challenge.kind, start.date(), challenge.candidate + 1)
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
        again = challenges.prepare_challenges(session, day, BUDGET, 8, ahead=0)
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
    boards.fill_challenge(session.connection(), challenge.id)
    session.commit()
    return challenge


def test_a_challenge_board_from_before_attempts_counts_records_received_inside_its_window(client, app, records):
    start = datetime(2025, 1, 1, tzinfo=UTC)
    records.create(player="early", game_code="FT1-N-AAAAAAB", score=50, received_at=start - timedelta(seconds=1))
    records.create(player="before-prep", game_code="FT1-N-AAAAAAB", score=20, received_at=start)
    with app.extensions["api.db"].sessions() as session:
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
    assert response.status_code == 503 and response.headers["Retry-After"] == "60"
    now = datetime.now(UTC)
    with app.extensions["api.db"].sessions() as session:
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
    with app.extensions["api.db"].sessions() as session:
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
    with app.extensions["api.db"].sessions() as session:
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
    with app.extensions["api.db"].sessions() as session:
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
    from api.config import load_settings

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
        # (hard limit) before the next is sent, and waits behind everything else on the bulk queue
        assert task.time_limit < entry["schedule"]
        assert entry["options"]["expires"] == entry["schedule"] > 0
        assert entry["options"]["priority"] == tasks.LOW_PRIORITY == 9  # Redis: 0 first, 9 last
        assert routes[entry["task"]]["queue"] == "beat-test.bulk"


def test_a_scheduled_task_does_nothing_while_another_run_holds_its_lock(make_empty_app):
    """Issue 22: two refills at once took both worker processes. A run that finds the
    lock held ends at once; once the lock is free (or expired) the next run works."""
    from api import tasks

    app = make_empty_app(CHALLENGE_NODES=20000, WINNABLE_POOL_SIZE=1)
    with app.app_context():
        held = tasks._lock(app, tasks.REFILL)
        assert held is not None and tasks._lock(app, tasks.REFILL) is None  # one holder at a time
        assert tasks.refill_winnable_pool(variant="yukon-relaxed", searches=3) == 0
        assert tasks.prepare_challenges(ahead=0, variant="yukon-classic", kind="daily") == 0  # its own lock
        with app.extensions["api.db"].sessions() as session:
            assert session.scalars(select(Solvability).where(Solvability.variant == "yukon-relaxed")).all() == []
            assert len(session.scalars(select(Challenge)).all()) == 1
            assert [job.id for job in session.scalars(select(SolverJob))] == [held]  # prepare freed its own
        tasks._release_marker(app, held)
        assert tasks.refill_winnable_pool(variant="yukon-relaxed", searches=3) >= 1
        with app.extensions["api.db"].sessions() as session:
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
    with app.extensions["api.db"].sessions() as session:
        pool = session.scalars(select(Solvability)).all()
        assert {row.variant for row in pool} == {"yukon-relaxed", "yukon-classic"}
        assert {row.budget_nodes for row in pool} == {3000}
    with app.app_context():
        assert tasks.prepare_challenges(ahead=0, variant="yukon-classic", kind="daily") == 0
    with app.extensions["api.db"].sessions() as session:
        challenge = session.scalars(select(Challenge)).one()
        searched = session.scalars(select(Solvability).where(Solvability.code == challenge.code)).all()
        assert [row.budget_nodes for row in searched] == [20000]


def test_the_embedded_mode_prepares_the_window_in_the_first_request(make_empty_app):
    app = make_empty_app(CHALLENGE_NODES=20000)
    client = app.test_client()
    body = client.get(f"{API}/challenges/daily?variant=yukon-classic").get_json()
    today = datetime.now(UTC).date()
    codes = [str(c) for c in challenges.candidates("yukon-classic", "daily", today, body["candidate"] + 1)]
    assert body["code"] is None and body["kind"] == "daily"  # secret while the window runs
    with app.extensions["api.db"].sessions() as session:
        assert [(c.variant, c.kind, c.code) for c in session.scalars(select(Challenge))] == [
            ("yukon-classic", "daily", codes[-1])]
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
    with app.extensions["api.db"].sessions() as session:
        assert challenges.pool_size(session, "yukon-relaxed", 10) >= 1
        assert session.scalars(select(SolverJob)).all() == []


def test_a_preparation_in_flight_is_not_sent_again(make_empty_app):
    """While a marker is held (a task in flight), a request sends nothing and answers 503;
    once the marker has expired (a lost task), the next request prepares the window."""
    app = make_empty_app(CHALLENGE_NODES=20000)
    client = app.test_client()
    now = datetime.now(UTC)
    with app.extensions["api.db"].sessions() as session:
        session.add(SolverJob(client="task:api.prepare_challenges", client_slot=0, slot=-1, kind="challenges",
                              created_at=now, expires_at=now + timedelta(minutes=5)))
        session.commit()
    response = client.get(f"{API}/challenges/weekly?variant=forty-thieves")
    assert response.status_code == 503 and response.headers["Retry-After"] == "60"
    with app.extensions["api.db"].sessions() as session:
        assert session.scalars(select(Challenge)).all() == []
        session.execute(update(SolverJob).values(expires_at=now - timedelta(seconds=1)))
        session.commit()
    assert client.get(f"{API}/challenges/weekly?variant=forty-thieves").status_code == 200


def test_nothing_is_searched_for_a_request_while_the_solver_is_off(make_empty_app):
    app = make_empty_app(SOLVER_ENABLED=False)
    client = app.test_client()
    assert client.get(f"{API}/challenges/daily?variant=yukon-relaxed").status_code == 503
    assert client.get(f"{API}/deals/random?variant=forty-thieves&winnable=true").status_code == 503
    with app.extensions["api.db"].sessions() as session:
        assert session.scalars(select(Solvability)).all() == []


# -- attempts, timed by the server -----------------------------------------------------

FT = "FT1-N-AAAAAAB"


def running(app, code=FT, day=None, kind="daily"):
    """Today's (or ``day``'s) forty-thieves challenge on ``code``, which needs attempts; its id."""
    with app.extensions["api.db"].sessions() as session:
        return make_challenge(session, "forty-thieves", kind, day or datetime.now(UTC).date(), code).id


def player_token(client, name):
    response = client.post(f"{API}/players", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def start(client, challenge_id, token):
    return client.post(f"{API}/challenges/{challenge_id}/attempts", headers=bearer(token) if token else {})


def set_started_at(app, attempt_id, moment):
    from api.models import ChallengeAttempt

    with app.extensions["api.db"].sessions() as session:
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
    for challenge_id, words in ((closed, "its window closed at 2025-01-02T00:00:00+00:00"), (opens, "opens at")):
        response = start(client, challenge_id, ann)
        assert response.status_code == 409
        problem = response.get_json()
        assert problem["type"] == PROBLEMS + "challenge-not-running" and words in problem["detail"]


def test_a_running_challenges_code_is_withheld_from_every_public_read(client, app, legal_log):
    from api.models import Challenge

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
    with app.extensions["api.db"].sessions() as session:  # the window closes
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
    with app.extensions["api.db"].sessions() as session:
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
    from api.models import ChallengeAttempt

    challenge_id = running(app)
    token = player_token(client, "ann")
    assert race(app, 6, lambda c, _: start(c, challenge_id, token)) == [201] + [409] * 5
    with app.extensions["api.db"].sessions() as session:
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
    with app.extensions["api.db"].sessions() as session:
        from api.models import ChallengeAttempt, Player

        player = Player(name="ann", skeleton_hash=None, created_at=datetime(2025, 1, 1, tzinfo=UTC))
        session.add(player)
        session.flush()
        attempt = ChallengeAttempt(challenge_id=challenge_id, player_id=player.id,
                                   started_at=datetime(2025, 1, 1, 9, tzinfo=UTC))
        session.add(attempt)
        session.commit()
        attempt_id, player_id = attempt.id, player.id
    from tests.api.conftest import RecordFactory

    RecordFactory._meta.sqlalchemy_session = app.extensions["api.db"].sessions()
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
