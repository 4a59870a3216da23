"""Liveness, readiness, and what happens when the database is gone."""

from __future__ import annotations

import pytest

import engine

API = "/api/v1"


def test_healthz_says_which_build_of_the_engine_runs(client):
    response = client.get(f"{API}/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "engine": engine.BUILD}


def test_readyz_reports_the_schema_revision(client, app):
    response = client.get(f"{API}/readyz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok",
                                   "schema": ", ".join(sorted(app.extensions["api.platform.db"].heads))}


DEAD_URLS = {
    "sqlite": "sqlite:////nonexistent-dir-for-tests/records.sqlite3",
    "postgresql": "postgresql://nobody@127.0.0.1:1/nothing",  # nothing listens on port 1
}


@pytest.mark.parametrize("kind", sorted(DEAD_URLS))
def test_readyz_is_503_when_the_database_is_unreachable(make_app, kind):
    app = make_app(DATABASE_URL=DEAD_URLS[kind], AUTO_MIGRATE=False)
    client = app.test_client()
    assert client.get(f"{API}/healthz").status_code == 200  # alive all the same
    response = client.get(f"{API}/readyz")
    assert response.status_code == 503
    assert response.headers["Retry-After"]
    body = response.get_json()
    assert body["type"].endswith("/not-ready")
    assert "database did not answer" in body["detail"]
    assert "nobody" not in body["detail"]  # no connection details leak out


def test_other_endpoints_answer_503_when_the_database_is_unreachable(make_app):
    app = make_app(DATABASE_URL=DEAD_URLS["postgresql"], AUTO_MIGRATE=False)
    client = app.test_client()
    for response in (client.get(f"{API}/records"), client.get(f"{API}/leaderboard?variant=yukon-classic"),
                     client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "player": "ann", "moves": "S"})):
        assert response.status_code == 503
        assert response.get_json()["type"].endswith("/database-unavailable")
    # what needs no database still works
    assert client.get(f"{API}/deals/FT1-N-AAAAAAB").status_code == 200
    assert client.post(f"{API}/verify", json={"code": "FT1-N-AAAAAAB", "moves": "S"}).status_code == 200


def test_readyz_is_503_until_the_schema_is_migrated(make_app, empty_database_url):
    app = make_app(DATABASE_URL=empty_database_url, AUTO_MIGRATE=False)
    client = app.test_client()
    response = client.get(f"{API}/readyz")
    assert response.status_code == 503
    assert "schema is at empty" in response.get_json()["detail"]
    app.extensions["api.platform.db"].upgrade()
    assert client.get(f"{API}/readyz").status_code == 200
