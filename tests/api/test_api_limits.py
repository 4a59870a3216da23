"""The limits on what one request may ask (body size, actions per log, player
names, page sizes), each configurable and answered with a problem."""

from __future__ import annotations

import pytest

from api.platform.config import ConfigError, load_settings

API = "/api/v1"
CODE = "FT1-N-AAAAAAB"


def problem_fields(response):
    assert response.mimetype == "application/problem+json"
    return [e["field"] for e in response.get_json()["errors"]]


# -- request body ------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/verify", "/records"])
def test_a_body_over_the_limit_is_413_saying_the_limit(make_empty_app, path):
    client = make_empty_app(MAX_CONTENT_LENGTH=2000).test_client()
    response = client.post(API + path, json={"code": CODE, "player": "ann", "moves": "S " * 1200})
    assert response.status_code == 413
    problem = response.get_json()
    assert problem["status"] == 413 and "larger than 2000 bytes" in problem["detail"]
    assert len(client.get(f"{API}/records").get_json()["items"]) == 0


# -- actions per log ---------------------------------------------------------------

@pytest.mark.parametrize("moves", [" ".join(["S"] * 5001), ["S"] * 5001, "S,U;" * 2500 + " S"])
def test_a_log_over_5000_actions_is_refused_before_the_replay(client, moves):
    for path, extra in (("/verify", {}), ("/records", {"player": "ann"})):
        response = client.post(API + path, json={"code": CODE, "moves": moves, **extra})
        assert response.status_code == 422, path
        assert problem_fields(response) == ["moves"]
        assert "5001 actions; at most 5000" in response.get_json()["detail"]
    assert len(client.get(f"{API}/records").get_json()["items"]) == 0


def test_a_log_of_5000_actions_is_replayed(client):
    verdict = client.post(f"{API}/verify", json={"code": CODE, "moves": ["S"] * 5000}).get_json()
    assert verdict["actions"] == 64 and verdict["error"]["index"] == 64  # the stock has 64 cards


def test_the_action_limit_is_configurable(make_empty_app):
    client = make_empty_app(MAX_LOG_ACTIONS=3).test_client()
    assert client.post(f"{API}/verify", json={"code": CODE, "moves": "T7>F S S"}).status_code == 200
    response = client.post(f"{API}/records", json={"code": CODE, "player": "ann", "moves": "T7>F S S S"})
    assert response.status_code == 422
    assert response.get_json()["errors"] == [{"field": "moves",
                                              "message": "The log has 4 actions; at most 3 are accepted."}]


# -- player names ------------------------------------------------------------------

def test_a_player_name_is_trimmed_and_the_trimmed_name_is_the_player(client):
    first = client.post(f"{API}/records", json={"code": CODE, "player": "  Zoë Å \u3000", "moves": "S"})
    assert first.status_code == 201 and first.get_json()["player"] == "Zoë Å"
    again = client.post(f"{API}/records", json={"code": CODE, "player": "Zoë Å", "moves": "S"})
    assert again.status_code == 200 and again.get_json()["id"] == first.get_json()["id"]
    assert len(client.get(f"{API}/records", query_string={"player": " Zoë Å "}).get_json()["items"]) == 1


@pytest.mark.parametrize("player, words", [
    ("x" * 33, "Longer than 32 characters"),
    ("", "empty"),
    (" \u3000 ", "empty"),
    ("ann\x00", "control characters (character 4 is U+0000)"),
    ("\x1bann", "control characters"),
    ("an\u200bn", "Character 3 (U+200B) is not printable"),
])
def test_a_player_name_must_be_1_to_32_printable_characters(client, player, words):
    response = client.post(f"{API}/records", json={"code": CODE, "player": player, "moves": "S"})
    assert response.status_code == 422
    assert problem_fields(response) == ["player"]
    assert words in response.get_json()["errors"][0]["message"]


def test_a_name_of_32_characters_and_white_space_around_it_fits(client):
    response = client.post(f"{API}/records", json={"code": CODE, "player": " " + "ü" * 32 + "  ", "moves": "S"})
    assert response.status_code == 201 and response.get_json()["player"] == "ü" * 32


def test_the_name_length_is_configurable(make_empty_app):
    client = make_empty_app(MAX_PLAYER_LENGTH=4).test_client()
    assert client.post(f"{API}/records", json={"code": CODE, "player": "anna", "moves": "S"}).status_code == 201
    response = client.post(f"{API}/records", json={"code": CODE, "player": "annie", "moves": "S"})
    assert response.status_code == 422 and "Longer than 4" in response.get_json()["detail"]
    assert client.get(f"{API}/records?player=annie").status_code == 422


# -- page sizes ----------------------------------------------------------------------

def test_page_sizes_are_limited_and_configurable(make_empty_app, client):
    assert client.get(f"{API}/records?page_size=100").status_code == 200
    assert problem_fields(client.get(f"{API}/records?page_size=101")) == ["page_size"]
    small = make_empty_app(MAX_PAGE_SIZE=5).test_client()
    assert small.get(f"{API}/records").get_json()["page_size"] == 5  # the default, 20, is cut to the maximum
    response = small.get(f"{API}/records?page_size=6")
    assert problem_fields(response) == ["page_size"]
    assert "less than or equal to 5" in response.get_json()["detail"]
    assert problem_fields(small.get(f"{API}/leaderboard?variant=yukon-classic&limit=6")) == ["limit"]
    assert small.get(f"{API}/leaderboard?variant=yukon-classic").get_json()["filters"]["limit"] == 5


# -- the settings ----------------------------------------------------------------------

def test_the_limits_come_from_the_environment(tmp_path):
    settings = load_settings(str(tmp_path), environ={
        "MAX_LOG_ACTIONS": "100", "MAX_PLAYER_LENGTH": "64", "MAX_PAGE_SIZE": "500",
        "RATELIMIT_ENABLED": "off", "RATELIMIT_STORAGE_URI": "redis://cache:6379/2",
        "RATELIMIT_PER_CLIENT": "10/second;1000/hour", "RATELIMIT_WRITES": "5 per minute",
        "RATELIMIT_KEY_PREFIX": "blue", "TRUSTED_PROXIES": "2"})
    assert {k: settings[k] for k in ("MAX_LOG_ACTIONS", "MAX_PLAYER_LENGTH", "MAX_PAGE_SIZE", "RATELIMIT_ENABLED",
                                     "RATELIMIT_STORAGE_URI", "RATELIMIT_PER_CLIENT", "RATELIMIT_WRITES",
                                     "RATELIMIT_KEY_PREFIX", "TRUSTED_PROXIES")} == {
        "MAX_LOG_ACTIONS": 100, "MAX_PLAYER_LENGTH": 64, "MAX_PAGE_SIZE": 500, "RATELIMIT_ENABLED": False,
        "RATELIMIT_STORAGE_URI": "redis://cache:6379/2", "RATELIMIT_PER_CLIENT": "10/second;1000/hour",
        "RATELIMIT_WRITES": "5 per minute", "RATELIMIT_KEY_PREFIX": "blue", "TRUSTED_PROXIES": 2}
    defaults = load_settings(str(tmp_path), environ={})
    assert (defaults["MAX_LOG_ACTIONS"], defaults["MAX_PLAYER_LENGTH"], defaults["MAX_PAGE_SIZE"]) == (5000, 32, 100)
    assert (defaults["RATELIMIT_ENABLED"], defaults["RATELIMIT_STORAGE_URI"]) == (True, "memory://")
    assert (defaults["RATELIMIT_PER_CLIENT"], defaults["RATELIMIT_WRITES"]) == ("300 per minute", "60 per minute")
    assert defaults["TRUSTED_PROXIES"] == 0


@pytest.mark.parametrize("env, name", [
    ({"MAX_LOG_ACTIONS": "0"}, "MAX_LOG_ACTIONS"),
    ({"MAX_PLAYER_LENGTH": "65"}, "MAX_PLAYER_LENGTH"),
    ({"MAX_PAGE_SIZE": "many"}, "MAX_PAGE_SIZE"),
    ({"MAX_PAGE_SIZE": "1001"}, "MAX_PAGE_SIZE"),
    ({"API_KEYS_REQUIRED": "maybe"}, "API_KEYS_REQUIRED"),
    ({"RATELIMIT_ENABLED": "sometimes"}, "RATELIMIT_ENABLED"),
    ({"RATELIMIT_STORAGE_URI": "ftp://cache"}, "RATELIMIT_STORAGE_URI"),
    ({"RATELIMIT_STORAGE_URI": "async+redis://cache"}, "RATELIMIT_STORAGE_URI"),
    ({"RATELIMIT_PER_CLIENT": "lots"}, "RATELIMIT_PER_CLIENT"),
    ({"RATELIMIT_WRITES": "5 per fortnight"}, "RATELIMIT_WRITES"),
    ({"TRUSTED_PROXIES": "-1"}, "TRUSTED_PROXIES"),
])
def test_bad_limits_name_the_variable(tmp_path, env, name):
    with pytest.raises(ConfigError, match=name):
        load_settings(str(tmp_path), environ=env)
