"""Small hardening: chunked bodies past the size limit, ``nosniff``, the client's
request id, the name patterns of openapi.yaml against the server's own check, and
the contract's examples replayed."""

from __future__ import annotations

import http.client
import io
import itertools
import json
import re
import threading
import unicodedata
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError
from openapi_schema_validator import OAS31Validator

from api.schemas import Name
from tests.conftest import SPEC_PATH

API = "/api/v1"
SPEC = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
#: the characters a name must not hold (the report that found the gap named these)
REFUSED = ["\u202e", "\u200b", "\u200c", "\u200d", "\u00ad", "\ufeff", "\u2028"]


def schema_validator(name: str) -> OAS31Validator:
    return OAS31Validator({"$ref": f"#/components/schemas/{name}", "components": SPEC["components"]})


# -- chunked bodies -------------------------------------------------------------

def chunked_post(client: Any, body: bytes) -> Any:
    """``POST /verify`` with no ``Content-Length``, as a WSGI server hands a chunked body on
    (decoded, and the end of the stream marked with ``wsgi.input_terminated``)."""
    return client.post(f"{API}/verify", input_stream=io.BytesIO(body), environ_overrides={"wsgi.input_terminated": True},
                       headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})


def test_a_chunked_body_past_the_limit_is_413_not_cut_short(make_app):
    client = make_app(MAX_CONTENT_LENGTH=1000).test_client()
    small = json.dumps({"code": "FT1-N-AAAAAAB", "moves": "T7>F S"}).encode()
    assert chunked_post(client, small).get_json()["legal"] is True
    # its first 1000 bytes are a valid body: cut there, it would be answered 200
    response = chunked_post(client, small + b" " * 3000)
    assert response.status_code == 413
    assert response.get_json()["detail"] == "the request body is larger than 1000 bytes, the most this server accepts"
    assert chunked_post(client, small + b" " * (1000 - len(small))).status_code == 200  # exactly the limit


def test_a_chunked_body_past_the_limit_is_413_through_werkzeugs_server(make_app):
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, make_app(MAX_CONTENT_LENGTH=1000), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        def send(body: bytes) -> tuple[int, Any]:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            connection.request("POST", f"{API}/verify", body=(body[i:i + 300] for i in range(0, len(body), 300)),
                               headers={"Content-Type": "application/json"}, encode_chunked=True)
            response = connection.getresponse()
            answer = json.loads(response.read())
            connection.close()
            return response.status, answer

        small = json.dumps({"code": "FT1-N-AAAAAAB", "moves": "T7>F S"}).encode()
        assert send(small)[0] == 200
        status, answer = send(small + b" " * 3000)
        assert status == 413 and answer["status"] == 413
    finally:
        server.shutdown()
        server.server_close()


# -- headers ----------------------------------------------------------------------

def test_every_answer_says_nosniff(client):
    for response in (client.get(f"{API}/healthz"), client.get(f"{API}/records/999"),
                     client.post(f"{API}/verify", data="{", content_type="application/json"),
                     client.get(f"{API}/nowhere"), client.get("/records/1/frames.json")):
        assert response.headers["X-Content-Type-Options"] == "nosniff", response.request.path


def test_the_clients_request_id_is_kept_only_when_it_is_a_short_token(client):
    for good in ("a" * 64, "trace.01_A-b:c"):
        assert client.get(f"{API}/healthz", headers={"X-Request-ID": good}).headers["X-Request-ID"] == good
    for bad in ("a" * 65, "naïve", "a b", "a/b", "x\u202ey", "{\"json\": 1}"):
        given = client.get(f"{API}/healthz", headers={"X-Request-ID": bad}).headers["X-Request-ID"]
        assert given != bad and re.fullmatch(r"[0-9a-f]{32}", given)


# -- names: the contract's pattern and the server agree ---------------------------

def server_accepts(text: str) -> bool:
    try:
        Name(100).deserialize(text)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("char", REFUSED, ids=[f"U+{ord(c):04X}" for c in REFUSED])
def test_names_with_an_invisible_character_are_refused_by_the_server_and_the_contract(client, char):
    for name in ("Player", "Name", "Reason"):
        validator = schema_validator(name)
        assert not validator.is_valid(f"ann{char}bob"), name
        assert validator.is_valid("ann bob") and not validator.is_valid(""), name
    response = client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "player": f"ann{char}bob", "moves": "S"})
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == "player"
    assert f"U+{ord(char):04X}" in response.get_json()["detail"]
    assert client.get(f"{API}/records", query_string={"player": f"ann{char}b"}).status_code == 422


def test_the_name_pattern_refuses_exactly_what_the_server_refuses():
    """Every assigned character, inside a name, alone, and at either end (where white space
    is trimmed): the contract's pattern and the server's check give the same answer.
    (Unassigned characters are refused by the server; no pattern can list them.)"""
    pattern = re.compile(SPEC["components"]["schemas"]["Name"]["pattern"])
    differ = []
    # (the two private-use planes, 131,068 characters of one kind, sampled: their ends and every 257th)
    private = set(range(0xF0000, 0x110000)) - {0xF0000, 0xFFFFD, 0x100000, 0x10FFFD} - set(range(0xF0000, 0x110000, 257))
    for point in range(0x110000):
        if point in private:
            continue
        char = chr(point)
        if unicodedata.category(char) == "Cn":
            continue
        texts = (f"a{char}b", char, f"{char}a", f"a{char}") if not char.isprintable() or char.isspace() \
            else (f"a{char}b", char)
        differ += [(f"U+{point:04X}", text) for text in texts
                   if bool(pattern.search(text)) != server_accepts(text)]
    assert not differ, differ[:20]
    assert not pattern.search("ann\n") and not server_accepts("ann\n")


# -- the contract's examples ------------------------------------------------------

def request_examples() -> list[tuple[str, str, str, Any]]:
    """``(method, path, name, body)`` of every request body example in openapi.yaml."""
    found = []
    for path, item in SPEC["paths"].items():
        for method, operation in item.items():
            if method == "parameters":  # the path's own parameters, not an operation
                continue
            media = (operation.get("requestBody") or {}).get("content", {}).get("application/json", {})
            if "example" in media:
                found.append((method.upper(), path, "example", media["example"]))
            for name, example in (media.get("examples") or {}).items():
                found.append((method.upper(), path, name, example["value"]))
    return found


def test_the_contract_has_request_examples():
    assert {(m, p) for m, p, _, _ in request_examples()} >= {
        ("POST", "/verify"), ("POST", "/records"), ("POST", "/hint"), ("POST", "/records/{record_id}/status")}


@pytest.mark.parametrize(("method", "path", "name", "body"), request_examples(),
                         ids=[f"{m} {p} {n}" for m, p, n, _ in request_examples()])
def test_every_request_example_of_the_contract_is_answered_as_a_success(client, make_key, auth, method, path,
                                                                        name, body):
    headers = auth(make_key("examples", admin=True))
    if "{record_id}" in path:  # a record to change
        stored = client.post(f"{API}/records", json={"code": "FT1-N-AAAAAAB", "player": "ann", "moves": "S"},
                             headers=headers)
        path = path.replace("{record_id}", str(stored.get_json()["id"]))
    if path == "/webhooks":  # (no DNS here: the example's host is not resolved)
        client.application.config["WEBHOOK_ALLOW_PRIVATE"] = True
    if path == "/hint":  # hints are for players (docs/fair-play.md)
        token = client.post(f"{API}/players", json={"name": "example-player"}).get_json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
    response = client.open(f"{API}{path}", method=method, json=body, headers=headers)
    assert response.status_code in (200, 201, 202), response.get_data(as_text=True)
    answer = response.get_json()
    if path in ("/verify", "/records"):
        assert path == "/records" or answer["verified"] is True
        assert answer["code"] == str(answer["code"]).upper() and answer["moves"] >= 1
    if path == "/hint":
        assert "error" not in answer or answer["error"] is None


def test_schema_examples_fit_their_schemas_and_make_legal_games(client):
    for name, schema in SPEC["components"]["schemas"].items():
        for example in schema.get("examples", []):
            assert schema_validator(name).is_valid(example), (name, example)
    codes = SPEC["components"]["schemas"]["CodeInput"]["examples"] + SPEC["components"]["schemas"]["Code"]["examples"]
    logs = SPEC["components"]["schemas"]["MoveLog"]["examples"]
    for code, log in itertools.product(codes, logs):  # any request a client builds from them
        verdict = client.post(f"{API}/verify", json={"code": code, "moves": log}).get_json()
        assert verdict["legal"] is True, (code, log, verdict["error"])


@given(st.lists(st.tuples(st.sampled_from(["X-A", "X-Long-Name", "Content-Type", "Content-Length", "Accept"]),
                          st.integers(0, 40)), max_size=12),
       st.integers(1, 8), st.integers(10, 40))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_header_limits_count_and_measure_fields_as_werkzeug_lists_them(app, fields, most, largest):
    """``api.platform.limits``' one pass over the environ refuses exactly what werkzeug's header list
    (names ``Title-Cased``, Content-Type and Content-Length only when set) would."""
    from werkzeug.datastructures import EnvironHeaders

    from api.platform.limits import _check_request_head
    from api.platform.problems import Problem

    headers = [(name, "v" * size) for name, size in fields]
    with app.test_request_context(headers=headers):
        from flask import request

        listed = list(EnvironHeaders(request.environ))
        too_big = [f"{name}: is {len(name) + 2 + len(value)} bytes" for name, value in listed
                   if len(name) + 2 + len(value) > largest]
        expected = ("fields" if len(listed) > most else too_big[0] if too_big else None)
        before = {name: app.config[name] for name in ("MAX_REQUEST_HEADERS", "MAX_HEADER_BYTES")}
        app.config.update(MAX_REQUEST_HEADERS=most, MAX_HEADER_BYTES=largest)
        try:
            _check_request_head()
            refused = None
        except Problem as problem:
            refused = problem.detail
        finally:
            app.config.update(before)
    if expected is None:
        assert refused is None
    elif expected == "fields":
        assert refused is not None and f"has {len(listed)} header fields" in refused
    else:
        name, size = expected.split(": is ")
        assert refused is not None and f"the header field {name} is {size}" in refused
