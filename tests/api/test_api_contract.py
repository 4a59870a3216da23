"""The contract: openapi.yaml is a valid OpenAPI 3.1 document, it and the app
have the same routes, and the checking client really rejects a wrong answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from flask import Response
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"

API = "/api/v1"


def spec() -> dict:
    return yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))


def test_the_spec_is_valid_openapi_3_1():
    document, _ = read_from_filename(str(SPEC_PATH))
    assert document["openapi"].startswith("3.1")
    validate(document)


#: the blueprints of the REST API (the players' pages live outside the contract)
API_BLUEPRINTS = {"deals", "verify", "records", "leaderboard", "challenges", "player_stats", "solver", "health",
                  "openapi", "players", "review", "webhooks"}


def test_every_route_is_in_the_spec_and_every_operation_is_a_route(app):
    assert spec()["servers"] == [{"url": API}]
    routes = set()
    for rule in app.url_map.iter_rules():
        assert rule.endpoint != "static"
        blueprint = rule.endpoint.rpartition(".")[0]
        assert (blueprint in API_BLUEPRINTS) == rule.rule.startswith(API + "/"), rule.rule
        if blueprint not in API_BLUEPRINTS:
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule[len(API):])
        routes |= {(path, method.lower()) for method in rule.methods - {"HEAD", "OPTIONS"}}
    operations = {(path, method) for path, item in spec()["paths"].items() for method in item
                  if method in {"get", "put", "post", "delete", "patch"}}
    assert routes == operations


def test_the_spec_is_served_as_yaml(client):
    response = client.get(f"{API}/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    assert yaml.safe_load(response.get_data(as_text=True)) == spec()


def test_the_checking_client_rejects_an_answer_the_spec_does_not_allow(client, check_against_spec):
    good = client.get(f"{API}/healthz")
    assert good.status_code == 200
    wrong = Response('{"status": "fine"}', 200, mimetype="application/json", headers={"X-Request-ID": "x"})
    wrong.request = good.request
    with pytest.raises(AssertionError, match="does not match openapi.yaml"):
        check_against_spec(wrong)
    undocumented = Response('{"status": "ok"}', 201, mimetype="application/json", headers={"X-Request-ID": "x"})
    undocumented.request = good.request
    with pytest.raises(AssertionError, match="does not match openapi.yaml"):
        check_against_spec(undocumented)
    not_a_problem = Response('{"status": 404}', 404, mimetype="application/problem+json",
                             headers={"X-Request-ID": "x"})
    not_a_problem.request = client.get(f"{API}/records/1").request
    with pytest.raises(AssertionError, match="does not match openapi.yaml"):
        check_against_spec(not_a_problem)


def test_unknown_paths_and_methods_are_problems(client):
    response = client.get(f"{API}/nothing-here")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["type"] == "about:blank" and body["title"] == "Not Found" and body["status"] == 404
    response = client.delete(f"{API}/records")
    assert response.status_code == 405
    assert set(response.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "POST"}
    assert response.get_json()["status"] == 405
    response = client.get(f"{API}")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
