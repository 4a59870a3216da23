"""Fair play's search of a deal with a record in a top (issue 43, item 3): the place test is
correlated (right on a populated board, where the cross join it compiled to before said
"no" to every deal), and the service's own searches have places no client takes.

Every test here runs on SQLite and, with ``TEST_DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

import api.solver.queue
import api.tasks.fairplay as fairplay_tasks
from api.boards import upkeep
from api.fairplay.judging import in_a_top
from api.platform.models import BoardEntry, Solvability
from api.solver.queue import ClientBusy, QueueFull, Solver
from api.solver.searches import Query
from engine import Game, GameCode
from tests.api.conftest import RecordFactory
from verifier.solving import solve_code

API = "/api/v1"
#: deals of the populated boards (stand-in records), and one the suite's node budget wins
POPULATED = ["YU1-C-AAAAAAC", "YU1-C-AAAAAAD", "YU1-C-AAAAAAE", "YU1-C-AAAAAAF"]
WINNABLE = "YU1-C-AAAAAAB"
PLAYERS = 15


def populate(app, codes=POPULATED, players=PLAYERS, **values):
    """``players`` won stand-in records on each deal of ``codes`` (the variant board gets them
    all), their boards built as a bulk load does."""
    with app.extensions["api.platform.db"].sessions() as session:
        RecordFactory._meta.sqlalchemy_session = session
        try:
            for code in codes:
                for index in range(players):
                    RecordFactory(game_code=code, player=f"{code[-2:]}-{index}", won=True, score=values.get(
                        "score", 100 + index), moves=200 + index)
        finally:
            RecordFactory._meta.sqlalchemy_session = None
        upkeep.rebuild_all(session.connection())
        session.commit()


def entry(session, board, record_id, key, player):
    session.add(BoardEntry(board=board, player=player, record_id=record_id, sort_key=key,
                           received_at=datetime(2025, 1, 1, tzinfo=UTC), won=True, earned=0, score=0, moves=key,
                           takebacks=0))


def unranked_pair(session, first, second):
    """A record of WINNABLE by ``first`` and one of another deal by ``second``, unranked: the
    boards' upkeep gives them no entry, and the test writes theirs."""
    RecordFactory._meta.sqlalchemy_session = session
    try:
        return (RecordFactory(game_code=WINNABLE, player=first, ranked=False),
                RecordFactory(game_code="YU1-C-AAAAAAG", player=second, ranked=False))
    finally:
        RecordFactory._meta.sqlalchemy_session = None


def test_a_place_counts_the_entries_ahead_on_the_same_board_only(app):
    """Entries written directly on one board: deal X's best entry has 10 entries ahead of it
    (two of them tied), so it is 11th: in a top 11, not in a top 10; other boards' entries, ahead
    or not, do not count; an entry tied with the 10th shares its place."""
    populate(app, codes=POPULATED[:2])  # other boards, full of better entries
    with app.extensions["api.platform.db"].sessions() as session:
        x, y = unranked_pair(session, "x", "y")
        keys = [1, 2, 3, 3, 5, 6, 7, 8, 9, 10]
        for index, key in enumerate(keys):
            entry(session, "test:board", y.id, key, f"ahead-{index}")
        entry(session, "test:board", x.id, 11, "x")
        entry(session, "test:other", y.id, 50, "y")
        session.commit()
        assert session.scalars(select(BoardEntry.sort_key).where(BoardEntry.record_id == x.id)).all() == [11]
        assert (in_a_top(session, WINNABLE, 10), in_a_top(session, WINNABLE, 11)) == (False, True)
        assert in_a_top(session, "YU1-C-AAAAAAG", 1) is True  # place 1 of test:board
        entry(session, "test:board", y.id, 10, "tied")  # an 11th entry, tied with the 10th: x is 12th now
        session.commit()
        assert (in_a_top(session, WINNABLE, 11), in_a_top(session, WINNABLE, 12)) == (False, True)
        for code in POPULATED[:2]:  # each deal's best is first on its own board
            assert in_a_top(session, code, 1) is True
        assert in_a_top(session, POPULATED[2], 10) is False  # no entry at all


def test_a_board_with_fewer_entries_than_the_top_is_not_contested(app):
    """A new deal's first record is first on its deal's board, but a board of one entry is no top 10:
    the deal's board counts once it holds ten entries, and then each of the ten is in it."""
    with app.extensions["api.platform.db"].sessions() as session:
        lone, other = unranked_pair(session, "lone", "other")
        entry(session, "test:deal", lone.id, 5, "lone")
        session.commit()
        assert (in_a_top(session, WINNABLE, 1), in_a_top(session, WINNABLE, 2)) == (True, False)
        for index in range(8):  # nine entries, the lone one ahead of them all
            entry(session, "test:deal", other.id, 6 + index, f"after-{index}")
        session.commit()
        assert (in_a_top(session, WINNABLE, 9), in_a_top(session, WINNABLE, 10)) == (True, False)
        entry(session, "test:deal", other.id, 100, "tenth")
        session.commit()
        assert in_a_top(session, WINNABLE, 10) is True


def human_times(count):
    """Times a person could have: gaps of 0.6 to 1.5 s."""
    times, now = [], 0
    for index in range(count):
        now += 600 + (index * 37) % 900
        times.append(now)
    return times


def first_actions(code, count):
    """A legal opening: each time the first legal action."""
    game, log = Game.from_code(code), []
    for _ in range(count):
        log.append(str(game.push(game.legal_actions()[0])))
    return log


def test_a_record_entering_a_top_10_of_a_populated_board_has_its_deal_searched(app, make_app, monkeypatch):
    """Many records on several deals (4 deals, 15 players each, one variant board of 60): a
    new winning record of a deal nobody searched (an offline solver's line) enters the top 10
    of its boards, and the worker tier (here eager) searches the deal, which catches it. A
    record that takes no place (unranked: sent without times) does not have its deal searched, nor
    does a lost game on a new deal, first only on its deal's board of one: neither asks the
    worker tier for anything (the web reads the place itself)."""
    asked = []
    ask = fairplay_tasks.evidence_learned
    monkeypatch.setattr(fairplay_tasks, "evidence_learned", lambda app, code, **how: (asked.append(code),
                                                                                       ask(app, code, **how)))
    populate(app)
    fair = make_app(FAIRPLAY_SOLVE_TOP=10, FAIRPLAY_TIMES_REQUIRED=True)  # the same database, populated
    client = fair.test_client()
    token = client.post(f"{API}/players", json={"name": "newcomer"}).get_json()["token"]
    line = list(solve_code(WINNABLE, max_nodes=10000, budget_seconds=None).actions)
    response = client.post(f"{API}/records", json={"code": WINNABLE, "moves": line, "times": human_times(len(line))},
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.get_json()
    with fair.extensions["api.platform.db"].sessions() as session:
        assert session.scalar(select(Solvability.status).where(Solvability.code == WINNABLE)) == "winnable"
    assert asked[:1] == [WINNABLE]
    # the line was the solver's own: once the deal is searched, the record is judged again and unranked
    record = client.get(f"{API}/records/{response.get_json()['id']}").get_json()
    assert record["ranked"] is False and [f["flag"] for f in record["flags"]] == ["solver-like"]
    unranked = "YU1-C-AAAAAAH"
    other = client.post(f"{API}/players", json={"name": "beginner"}).get_json()["token"]
    response = client.post(f"{API}/records", json={"code": unranked, "moves": first_actions(unranked, 3)},
                           headers={"Authorization": f"Bearer {other}"})
    assert response.status_code == 201 and response.get_json()["ranked"] is False, response.get_json()
    with fair.extensions["api.platform.db"].sessions() as session:
        assert in_a_top(session, unranked, 10) is False
        assert session.scalar(select(Solvability.id).where(Solvability.code == unranked)) is None
    # a ranked game on a new deal, first on its deal's board of one, below the variant board's top 10:
    # no board it is on is contested, and its deal is not searched
    lost = "YU1-C-AAAAAAJ"
    opening = first_actions(lost, 5)
    response = client.post(f"{API}/records", json={"code": lost, "moves": opening, "times": human_times(5)},
                           headers={"Authorization": f"Bearer {other}"})
    assert response.status_code == 201 and response.get_json()["ranked"] is True, response.get_json()
    with fair.extensions["api.platform.db"].sessions() as session:
        assert in_a_top(session, lost, 1) is True and in_a_top(session, lost, 10) is False
        assert session.scalar(select(Solvability.id).where(Solvability.code == lost)) is None
    assert unranked not in asked and lost not in asked
    # a deal searched once is not read for its tops again (they grow with its records)
    read = []
    monkeypatch.setattr(fairplay_tasks.fairplay, "in_a_top", lambda *args: read.append(args) or True)
    with fair.app_context():
        assert fairplay_tasks.in_a_top_now(fair, WINNABLE) is False and read == []
        assert fairplay_tasks.in_a_top_now(fair, lost) is True and len(read) == 1


# -- the service's own places ---------------------------------------------------------

def test_anonymous_clients_and_keys_never_take_the_places_kept_for_the_services_tasks(make_empty_app):
    """A hint flood from many addresses and keys fills every place clients may take; fair play's
    client still gets a place, up to all of its own, and no client gets one of those."""
    app = make_empty_app(SOLVER_QUEUE_SIZE=8, SOLVER_TASK_PLACES=3, SOLVER_PENDING_PER_CLIENT=2)
    solver: Solver = app.extensions["api.solver"]
    solver.send = lambda kind, budget, keyed: None  # the searches wait in the queue
    assert (solver.client_places, solver.anonymous_places) == (5, 4)
    deals = (str(GameCode("FT", "N", number)) for number in range(1, 100))

    def ask(client: str):
        with app.extensions["api.platform.db"].sessions() as session:
            return solver.request(session, solver.deals, Query(GameCode.from_text(next(deals))), client=client)

    for address in range(4):
        ask(f"ip:10.0.0.{address}")
    with pytest.raises(QueueFull):
        ask("ip:10.0.0.9")  # the anonymous half
    ask("key:1")
    with pytest.raises(QueueFull) as refused:
        ask("key:2")  # the places clients may take: 5 of 8
    assert refused.value.places == 5 and not refused.value.anonymous
    for _ in range(3):
        ask("task:fair-play")  # more than SOLVER_PENDING_PER_CLIENT: the task holds all of its places
    with pytest.raises(ClientBusy):
        ask("task:fair-play")  # its own places are its limit
    with app.extensions["api.platform.db"].sessions() as session:
        slots = {job.client: job.slot for job in session.scalars(select(api.solver.queue.SolverJob))
                 if job.client != "task:fair-play"}
        tasks = sorted(job.slot for job in session.scalars(select(api.solver.queue.SolverJob).where(
            api.solver.queue.SolverJob.client == "task:fair-play")))
    assert tasks == [5, 6, 7] and max(slots.values()) < 5


def test_the_task_places_are_served_first_and_limited_by_the_queue(make_empty_app):
    from api.platform.config import ConfigError, load_settings

    app = make_empty_app(SOLVER_QUEUE_SIZE=8, SOLVER_TASK_PLACES=2)
    solver: Solver = app.extensions["api.solver"]
    solver.send = lambda kind, budget, keyed: None
    with app.extensions["api.platform.db"].sessions() as session:
        for number, client in enumerate(["ip:10.0.0.1", "ip:10.0.0.2", "task:fair-play"], 1):
            solver.request(session, solver.deals, Query(GameCode("YU", "C", number)), client=client)
        with pytest.raises(ClientBusy):
            for number in range(10, 13):
                solver.request(session, solver.deals, Query(GameCode("YU", "C", number)), client="ip:10.0.0.1")
    job = solver._take_job("deal", "runner")
    assert job is not None and job.client == "task:fair-play"  # ahead of the anonymous searches
    with pytest.raises(ConfigError, match="SOLVER_TASK_PLACES"):
        load_settings("/tmp", {"SOLVER_QUEUE_SIZE": 4, "SOLVER_TASK_PLACES": 4}, environ={})
    assert load_settings("/tmp", {"SOLVER_TASK_PLACES": "0"}, environ={})["SOLVER_TASK_PLACES"] == 0
