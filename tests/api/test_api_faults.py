"""Under load and faults: many threads submitting at once store exactly one row per
distinct game and never answer 500; a database that goes away is answered 503
and comes back without a restart.

Both need PostgreSQL (``TEST_DATABASE_URL``; CI sets it): SQLite serialises
writers, so it cannot show a race, and the outage is simulated with a TCP proxy
between the app and the PostgreSQL server (the real server keeps running for
the other tests).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, make_url, select

from api.platform.models import Record

API = "/api/v1"
CODE = "FT1-N-AAAAAAB"

@pytest.fixture
def needs_postgresql(database_url):
    """Skip unless this run of the test is on PostgreSQL (``TEST_DATABASE_URL``; CI sets it)."""
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: set TEST_DATABASE_URL")


def rows(app) -> list[tuple[str, str]]:
    with app.extensions["api.platform.db"].sessions() as session:
        return [(r.player, r.canonical) for r in session.scalars(select(Record).order_by(Record.id))]


@pytest.mark.usefixtures("needs_postgresql")
@pytest.mark.slow
def test_racing_submissions_store_one_row_per_game_and_answer_all_with_it(make_empty_app, make_key, auth,
                                                                          legal_log):
    app = make_empty_app(API_KEYS_REQUIRED=True)
    assert app.extensions["api.platform.db"].engine.dialect.name == "postgresql"
    headers = auth(make_key("load-test"))
    same = {"code": CODE, "player": "racer", "moves": legal_log(CODE, 15)}
    # 16 different games: other players, and the same player with other logs
    different = [{"code": CODE, "player": f"p{i}", "moves": legal_log(CODE, 10)} for i in range(8)]
    different += [{"code": CODE, "player": "solo", "moves": legal_log(CODE, 4 + i, skip=i % 3)} for i in range(8)]
    assert len({(b["player"], " ".join(b["moves"])) for b in different}) == 16
    bodies = [same] * 16 + different
    barrier = threading.Barrier(len(bodies))

    def post(body):
        client = app.test_client()
        barrier.wait(timeout=30)
        response = client.post(f"{API}/records", json=body, headers=headers)
        return body, response.status_code, response.get_json()

    with ThreadPoolExecutor(len(bodies)) as pool:
        results = list(pool.map(post, bodies, timeout=120))

    assert sorted({status for _, status, _ in results}) <= [200, 201], [(s, r) for _, s, r in results if s >= 300]
    same_answers = [(status, record) for body, status, record in results if body is same]
    assert sorted(status for status, _ in same_answers) == [200] * 15 + [201]
    assert len({record["id"] for _, record in same_answers}) == 1
    assert len({repr(record) for _, record in same_answers}) == 1  # every answer is the one stored record
    assert [status for body, status, _ in results if body is not same] == [201] * 16
    stored = rows(app)
    assert len(stored) == 17 and len(set(stored)) == 17


@pytest.mark.usefixtures("needs_postgresql")
def test_a_database_outage_is_503_and_the_service_recovers_without_a_restart(make_app, database_url, tcp_proxy,
                                                                             make_key, auth, legal_log):
    url = make_url(database_url)
    proxy = tcp_proxy(url.host or "127.0.0.1", url.port or 5432)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    app = make_app(DATABASE_URL=proxied, API_KEYS_REQUIRED=True)
    headers = auth(make_key("outage"))  # (through the suite's own app, straight to the database)
    client = app.test_client()

    def submit(player):
        return client.post(f"{API}/records", json={"code": CODE, "player": player, "moves": legal_log(CODE, 5)},
                           headers=headers)

    assert client.get(f"{API}/readyz").status_code == 200
    assert submit("before").status_code == 201

    proxy.stop()  # the database is gone: open connections break, new ones are refused
    ready = client.get(f"{API}/readyz")
    assert ready.status_code == 503 and ready.headers["Retry-After"]
    assert ready.get_json()["type"].endswith("/not-ready")
    assert "database did not answer" in ready.get_json()["detail"]
    for response in (submit("during"), client.get(f"{API}/records"),
                     client.get(f"{API}/leaderboard?variant=forty-thieves")):
        assert response.status_code == 503, response.get_data(as_text=True)
        problem = response.get_json()
        assert problem["type"].endswith("/database-unavailable") and "try again later" in problem["detail"]
        assert response.headers["Retry-After"] == "5"
    assert client.get(f"{API}/healthz").status_code == 200  # the process itself is fine
    assert client.post(f"{API}/verify", json={"code": CODE, "moves": "S"}).status_code == 200

    proxy.start()  # the database is back, on the same address
    assert client.get(f"{API}/readyz").status_code == 200
    assert submit("during").status_code == 201  # the client's retry is stored now
    assert submit("before").status_code == 200  # and what was stored before is still there
    assert sorted(player for player, _ in rows(app)) == ["before", "during"]
    with app.extensions["api.platform.db"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(Record)) == 2


@pytest.mark.usefixtures("needs_postgresql")
def test_a_database_restart_between_requests_fails_no_request(make_app, database_url, tcp_proxy, make_key, auth,
                                                              legal_log, caplog):
    """Pooled connections are not pinged before use: the ones a restart broke fail their
    first statement, and that request runs again on a new connection, once, unseen by
    the client (the record stored once)."""
    url = make_url(database_url)
    proxy = tcp_proxy(url.host or "127.0.0.1", url.port or 5432)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    app = make_app(DATABASE_URL=proxied, API_KEYS_REQUIRED=True)
    headers = auth(make_key("restart"))
    client = app.test_client()
    body = {"code": CODE, "player": "restart", "moves": legal_log(CODE, 5)}
    assert client.post(f"{API}/records", json=body | {"player": "first"}, headers=headers).status_code == 201
    assert app.extensions["api.platform.db"].engine.pool.checkedin() >= 1  # a pooled connection, through the proxy

    proxy.stop()  # every open connection breaks; nothing asks the database meanwhile
    proxy.start()
    caplog.clear()
    response = client.post(f"{API}/records", json=body, headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)
    assert "running the request again on a new one" in caplog.text  # the broken connection was met, not pinged
    for path in (f"{API}/readyz", f"{API}/records", f"{API}/leaderboard?variant=forty-thieves"):
        assert client.get(path).status_code == 200
    assert sorted(player for player, _ in rows(app)) == ["first", "restart"]

    proxy.stop()  # again, and this time the readiness probe is the first to meet a broken connection
    proxy.start()
    assert client.get(f"{API}/readyz").status_code == 200


#: short timeouts, so that the partition test takes seconds (the defaults are a few times longer)
PARTITION_TIMEOUTS = {"DATABASE_CONNECT_TIMEOUT": 2, "DATABASE_STATEMENT_TIMEOUT": 1, "DATABASE_POOL_TIMEOUT": 1,
                      "READYZ_TIMEOUT": 1}
#: the documented bound (docs/operations.md): a pooled connection's wait, then a connection
#: opened or an answer awaited (the client's deadline is the statement timeout plus one second)
PARTITION_BOUND = (PARTITION_TIMEOUTS["DATABASE_POOL_TIMEOUT"] + PARTITION_TIMEOUTS["DATABASE_CONNECT_TIMEOUT"]
                   + PARTITION_TIMEOUTS["DATABASE_STATEMENT_TIMEOUT"] + 1)


@pytest.mark.usefixtures("needs_postgresql")
def test_a_database_that_stops_answering_is_503_within_the_bound_and_nothing_acknowledged_is_lost(
        make_app, database_url, tcp_proxy, make_key, auth, legal_log):
    """A network partition: packets are dropped, nothing is refused. Without timeouts on
    the client every request touching the database (and ``/readyz``) would wait for the
    whole partition; with them each answers 503 with ``Retry-After`` in time."""
    url = make_url(database_url)
    proxy = tcp_proxy(url.host or "127.0.0.1", url.port or 5432)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    app = make_app(DATABASE_URL=proxied, API_KEYS_REQUIRED=True, **PARTITION_TIMEOUTS)
    headers = auth(make_key("partition"))
    acknowledged: list[str] = []

    def submit(player):
        response = app.test_client().post(f"{API}/records", headers=headers,
                                          json={"code": CODE, "player": player, "moves": legal_log(CODE, 5)})
        if response.status_code in (200, 201):
            acknowledged.append(player)
        return response

    assert submit("before").status_code == 201
    with ThreadPoolExecutor(3) as pool:  # a few pooled connections, idle when the partition starts
        assert set(pool.map(lambda _: app.test_client().get(f"{API}/records").status_code, range(3))) == {200}

    requests = [("POST", f"{API}/records", None), ("GET", f"{API}/records", None), ("GET", f"{API}/records/1", None),
                ("GET", f"{API}/leaderboard?variant=forty-thieves", None), ("GET", f"{API}/readyz", None),
                ("GET", "/records/1/frames.json", None)]

    def timed(request):
        method, path, _ = request
        started = time.monotonic()
        if method == "POST":
            response = submit("during")
        else:
            response = app.test_client().open(path, method=method)
        return path, response, time.monotonic() - started

    proxy.black_hole()
    for round_ in ("pooled connections", "new connections"):  # first the idle pooled ones, then new ones
        with ThreadPoolExecutor(len(requests)) as pool:
            for path, response, took in pool.map(timed, requests):
                assert response.status_code == 503, (round_, path, response.get_data(as_text=True))
                assert response.headers["Retry-After"] == "5", (round_, path)
                assert response.mimetype == "application/problem+json"
                assert took < PARTITION_BOUND, (round_, path, took)
    client = app.test_client()
    assert client.get(f"{API}/healthz").status_code == 200  # the process itself is fine
    assert client.post(f"{API}/verify", json={"code": CODE, "moves": "S"}).status_code == 200

    proxy.heal()
    assert client.get(f"{API}/readyz").status_code == 200
    assert submit("during").status_code == 201  # the client's retry is stored now
    assert submit("before").status_code == 200  # and what was stored before is still there
    assert len(client.get(f"{API}/records").get_json()["items"]) == 2
    assert sorted(player for player, _ in rows(app)) == sorted(set(acknowledged)) == ["before", "during"]


@pytest.mark.usefixtures("needs_postgresql")
def test_every_postgresql_connection_has_the_timeouts_and_migrations_lift_them(make_app):
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    from api.platform.db import AnswerTimeout, DeadlineConnection, unbounded

    app = make_app(**PARTITION_TIMEOUTS)
    engine = app.extensions["api.platform.db"].engine
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert isinstance(raw, DeadlineConnection) and raw.answer_timeout == 2
        assert connection.execute(text("SHOW statement_timeout")).scalar() == "1s"
        parameters = raw.info.get_parameters()
        assert parameters["tcp_user_timeout"] == "2000" and parameters["keepalives"] == "1"
        assert parameters["connect_timeout"] == "2"
        # the server cancels a statement past its timeout; the connection goes on working
        with pytest.raises(OperationalError) as error:
            connection.execute(text("SELECT pg_sleep(3)"))
        assert "statement timeout" in str(error.value) and not isinstance(error.value.orig, AnswerTimeout)
        connection.rollback()
        assert connection.execute(text("SELECT 1")).scalar() == 1
    with engine.begin() as connection, unbounded(connection):  # what a migration runs under
        assert connection.execute(text("SHOW statement_timeout")).scalar() == "0"
        assert connection.connection.dbapi_connection.answer_timeout is None
        assert connection.execute(text("SELECT pg_sleep(2.5)")).scalar() == ""  # longer than both
    with engine.connect() as connection:  # and the next user of the connection has them again
        assert connection.execute(text("SHOW statement_timeout")).scalar() == "1s"
        assert connection.connection.dbapi_connection.answer_timeout == 2


@pytest.mark.usefixtures("needs_postgresql")
def test_a_rollback_the_database_never_answers_is_logged_not_a_bare_500(make_app, database_url, tcp_proxy, capsys):
    """The partition starts after a view has read what it needs: the request's session is
    rolled back when the request ends, the rollback gets no answer, and the client still gets
    the view's answer (before, the AnswerTimeout of that rollback escaped as a bare 500)."""
    from sqlalchemy import text

    from api.platform.db import session

    url = make_url(database_url)
    proxy = tcp_proxy(url.host or "127.0.0.1", url.port or 5432)
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    app = make_app(DATABASE_URL=proxied, **PARTITION_TIMEOUTS)

    def read_then_partition():
        value = session().execute(text("SELECT 41 + 1")).scalar_one()  # a transaction is open now
        proxy.black_hole()
        return {"value": value}

    app.add_url_rule("/test/read-then-partition", view_func=read_then_partition)
    started = time.monotonic()
    response = app.test_client().get("/test/read-then-partition")
    assert response.status_code == 200 and response.get_json() == {"value": 42}
    assert time.monotonic() - started < PARTITION_BOUND
    assert "could not be rolled back (OperationalError: the database did not answer" in capsys.readouterr().err
    proxy.heal()
    assert app.test_client().get(f"{API}/readyz").status_code == 200  # the dropped connection was replaced
