"""The 500 fallback, request ids and the JSON log."""

from __future__ import annotations

import json

from sqlalchemy.exc import DBAPIError

import api.routes.deals

API = "/api/v1"


def log_lines(captured: str) -> list[dict]:
    """Every line on stderr must be one JSON object."""
    return [json.loads(line) for line in captured.splitlines() if line.strip()]


def test_an_unexpected_error_is_a_500_problem_and_logged_with_its_traceback(client, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("the deal machine broke")

    monkeypatch.setattr(api.routes.deals, "deal_json", broken)
    capsys.readouterr()
    response = client.get(f"{API}/deals/YU1-C-AAAAAAB", headers={"X-Request-ID": "trace-500"})
    assert response.status_code == 500
    problem = response.get_json()
    assert (problem["type"], problem["title"], problem["status"]) == ("about:blank", "Internal Server Error", 500)
    assert "trace-500" in problem["detail"] and "machine" not in problem["detail"]  # no internals leak out
    assert problem["request_id"] == "trace-500"
    [error] = [line for line in log_lines(capsys.readouterr().err) if line["level"] == "ERROR"]
    assert error["request_id"] == "trace-500" and error["path"] == f"{API}/deals/YU1-C-AAAAAAB"
    assert "the deal machine broke" in error["message"]
    assert "RuntimeError" in error["exception"] and "Traceback" in error["exception"]


def test_each_request_is_logged_as_one_json_object(client, capsys):
    capsys.readouterr()
    client.get(f"{API}/healthz", headers={"X-Request-ID": "abc-123"})
    client.get(f"{API}/records/12345")
    lines = log_lines(capsys.readouterr().err)
    access = [line for line in lines if line["logger"] == "api.access"]
    assert len(access) == 2
    first, second = access
    assert set(first) >= {"time", "level", "message", "request_id", "method", "path", "status", "duration_ms"}
    assert (first["request_id"], first["method"], first["path"], first["status"]) == (
        "abc-123", "GET", f"{API}/healthz", 200)
    assert first["level"] == "INFO" and first["duration_ms"] >= 0 and first["time"].endswith("+00:00")
    assert (second["path"], second["status"]) == (f"{API}/records/12345", 404)
    assert len(second["request_id"]) == 32


def test_the_request_id_is_the_clients_when_sane_else_a_new_one(client):
    assert client.get(f"{API}/healthz", headers={"X-Request-ID": "a.b_c:d-1"}).headers["X-Request-ID"] == "a.b_c:d-1"
    for bad in ("has space", "x" * 129, "semi;colon", ""):
        given = client.get(f"{API}/healthz", headers={"X-Request-ID": bad}).headers["X-Request-ID"]
        assert given != bad and len(given) == 32
    first = client.get(f"{API}/healthz").headers["X-Request-ID"]
    assert first != client.get(f"{API}/healthz").headers["X-Request-ID"]
    problem = client.get(f"{API}/records/999")
    assert problem.get_json()["request_id"] == problem.headers["X-Request-ID"]
    assert problem.get_json()["instance"] == f"{API}/records/999"


def test_log_level_filters_the_access_log(make_app, capsys):
    client = make_app(LOG_LEVEL="warning").test_client()
    capsys.readouterr()
    client.get(f"{API}/healthz")
    assert [line for line in log_lines(capsys.readouterr().err) if line["logger"] == "api.access"] == []


def test_an_error_outside_the_view_is_a_500_problem_and_logged(make_app, capsys):
    app = make_app(PROPAGATE_EXCEPTIONS=False)  # as in production: TESTING alone would re-raise it
    failed = []

    @app.after_request
    def broken(response):
        if not failed:  # once: the error handler's own response goes through here too
            failed.append(True)
            raise RuntimeError("after the view")
        return response

    capsys.readouterr()
    response = app.test_client().get(f"{API}/healthz")
    assert response.status_code == 500
    assert response.get_json()["detail"].startswith("an unexpected error occurred")
    [error] = [line for line in log_lines(capsys.readouterr().err) if line["level"] == "ERROR"]
    assert "RuntimeError: after the view" in error["exception"] and error["path"] == f"{API}/healthz"


def test_text_that_is_not_unicode_is_answered_not_a_crash(client):
    response = client.post(f"{API}/verify", data='{"code": "FT1-N-AAAAAAB", "moves": "S \\ud800"}',
                           content_type="application/json")
    assert response.status_code == 200
    assert response.get_json()["error"]["index"] == 1


def broken_connection(invalidated: bool) -> DBAPIError:
    return DBAPIError("SELECT 1", {}, Exception("server closed the connection unexpectedly"),
                      connection_invalidated=invalidated)


def test_a_view_that_meets_a_broken_pooled_connection_runs_again_once(client, monkeypatch):
    """A connection found broken (SQLAlchemy has replaced it) costs the client nothing:
    the view runs again; a second broken one, or any other database error, is answered."""
    calls = []
    real = api.routes.deals.deal_json

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise broken_connection(invalidated=True)
        return real(*args, **kwargs)

    monkeypatch.setattr(api.routes.deals, "deal_json", flaky)
    assert client.get(f"{API}/deals/YU1-C-AAAAAAB").status_code == 200
    assert len(calls) == 2

    for failures in ([broken_connection(True), broken_connection(True)], [broken_connection(False)]):
        calls.clear()

        def failing(*args, **kwargs):
            calls.append(1)
            raise failures[len(calls) - 1]

        monkeypatch.setattr(api.routes.deals, "deal_json", failing)
        response = client.get(f"{API}/deals/YU1-C-AAAAAAB")
        assert response.status_code == 500 and len(calls) == len(failures)
