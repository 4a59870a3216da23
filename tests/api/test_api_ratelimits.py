"""Rate limits (Flask-Limiter): per client IP on everything, per API key on
writes; 429 problems with ``Retry-After``; counters in memory or in Redis,
where several instances share them. Off in tests unless a test turns them on."""

from __future__ import annotations

import json
import os
import uuid

import pytest

API = "/api/v1"
CODE = "FT1-N-AAAAAAB"
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def limited(make_empty_app, **config):
    return make_empty_app(RATELIMIT_ENABLED=True, **config)


def assert_rate_limited(response, limit_words):
    assert response.status_code == 429
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["type"].endswith("/rate-limited") and problem["title"] == "Too many requests"
    assert limit_words in problem["detail"]
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    assert f"try again in {retry_after} s" in problem["detail"]


def test_rate_limits_are_off_in_tests_unless_turned_on(make_empty_app):
    client = make_empty_app(RATELIMIT_PER_CLIENT="2 per minute").test_client()
    assert [client.get(f"{API}/deals/{CODE}").status_code for _ in range(5)] == [200] * 5


def test_each_client_ip_has_one_budget_for_all_endpoints(make_empty_app):
    app = limited(make_empty_app, RATELIMIT_PER_CLIENT="3 per minute")
    ann = app.test_client()
    assert ann.get(f"{API}/deals/{CODE}").status_code == 200
    assert ann.get(f"{API}/records").status_code == 200
    assert ann.post(f"{API}/verify", json={"code": CODE, "moves": "S"}).status_code == 200
    assert_rate_limited(ann.get(f"{API}/leaderboard?variant=forty-thieves"), "3 per 1 minute")
    bob = app.test_client()
    bob.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    assert bob.get(f"{API}/deals/{CODE}").status_code == 200  # another IP, another budget
    # the orchestrator's probes are never limited
    assert ann.get(f"{API}/healthz").status_code == 200 and ann.get(f"{API}/readyz").status_code == 200


def test_writes_are_limited_per_api_key(make_empty_app, make_key, auth):
    app = limited(make_empty_app, API_KEYS_REQUIRED=True, RATELIMIT_WRITES="2 per minute")
    ann, bob = make_key("ann-laptop"), make_key("bob-phone")
    client = app.test_client()

    def submit(token, player):
        return client.post(f"{API}/records", json={"code": CODE, "player": player, "moves": "S"},
                           headers=auth(token))

    assert [submit(ann, p).status_code for p in ("a1", "a2")] == [201, 201]
    refused = submit(ann, "a3")
    assert_rate_limited(refused, "2 per 1 minute")
    assert submit(bob, "b1").status_code == 201  # the same IP, another key: its own budget
    assert len(client.get(f"{API}/records").get_json()["items"]) == 3  # the refused write stored nothing
    assert client.post(f"{API}/verify", json={"code": CODE, "moves": "S"}).status_code == 200  # not a write


def test_writes_without_a_key_count_per_ip(make_empty_app):
    client = limited(make_empty_app, RATELIMIT_WRITES="1 per minute").test_client()
    assert client.post(f"{API}/records", json={"code": CODE, "player": "a", "moves": "S"}).status_code == 201
    assert client.post(f"{API}/records", json={"code": CODE, "player": "b", "moves": "S"}).status_code == 429


def test_behind_trusted_proxies_the_forwarded_client_ip_counts(make_empty_app):
    client = limited(make_empty_app, RATELIMIT_PER_CLIENT="1 per minute", TRUSTED_PROXIES=1).test_client()

    def get(ip):
        return client.get(f"{API}/deals/{CODE}", headers={"X-Forwarded-For": ip}).status_code

    assert (get("198.51.100.1"), get("198.51.100.2"), get("198.51.100.1")) == (200, 200, 429)
    untrusting = limited(make_empty_app, RATELIMIT_PER_CLIENT="1 per minute").test_client()
    assert untrusting.get(f"{API}/deals/{CODE}", headers={"X-Forwarded-For": "198.51.100.1"}).status_code == 200
    # without trusted proxies the header is ignored: the connection's address counts
    assert untrusting.get(f"{API}/deals/{CODE}", headers={"X-Forwarded-For": "198.51.100.2"}).status_code == 429


def test_in_memory_counters_belong_to_one_process(make_empty_app):
    first = limited(make_empty_app, RATELIMIT_PER_CLIENT="1 per minute").test_client()
    second = limited(make_empty_app, RATELIMIT_PER_CLIENT="1 per minute").test_client()
    assert first.get(f"{API}/deals/{CODE}").status_code == 200
    assert second.get(f"{API}/deals/{CODE}").status_code == 200  # its own counter: memory:// is per instance
    assert first.get(f"{API}/deals/{CODE}").status_code == 429


# -- Redis: one budget for several instances -------------------------------------------

@pytest.fixture
def redis_uri():
    """The local Redis, with a key prefix of this test's own (its keys are deleted afterwards)."""
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError as error:
        pytest.skip(f"no Redis at {REDIS_URL}: {error}")
    prefix = f"test-{uuid.uuid4().hex}"
    yield REDIS_URL, prefix
    keys = list(client.scan_iter(f"*{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


def test_instances_sharing_redis_share_the_budget(make_empty_app, redis_uri):
    uri, prefix = redis_uri
    config = {"RATELIMIT_STORAGE_URI": uri, "RATELIMIT_KEY_PREFIX": prefix, "RATELIMIT_PER_CLIENT": "3 per minute"}
    one, two = (limited(make_empty_app, **config).test_client() for _ in range(2))
    assert [c.get(f"{API}/deals/{CODE}").status_code for c in (one, two, one)] == [200, 200, 200]
    assert_rate_limited(two.get(f"{API}/deals/{CODE}"), "3 per 1 minute")
    assert one.get(f"{API}/deals/{CODE}").status_code == 429


def test_writes_per_key_are_shared_through_redis_too(make_empty_app, redis_uri, make_key, auth):
    uri, prefix = redis_uri
    config = {"RATELIMIT_STORAGE_URI": uri, "RATELIMIT_KEY_PREFIX": prefix, "RATELIMIT_WRITES": "1 per minute",
              "API_KEYS_REQUIRED": True}
    one = limited(make_empty_app, **config).test_client()
    two = limited(make_empty_app, **config).test_client()
    token = make_key("ann-laptop")
    body = {"code": CODE, "moves": "S"}
    assert one.post(f"{API}/records", json={**body, "player": "a"}, headers=auth(token)).status_code == 201
    assert two.post(f"{API}/records", json={**body, "player": "b"}, headers=auth(token)).status_code == 429


def test_a_storage_that_is_down_does_not_take_the_service_down(make_empty_app, capsys):
    app = limited(make_empty_app, RATELIMIT_STORAGE_URI="redis://127.0.0.1:1/0", RATELIMIT_PER_CLIENT="2 per minute")
    client = app.test_client()
    capsys.readouterr()
    # nothing listens on port 1: the limiter falls back to counting in memory, and answers go on
    assert [client.get(f"{API}/deals/{CODE}").status_code for _ in range(3)] == [200, 200, 429]
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]  # all JSON
    assert any(line["logger"] == "flask-limiter" and "falling back to in-memory storage" in line["message"]
               for line in lines)
