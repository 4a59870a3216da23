"""Through a real server: several gunicorn workers started at once on one fresh SQLite
file, and request bodies sent chunked (no ``Content-Length``) past the size limit."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from api.platform.db import Database
from tests.conftest import ROOT

API = "/api/v1"
GUNICORN = Path(sys.executable).with_name("gunicorn")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(port: int, server: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "gunicorn stopped"
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", f"{API}/readyz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("gunicorn did not answer /readyz")


def send_chunked(port: int, path: str, body: bytes, chunk: int = 4096) -> tuple[int, dict]:
    """POST ``body`` with ``Transfer-Encoding: chunked`` (http.client sends an iterable so)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    pieces = (body[i:i + chunk] for i in range(0, len(body), chunk))
    connection.request("POST", path, body=pieces, headers={"Content-Type": "application/json"},
                       encode_chunked=True)
    response = connection.getresponse()
    answer = json.loads(response.read() or b"null")
    connection.close()
    return response.status, answer


@pytest.fixture
def gunicorn(tmp_path):
    """``gunicorn(workers, **env)``: a started gunicorn on a fresh SQLite file; its port and log."""
    servers = []

    def start(workers: int, *options: str, **env: str) -> tuple[int, subprocess.Popen, Path]:
        port = free_port()
        log = tmp_path / f"gunicorn-{port}.log"
        environ = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'records.sqlite3'}",
                   "RATELIMIT_ENABLED": "0", **env}
        with log.open("wb") as out:
            server = subprocess.Popen(
                [str(GUNICORN), *options, "--workers", str(workers), "--bind", f"127.0.0.1:{port}",
                 "--no-control-socket", "--chdir", str(ROOT), "api:create_app()"],
                env=environ, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        servers.append(server)
        return port, server, log

    yield start
    for server in servers:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.mark.slow
def test_three_gunicorn_workers_start_on_one_fresh_sqlite_file(gunicorn, tmp_path):
    """Each worker migrates on start; a lock file beside the database lets one migrate
    while the others wait and then find the schema at head."""
    port, server, log = gunicorn(3)
    wait_ready(port, server)
    for _ in range(12):  # the requests spread over the workers: each of them answers
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", f"{API}/readyz")
        assert connection.getresponse().status == 200
        connection.close()
    time.sleep(1)  # a worker that failed to start would have been reported by now
    assert server.poll() is None
    text = log.read_text(errors="replace")
    assert "already exists" not in text and "Worker failed to boot" not in text and "Traceback" not in text, text
    assert text.count("Booting worker") == 3, text  # none died and was replaced
    assert text.count("database schema upgraded: empty ->") == 1, text  # one worker migrated, once
    database = Database(f"sqlite:///{tmp_path / 'records.sqlite3'}")
    assert database.current() == database.heads
    database.dispose()
    assert (tmp_path / "records.sqlite3.lock").exists()


@pytest.mark.slow
def test_a_chunked_body_past_the_limit_is_413_through_gunicorn(gunicorn, legal_log):
    port, server, _ = gunicorn(1, MAX_CONTENT_LENGTH="2000")
    wait_ready(port, server)
    small = json.dumps({"code": "FT1-N-AAAAAAB", "moves": "T7>F S"}).encode()
    status, answer = send_chunked(port, f"{API}/verify", small, chunk=7)
    assert status == 200 and answer["legal"] is True
    # valid JSON whose first 2000 bytes are valid JSON too: cut at the limit it would have passed
    padded = small + b" " * 5000
    status, answer = send_chunked(port, f"{API}/verify", padded)
    assert status == 413, answer
    assert answer["status"] == 413 and "larger than 2000 bytes" in answer["detail"]
    exact = small + b" " * (2000 - len(small))  # exactly the limit is fine
    assert send_chunked(port, f"{API}/verify", exact)[0] == 200


@pytest.mark.slow
def test_a_malformed_chunked_body_is_400_through_gunicorn(gunicorn):
    port, server, log = gunicorn(1)
    wait_ready(port, server)
    body = b'{"code":"FT1-N-AAAAAAB","moves":"S"}'
    head = (b"POST /api/v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    for chunks in (b"ZZ\r\n" + body + b"\r\n0\r\n\r\n",                      # not a chunk size
                   b"%x\r\n" % len(body) + body + b"XX0\r\n\r\n"):              # no CRLF after the chunk
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(head + chunks)
            answer = b""
            while data := sock.recv(65536):
                answer += data
        status_line, _, rest = answer.partition(b"\r\n")
        assert status_line.startswith(b"HTTP/1.1 400"), answer
        problem = json.loads(rest.partition(b"\r\n\r\n")[2])
        assert problem["status"] == 400 and "chunked request body is malformed" in problem["detail"]
    assert "unhandled error" not in log.read_text(errors="replace")


def raw_request(port: int, head: bytes) -> tuple[int, str, bytes]:
    """Send ``head`` (a request without a body) as it is; the status, the content type and the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        answer = b""
        while data := sock.recv(65536):
            answer += data
    status_line, _, rest = answer.partition(b"\r\n")
    headers, _, body = rest.partition(b"\r\n\r\n")
    kind = next((line.split(b":", 1)[1].strip().decode() for line in headers.split(b"\r\n")
                 if line.lower().startswith(b"content-type:")), "")
    return int(status_line.split()[1]), kind, body


def scrape(port: int) -> dict[str, float]:
    """``GET /metrics``: each sample line's name and labels, and its value."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type").startswith("text/plain")
    text = response.read().decode()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


@pytest.mark.slow
def test_the_shipped_gunicorn_config_answers_like_the_app_and_shares_metrics(gunicorn, tmp_path):
    """``gunicorn -c gunicorn.conf.py``: a request line or header fields past the app's limits
    are problems (the app's own checks, inside gunicorn's larger limits); only past gunicorn's
    own does gunicorn answer, in HTML. Two processes add up their metrics, whichever answers
    the scrape. gunicorn's own log lines are the app's JSON."""
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    port, server, log = gunicorn(2, "-c", str(ROOT / "gunicorn.conf.py"), PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
    wait_ready(port, server)
    before = scrape(port)
    for _ in range(12):  # spread over both processes
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", f"{API}/deals/FT1-N-AAAAAAB")
        assert connection.getresponse().status == 200
        connection.close()
    after = scrape(port)
    deal = 'flask_http_request_duration_seconds_count{method="GET",path="/api/v1/deals/<code>",status="200"}'
    assert after[deal] - before.get(deal, 0) == 12
    # both processes' pools, added up (the second process may still be making its app on a loaded machine)
    deadline = time.monotonic() + 60
    while scrape(port)["solitaire_db_pool_size"] < 2 * 5 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert scrape(port)["solitaire_db_pool_size"] == 2 * 5

    long_line = f"GET {API}/healthz?{'x' * 5000} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    status, kind, body = raw_request(port, long_line)
    assert (status, kind) == (414, "application/problem+json")
    assert "more than the 4094 this server accepts" in json.loads(body)["detail"]
    headers = "".join(f"X-Filler-{n}: {n}\r\n" for n in range(120))
    status, kind, body = raw_request(port, f"GET {API}/healthz HTTP/1.1\r\nHost: x\r\n{headers}"
                                           f"Connection: close\r\n\r\n".encode())
    assert (status, kind) == (431, "application/problem+json") and "header fields" in json.loads(body)["detail"]
    big = f"GET {API}/healthz HTTP/1.1\r\nHost: x\r\nX-Big: {'y' * 9000}\r\nConnection: close\r\n\r\n"
    status, kind, body = raw_request(port, big.encode())
    assert (status, kind) == (431, "application/problem+json") and "X-Big" in json.loads(body)["detail"]
    # past gunicorn's own limit (twice the app's, at most 8190 for the line): gunicorn's HTML, as documented
    status, kind, _ = raw_request(port, f"GET /{'x' * 9000} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert status == 414 and kind != "application/problem+json"

    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    booting = [json.loads(line) for line in lines if "Booting worker" in line]
    assert len(booting) == 2 and booting[0]["logger"] == "gunicorn.error", lines[:5]
    # one access line a request: the app's
    deals = [entry for entry in map(json.loads, lines) if f"GET {API}/deals/FT1-N-AAAAAAB" in entry["message"]]
    assert len(deals) == 12 and {entry["logger"] for entry in deals} == {"api.access"}, deals[:2]


def test_the_shipped_gunicorn_logger_builds_access_fields_only_for_its_own_access_log(monkeypatch, tmp_path):
    """gunicorn builds every request's access fields whenever a logging configuration is set,
    and the app logs each request itself: ``gunicorn.conf.py``'s ``Logger`` builds them only
    when ``--access-logfile`` asks for gunicorn's access log too."""
    import importlib.util
    from types import SimpleNamespace

    from gunicorn import glogging

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # (the file makes one when unset)
    spec = importlib.util.spec_from_file_location("shipped_gunicorn_conf", ROOT / "gunicorn.conf.py")
    assert spec is not None and spec.loader is not None
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)

    class Built(Exception):
        pass

    def atoms(self, *args):
        raise Built

    monkeypatch.setattr(glogging.Logger, "atoms", atoms)
    settings = {"accesslog": None, "logconfig": None, "logconfig_dict": conf.logconfig_dict, "logconfig_json": None,
                "syslog": False, "disable_redirect_access_to_syslog": False}
    shipped, plain = conf.Logger.__new__(conf.Logger), glogging.Logger.__new__(glogging.Logger)
    shipped.cfg = plain.cfg = SimpleNamespace(**settings)
    shipped.access(None, None, {}, None)  # nothing built
    with pytest.raises(Built):  # gunicorn's own logger builds them, to log nothing
        plain.access(None, None, {}, None)
    shipped.cfg = SimpleNamespace(**{**settings, "accesslog": "-"})
    with pytest.raises(Built):
        shipped.access(None, None, {}, None)
