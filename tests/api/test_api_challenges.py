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
UTC = timezone.utc
#: a small node budget keeps the searches of these tests short
BUDGET = Budget(60.0, 20000)


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


def make_challenge(session, variant="forty-thieves", kind="daily", day=date(2025, 1, 1), code="FT1-N-AAAAAAB"):
    start, end = challenges.window(kind, datetime.combine(day, datetime.min.time(), UTC))
    challenge = Challenge(variant=variant, kind=kind, starts_at=start, ends_at=end, code=code, candidate=0, par=90,
                          par_line="S", prepared_at=start - timedelta(hours=1))
    session.add(challenge)
    session.flush()
    boards.fill_challenge(session.connection(), challenge.id)
    session.commit()
    return challenge


def test_a_challenge_board_counts_records_received_inside_its_window(client, app, records):
    start = datetime(2025, 1, 1, tzinfo=UTC)
    records.create(player="early", game_code="FT1-N-AAAAAAB", score=50, received_at=start - timedelta(seconds=1))
    records.create(player="before-prep", game_code="FT1-N-AAAAAAB", score=20, received_at=start)
    with app.extensions["api.db"].sessions() as session:
        challenge = make_challenge(session)
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
            make_challenge(session, day=date(2025, 1, day), code="FT1-N-AAAAAAB")
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
    for player, length in (("ann", 3), ("bob", 5), ("ann", 7)):
        response = client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "player": player,
                                                        "moves": legal_log("FT1-N-AAAAAAB", length)})
        assert response.status_code == 201, response.get_data(as_text=True)
    body = client.get(f"{API}/challenges/{challenge_id}/board").get_json()
    deal = client.get(f"{API}/leaderboard?variant=forty-thieves&code=FT1-N-AAAAAAB").get_json()
    assert len(body["entries"]) == 2 and body["entries"] == deal["entries"]  # every record is inside the window
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
    assert {entry["task"] for entry in schedule.values()} == {tasks.PREPARE, tasks.REFILL}
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


def test_the_embedded_mode_prepares_the_window_in_the_first_request(make_empty_app):
    app = make_empty_app(CHALLENGE_NODES=20000)
    client = app.test_client()
    body = client.get(f"{API}/challenges/daily?variant=yukon-classic").get_json()
    today = datetime.now(UTC).date()
    codes = [str(c) for c in challenges.candidates("yukon-classic", "daily", today, body["candidate"] + 1)]
    assert body["code"] == codes[-1] and body["kind"] == "daily"
    with app.extensions["api.db"].sessions() as session:
        assert [(c.variant, c.kind) for c in session.scalars(select(Challenge))] == [("yukon-classic", "daily")]
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
