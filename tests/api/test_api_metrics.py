"""Prometheus metrics of both tiers, scraped after real traffic: the web app's ``GET /metrics``
(HTTP durations by route rule, verifications, records, fair-play flags, queue depth, the
pool) and a real Celery worker's ``WORKER_METRICS_PORT`` (tasks, durations, search
outcomes, nodes); the worker's log lines are the app's JSON, with the task's id and name.
(Through gunicorn's several processes: tests/api/test_api_server.py.)"""

from __future__ import annotations

import json
import logging
import socket
import struct
import time
import urllib.request

import pytest

from api.platform import metrics

API = "/api/v1"
FT = "FT1-N-AAAAAAB"
YU_WINNABLE = "YU1-C-AAAAAAB"
WAIT_SECONDS = 90


def parse(text: str) -> dict[str, float]:
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def scrape_app(app) -> dict[str, float]:
    response = app.test_client().get("/metrics")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    return parse(response.get_data(as_text=True))


def delta(after: dict[str, float], before: dict[str, float], sample: str) -> float:
    return after.get(sample, 0) - before.get(sample, 0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_web_metrics_count_real_traffic(make_app, legal_log):
    app = make_app()
    client = app.test_client()
    before = scrape_app(app)
    assert client.post(f"{API}/verify", json={"code": FT, "moves": "S"}).get_json()["legal"]
    assert not client.post(f"{API}/verify", json={"code": FT, "moves": "T1>T2"}).get_json()["legal"]
    token = client.post(f"{API}/players", json={"name": "metrics-ann"}).get_json()["token"]
    other = client.post(f"{API}/players", json={"name": "metrics-bob"}).get_json()["token"]
    body = {"code": FT, "moves": legal_log(FT, 6)}
    first = client.post(f"{API}/records", json=body, headers={"Authorization": f"Bearer {token}"})
    assert first.status_code == 201
    assert client.post(f"{API}/records", json=body, headers={"Authorization": f"Bearer {token}"}).status_code == 200
    copy = client.post(f"{API}/records", json=body, headers={"Authorization": f"Bearer {other}"})
    assert copy.status_code == 201 and not copy.get_json()["ranked"]
    record_id = first.get_json()["id"]
    assert client.get(f"{API}/records/{record_id}").status_code == 200
    assert client.get(f"{API}/records/999999").status_code == 404
    assert client.get("/no/such/page").status_code == 404
    after = scrape_app(app)

    assert delta(after, before, 'solitaire_verifications_total{result="legal",variant="forty-thieves"}') == 4
    assert delta(after, before, 'solitaire_verifications_total{result="illegal",variant="forty-thieves"}') == 1
    # a repeated submission stores nothing: two records, one of them a flagged copy
    assert delta(after, before, 'solitaire_records_total{ranked="true",variant="forty-thieves"}') == 1
    assert delta(after, before, 'solitaire_records_total{ranked="false",variant="forty-thieves"}') == 1
    assert delta(after, before, 'solitaire_fairplay_flags_total{flag="copy"}') == 1
    rule = 'flask_http_request_duration_seconds_count{method="GET",path="/api/v1/records/<int:record_id>",'
    assert delta(after, before, rule + 'status="200"}') == 1 and delta(after, before, rule + 'status="404"}') == 1
    assert delta(after, before, 'flask_http_request_duration_seconds_count{method="GET",path="<unmatched>",'
                                'status="404"}') == 1
    assert not any(f'path="/api/v1/records/{record_id}"' in sample for sample in after)  # never the raw path
    assert 'flask_http_request_duration_seconds_bucket{le="0.005",method="POST",path="/api/v1/verify",' \
           'status="200"}' in after
    assert "solitaire_db_pool_checked_out" in after and after["solitaire_db_pool_size"] >= 5
    assert "solitaire_solver_queue_depth" not in "".join(after)  # no broker: no queues to read
    import engine

    assert after[f'solitaire_engine_info{{build="{engine.BUILD}",version="{engine.__version__}"}}'] == 1


def test_metrics_are_for_loopback_and_the_allowed_networks(make_app):
    app = make_app(METRICS_ALLOW="10.1.0.0/16, 192.0.2.7")
    client = app.test_client()
    for address, status in (("127.0.0.1", 200), ("::1", 200), ("10.1.200.3", 200), ("192.0.2.7", 200),
                            ("10.2.0.1", 403), ("192.0.2.8", 403)):
        response = client.get("/metrics", environ_base={"REMOTE_ADDR": address})
        assert response.status_code == status, address
        if status == 403:
            assert response.mimetype == "application/problem+json"
            assert "METRICS_ALLOW" in response.get_json()["detail"]


def test_both_tiers_metrics_after_a_search_on_a_real_worker(tier, tmp_path):
    """A search waits in its queue (the web app's gauge sees it), a worker with
    WORKER_METRICS_PORT runs it: the worker's scrape has the task, its duration, the
    search's outcome and nodes; its log lines are JSON objects with the task's id and name."""
    app = tier.app()
    client = app.test_client()
    url = f"{API}/deals/{YU_WINNABLE}/solvability"
    assert client.get(url).status_code == 202  # no worker yet: the task waits
    searches = f'solitaire_solver_queue_depth{{queue="{tier.prefix}.searches"}}'
    waiting = scrape_app(app)
    assert waiting[searches] == 1 and waiting[f'solitaire_solver_queue_depth{{queue="{tier.prefix}.hints"}}'] == 0

    port = free_port()
    multiproc = tmp_path / "worker-metrics"
    multiproc.mkdir()
    worker = tier.worker(concurrency=2, WORKER_METRICS_PORT=port, PROMETHEUS_MULTIPROC_DIR=multiproc)
    deadline = time.monotonic() + WAIT_SECONDS
    while (response := client.get(url)).status_code == 202:
        assert time.monotonic() < deadline, "the search did not end"
        time.sleep(0.2)
    outcome = response.get_json()["status"]
    assert outcome in ("winnable", "unwinnable", "unknown")

    done = 'solitaire_tasks_total{state="success",task="api.solve_deal"}'
    timed = 'solitaire_task_duration_seconds_count{task="api.solve_deal"}'
    while True:  # (the answer is stored before the task returns and is counted, and the count comes
        # before its duration (api.platform.metrics.task_finished): wait for the duration, the last written)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            scraped = parse(answer.read().decode())
        if timed in scraped or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert scraped[done] == 1
    assert scraped[timed] == 1
    assert scraped[f'solitaire_searches_total{{kind="deal",outcome="{outcome}"}}'] == 1
    assert scraped['solitaire_search_nodes_total{kind="deal"}'] > 0
    assert scraped["solitaire_db_pool_size"] >= 5  # the pool processes' engines, added up
    assert [sample for sample in scraped if sample.startswith("solitaire_engine_info{")] == [
        next(sample for sample in scrape_app(app) if sample.startswith("solitaire_engine_info{"))]  # one build
    assert scrape_app(app)[searches] == 0  # taken off the queue

    logged = [line for line in worker.output if '"level"' in line]
    assert logged and all(line.startswith("{") for line in logged), logged[:5]  # never wrapped by Celery
    objects = [json.loads(line) for line in logged]
    assert all(set(item) <= set(metrics_fields()) for item in objects)
    in_task = [item for item in objects if item.get("task_name") == "api.solve_deal"]
    assert in_task and all(item["task_id"] for item in in_task), objects[-10:]


def metrics_fields() -> tuple[str, ...]:
    from api.platform.logs import FIELDS

    return FIELDS


def test_a_worker_with_a_metrics_port_and_no_directory_makes_its_own(tier, monkeypatch):
    """WORKER_METRICS_PORT without PROMETHEUS_MULTIPROC_DIR: the worker makes a directory (as
    gunicorn.conf.py does for the web tier) and its scrape adds up its pool processes' values,
    the tasks they ran and the pools of their database engines."""
    monkeypatch.delenv(metrics.MULTIPROC_DIR, raising=False)
    app = tier.app()
    port = free_port()
    worker = tier.worker(concurrency=2, WORKER_METRICS_PORT=port)
    from api.tasks import WEBHOOK_PRUNE

    app.extensions["api.celery"].tasks[WEBHOOK_PRUNE].apply_async()
    done = f'solitaire_tasks_total{{state="success",task="{WEBHOOK_PRUNE}"}}'
    timed = f'solitaire_task_duration_seconds_count{{task="{WEBHOOK_PRUNE}"}}'
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            scraped = parse(answer.read().decode())
        if timed in scraped:
            break
        assert time.monotonic() < deadline, "the task's metrics did not come"
        time.sleep(0.2)
    assert scraped[done] == 1
    assert scraped["solitaire_db_pool_size"] >= 2 * 5  # both pool processes' engines (written to the directory)
    assert worker.process.poll() is None


def test_a_scrape_skips_a_file_a_process_is_still_creating(tmp_path, monkeypatch):
    """A process's file exists at 0 bytes before it is sized (and stays so if the process is
    killed then): the library's own collector fails the whole scrape on it
    (prometheus/client_python#1199); the service's reads every other file."""
    from prometheus_client import CollectorRegistry, Counter, generate_latest, values
    from prometheus_client.multiprocess import MultiProcessCollector

    monkeypatch.setenv(metrics.MULTIPROC_DIR, str(tmp_path))
    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(lambda: 4242))
    Counter("soak_written", "a counter of a process that wrote", registry=None).inc(3)
    (tmp_path / "counter_4243.db").write_bytes(b"")  # a process creating its file
    plain = CollectorRegistry()
    MultiProcessCollector(plain, path=str(tmp_path))
    with pytest.raises(struct.error):
        generate_latest(plain)
    assert "soak_written_total 3.0" in generate_latest(metrics.registry()).decode()


def test_random_methods_and_unmatched_paths_keep_the_series_bounded(make_app):
    """Any method a client makes up (gunicorn passes them on) counts as ``<other>``, and any path
    no route matches as ``<unmatched>``: hundreds of such requests add a handful of series."""
    import random
    import string

    app = make_app()
    client = app.test_client()
    client.get(f"{API}/healthz")
    before = scrape_app(app)
    chance = random.Random(46)

    def made_up_requests(count):
        for n in range(count):
            method = "".join(chance.choices(string.ascii_uppercase, k=chance.randint(3, 12)))
            path = f"/{''.join(chance.choices(string.ascii_lowercase, k=8))}/{n}"
            assert client.open(path, method=method).status_code in (404, 405)
            assert client.open(f"{API}/healthz", method=method).status_code == 405
            assert client.get(path).status_code == 404

    made_up_requests(300)
    after = scrape_app(app)
    new = set(after) - set(before)
    methods = {sample.split('method="', 1)[1].split('"', 1)[0] for sample in after if 'method="' in sample}
    # (the series are the process's: other tests' apps have routes of their own, so only the new ones count)
    paths = {sample.split('path="', 1)[1].split('"', 1)[0] for sample in new if 'path="' in sample}
    assert methods <= metrics.METHODS | {metrics.OTHER_METHOD}, methods
    assert metrics.OTHER_METHOD in methods and "GET" in methods
    assert paths <= {metrics.UNMATCHED, f"{API}/healthz", "/metrics"} | {r.rule for r in app.url_map.iter_rules()}
    assert len(new) < 80, sorted(new)  # (a histogram is ~17 samples a label set: three or so new sets)
    other = f'flask_http_request_total{{method="{metrics.OTHER_METHOD}",status="405"}}'
    assert delta(after, before, other) == 300
    assert delta(after, before, 'flask_http_request_duration_seconds_count{method="<other>",path="<unmatched>",'
                                'status="405"}') + delta(after, before, 'flask_http_request_duration_seconds_count'
                                                                        '{method="<other>",path="<unmatched>",'
                                                                        'status="404"}') == 600
    made_up_requests(300)  # other made-up methods and paths: not one series more
    assert set(scrape_app(app)) == set(after)


def test_trusted_proxies_is_warned_of_when_the_app_is_made(make_app, caplog):
    """X-Forwarded-For is believed with TRUSTED_PROXIES: the log says what a client that reaches the
    server directly can then do."""
    with caplog.at_level(logging.WARNING, logger="api.platform.limits"):
        make_app()
    assert not [r for r in caplog.records if "TRUSTED_PROXIES" in r.getMessage()]
    with caplog.at_level(logging.WARNING, logger="api.platform.limits"):
        app = make_app(TRUSTED_PROXIES=1)
    [warning] = [r for r in caplog.records if "TRUSTED_PROXIES" in r.getMessage()]
    text = warning.getMessage()
    assert warning.levelno == logging.WARNING and "TRUSTED_PROXIES=1" in text
    assert all(word in text for word in ("X-Forwarded-For", "directly", "rate limits", "/metrics")), text
    # what it warns of: a direct client that sends the header reads /metrics as loopback
    spoofed = app.test_client().get("/metrics", environ_base={"REMOTE_ADDR": "203.0.113.9"},
                                    headers={"X-Forwarded-For": "127.0.0.1"})
    assert spoofed.status_code == 200
