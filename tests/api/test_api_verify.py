"""``POST /verify``, and how every endpoint reads a JSON body."""

from __future__ import annotations

import pytest

from verifier import replay

API = "/api/v1"
CODE = "FT1-N-AAAAAAB"


def verify(client, body, **kwargs):
    return client.post(f"{API}/verify", json=body, **kwargs)


def test_a_legal_text_log_is_the_verifiers_verdict(client):
    response = verify(client, {"code": CODE, "moves": "T7>F  S # draw\nT10>T9"})
    assert response.status_code == 200
    verdict = response.get_json()
    assert verdict == replay(CODE, "T7>F  S # draw\nT10>T9").to_json()
    assert verdict["legal"] and verdict["verified"]
    assert verdict["canonical"] == "T7:AS>F1 S T10:6H>T9"
    assert (verdict["score"], verdict["moves"], verdict["foundation_cards"]) == (10, 3, 1)


def test_json_and_mixed_logs_mean_the_same(client):
    text = verify(client, {"code": CODE, "moves": "T7>F S"}).get_json()
    array = verify(client, {"code": CODE, "moves": [{"from": "T7", "to": "F"}, {"action": "draw"}]}).get_json()
    mixed = verify(client, {"code": CODE.lower(), "moves": ["t7:as>f1", {"from": "S", "to": "W"}]}).get_json()
    assert text == array == mixed


def test_an_illegal_log_is_answered_200_with_the_first_bad_action(client):
    response = verify(client, {"code": CODE, "moves": "T7>F T7>T1 S"})
    assert response.status_code == 200
    verdict = response.get_json()
    assert verdict["legal"] is False and verdict["verified"] is False
    assert verdict["error"]["index"] == 1 and verdict["error"]["action"] == "T7>T1"
    assert verdict["error"]["kind"] == "rule" and verdict["error"]["rule"].startswith("tableau.")
    assert verdict == replay(CODE, "T7>F T7>T1 S").to_json()
    assert verdict["canonical"] == "T7:AS>F1"


def test_notation_errors_come_from_the_verifier(client):
    verdict = verify(client, {"code": CODE, "moves": ["S", {"from": "T7", "to": "F", "x": 1}]}).get_json()
    assert verdict["legal"] is False
    assert verdict["error"]["index"] == 1 and verdict["error"]["kind"] == "syntax"
    assert "'x'" in verdict["error"]["message"]
    verdict = verify(client, {"code": CODE, "moves": "S Q9"}).get_json()
    assert (verdict["error"]["index"], verdict["error"]["rule"]) == (1, "syntax")


def test_claims_are_compared_not_trusted(client):
    good = verify(client, {"code": CODE, "moves": "T7>F", "claimed": {"score": 10, "moves": 1, "won": False}})
    assert good.get_json()["verified"] is True and good.get_json()["claims_match"] is True
    bad = verify(client, {"code": CODE, "moves": "T7>F", "claimed": {"score": 500}}).get_json()
    assert bad["legal"] is True and bad["verified"] is False
    assert bad["claims"] == {"score": {"claimed": 500, "actual": 10, "match": False}}
    assert verify(client, {"code": CODE, "moves": "S", "claimed": None}).get_json()["claims"] is None


def test_a_bad_code_is_422(client):
    response = verify(client, {"code": "FT1-C-AAAAAAB", "moves": "S"})
    assert response.status_code == 422
    [error] = response.get_json()["errors"]
    assert (error["field"], error["part"], error["position"]) == ("code", "rules", 5)


@pytest.mark.parametrize("body, fields", [
    ({"moves": "S"}, ["code"]),
    ({"code": CODE}, ["moves"]),
    ({"code": 5, "moves": "S"}, ["code"]),
    ({"code": CODE, "moves": 5}, ["moves"]),
    ({"code": CODE, "moves": {"from": "T7"}}, ["moves"]),
    ({"code": CODE, "moves": ["S", 7, None]}, ["moves.1", "moves.2"]),
    ({"code": CODE, "moves": "S", "player": "ann"}, ["player"]),
    ({"code": CODE, "moves": "S", "claimed": {"score": "10"}}, ["claimed.score"]),
    ({"code": CODE, "moves": "S", "claimed": {"score": 1.5}}, ["claimed.score"]),
    ({"code": CODE, "moves": "S", "claimed": {"moves": True}}, ["claimed.moves"]),
    ({"code": CODE, "moves": "S", "claimed": {"won": 1}}, ["claimed.won"]),
    ({"code": CODE, "moves": "S", "claimed": {"time": 3}}, ["claimed.time"]),
    ({"code": CODE, "moves": "S", "claimed": [10]}, ["claimed"]),
    ([CODE, "S"], ["body"]),
    ("S", ["body"]),
])
def test_wrong_fields_and_types_are_422_naming_the_field(client, body, fields):
    response = verify(client, body)
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["type"].endswith("/validation-error") and problem["title"] == "Invalid request"
    assert [e["field"] for e in problem["errors"]] == fields
    for field in fields:
        assert field in problem["detail"]


@pytest.mark.parametrize("data, words", [
    ('{"code": "FT1-N-AAAAAAB", "moves": "S"', "line 1 column"),
    ("", "empty"),
    ("   ", "empty"),
    ('{"code": "FT1-N-AAAAAAB", "moves": "S", "claimed": {"score": NaN}}', "NaN"),
    (b'{"code": "\xff"}', "not valid JSON"),
])
def test_malformed_json_is_400(client, data, words):
    response = client.post(f"{API}/verify", data=data, content_type="application/json")
    assert response.status_code == 400
    problem = response.get_json()
    assert problem["type"].endswith("/malformed-json")
    assert words in problem["detail"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_body_that_is_not_declared_json_is_415(client, content_type):
    response = client.post(f"{API}/verify", data='{"code": "FT1-N-AAAAAAB", "moves": "S"}',
                           content_type=content_type)
    assert response.status_code == 415
    assert response.mimetype == "application/problem+json"
    assert "application/json" in response.get_json()["detail"]


def test_json_with_a_charset_or_a_json_suffix_is_accepted(client):
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        response = client.post(f"{API}/verify", data='{"code": "FT1-N-AAAAAAB", "moves": "S"}',
                               content_type=content_type)
        assert response.status_code == 200


def test_a_body_over_the_limit_is_413(make_app):
    client = make_app(MAX_CONTENT_LENGTH=1000).test_client()
    response = client.post(f"{API}/verify", json={"code": CODE, "moves": "S " * 600})
    assert response.status_code == 413
    assert response.get_json()["title"] == "Request Entity Too Large"
    assert client.post(f"{API}/verify", json={"code": CODE, "moves": "S " * 100}).status_code == 200


def test_get_is_not_allowed(client):
    response = client.get(f"{API}/verify")
    assert response.status_code == 405
    assert response.headers["Allow"].replace(" ", "").split(",").count("POST") == 1


@pytest.mark.parametrize("depth", [40, 990, 100_000])
def test_deeply_nested_json_is_refused_not_a_crash(client, depth):
    for data in ('{"code": "FT1-N-AAAAAAB", "moves": [' + '{"a":' * depth + "1" + "}" * depth + "]}",
                 '{"code": "FT1-N-AAAAAAB", "moves": [' + "[" * depth + "]" * depth + "]}"):
        response = client.post(f"{API}/verify", data=data, content_type="application/json")
        assert response.status_code == 422
        assert response.get_json()["errors"] == [{"field": "body", "message": "JSON nested more than 32 levels deep"}]


def test_nesting_within_the_limit_reaches_the_verifier(client):
    item = {"from": "T7", "to": "F"}
    for _ in range(28):
        item = {"x": item}
    verdict = verify(client, {"code": CODE, "moves": [item]}).get_json()
    assert verdict["error"]["kind"] == "syntax" and verdict["error"]["index"] == 0
