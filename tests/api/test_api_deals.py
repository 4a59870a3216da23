"""``GET /deals/{code}``."""

from __future__ import annotations

import pytest

from verifier import deal_json

API = "/api/v1"


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-R-AAAAAB7", "FT1-N-AAAAAAB"])
def test_the_deal_is_the_verifiers_object(client, code):
    response = client.get(f"{API}/deals/{code}")
    assert response.status_code == 200
    assert response.get_json() == deal_json(code, reveal=False)


def test_reveal_shows_face_down_cards_and_the_stock(client):
    hidden = client.get(f"{API}/deals/FT1-N-AAAAAAB").get_json()
    assert hidden["revealed"] is False and hidden["stock"] is None and hidden["stock_size"] == 64
    shown = client.get(f"{API}/deals/FT1-N-AAAAAAB?reveal=true").get_json()
    assert shown == deal_json("FT1-N-AAAAAAB", reveal=True)
    assert shown["stock"][:3] == ["6D", "KD", "3D"]  # first drawn first (docs/game-codes.md)
    yukon = client.get(f"{API}/deals/YU1-C-AAAAAAB?reveal=1").get_json()
    assert [cell["card"] for cell in yukon["tableau"][1]] == ["9S", "4H", "8D", "8H", "5C", "JH"]
    assert client.get(f"{API}/deals/YU1-C-AAAAAAB?reveal=false").get_json()["tableau"][1][0] == {
        "card": None, "face_up": False}


def test_codes_are_read_in_any_case_and_answered_canonical(client):
    response = client.get(f"{API}/deals/yu1-r-aaaaab7")
    assert response.status_code == 200
    assert response.get_json()["code"] == "YU1-R-AAAAAB7"
    assert response.get_json()["number"] == 63


@pytest.mark.parametrize("code, part, position", [
    ("YU1-C-AAAAAA8", "deal", 13),
    ("YU1-N-AAAAAAB", "rules", 5),
    ("XX1-C-AAAAAAB", "game", 1),
    ("YU2-C-AAAAAAB", "version", 3),
    ("YU1-C-AAAAAA", "deal", 7),
    ("YU1C", "format", None),
])
def test_a_bad_code_names_the_part_and_position(client, code, part, position):
    response = client.get(f"{API}/deals/{code}")
    assert response.status_code == 422
    body = response.get_json()
    assert body["type"].endswith("/invalid-code")
    [error] = body["errors"]
    assert error["field"] == "code" and error["part"] == part
    assert error.get("position") == position
    assert error["message"] in body["detail"]


@pytest.mark.parametrize("query, field", [("reveal=maybe", "reveal"), ("reveal=", "reveal"), ("colour=red", "colour")])
def test_bad_query_parameters_are_422(client, query, field):
    response = client.get(f"{API}/deals/YU1-C-AAAAAAB?{query}")
    assert response.status_code == 422
    body = response.get_json()
    assert body["type"].endswith("/validation-error")
    assert [e["field"] for e in body["errors"]] == [field]
