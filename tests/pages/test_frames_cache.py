"""A record's frames (``GET /records/{id}/frames.json``): computed once per record and
engine version, then served from memory with a strong ETag (304 on ``If-None-Match``),
caching headers and gzip; the cache holds at most ``FRAMES_CACHE_BYTES``. A posted log's
frames (``POST /frames.json``) keep a tight action limit."""

from __future__ import annotations

import gzip
import json
from unittest import mock

import pytest

from api.pages import board
from api.pages import views as pages
from tests.play import play_greedy

CODE = "FT1-N-AAAAAAB"


@pytest.fixture
def record_id(submit):
    return submit("ann", CODE, " ".join(play_greedy(CODE, 40)))["id"]


def test_a_records_frames_are_computed_once_then_served_from_the_cache(client, record_id):
    with mock.patch.object(pages, "frames", wraps=board.frames) as computed:
        first = client.get(f"/records/{record_id}/frames.json")
        again = client.get(f"/records/{record_id}/frames.json")
    assert computed.call_count == 1
    assert first.status_code == again.status_code == 200
    assert first.get_data() == again.get_data() and first.mimetype == "application/json"
    assert len(first.get_json()["frames"]) == 41 and first.get_json()["error"] is None
    assert first.headers["ETag"] == again.headers["ETag"]
    assert first.headers["ETag"].startswith('"') and not first.headers["ETag"].startswith('W/')  # strong
    assert first.headers["Cache-Control"] == "public, max-age=86400"
    assert "Accept-Encoding" in first.vary  # (and Accept-Language, as every page)
    assert "Content-Encoding" not in first.headers  # the client did not ask for gzip


def test_the_frames_are_gzipped_for_a_client_that_accepts_gzip(client, record_id):
    plain = client.get(f"/records/{record_id}/frames.json")
    zipped = client.get(f"/records/{record_id}/frames.json", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert zipped.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in zipped.vary
    assert json.loads(gzip.decompress(zipped.get_data())) == plain.get_json()
    assert int(zipped.headers["Content-Length"]) == len(zipped.get_data()) < len(plain.get_data()) / 5
    assert zipped.headers["ETag"] != plain.headers["ETag"]  # another representation, another strong tag
    refused = client.get(f"/records/{record_id}/frames.json", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "Content-Encoding" not in refused.headers and refused.get_json() == plain.get_json()


def test_a_matching_if_none_match_is_answered_304_without_a_body(client, record_id):
    first = client.get(f"/records/{record_id}/frames.json")
    zipped = client.get(f"/records/{record_id}/frames.json", headers={"Accept-Encoding": "gzip"})
    for tag in (first.headers["ETag"], zipped.headers["ETag"], f'"nope", {first.headers["ETag"]}', "*"):
        response = client.get(f"/records/{record_id}/frames.json", headers={"If-None-Match": tag})
        assert response.status_code == 304, tag
        assert response.get_data() == b"" and response.headers["ETag"] == first.headers["ETag"]
        assert response.headers["Cache-Control"] == "public, max-age=86400"
    other = client.get(f"/records/{record_id}/frames.json", headers={"If-None-Match": '"something-else"'})
    assert other.status_code == 200 and other.get_json() == first.get_json()


def test_the_etag_is_the_same_on_another_process_and_after_a_restart(make_app, client, record_id):
    tag = client.get(f"/records/{record_id}/frames.json").headers["ETag"]
    other = make_app().test_client()  # a second app: its own cache, computed again
    assert other.get(f"/records/{record_id}/frames.json").headers["ETag"] == tag
    assert other.get(f"/records/{record_id}/frames.json", headers={"If-None-Match": tag}).status_code == 304


def test_the_cache_holds_at_most_its_bytes_dropping_the_least_recently_used(make_app, submit):
    ids = [submit(f"p{i}", CODE, " ".join(play_greedy(CODE, 20 + i)))["id"] for i in range(4)]
    probe = make_app().test_client()
    sizes = [len(probe.get(f"/records/{i}/frames.json", headers={"Accept-Encoding": "gzip"}).get_data())
             for i in ids]
    app = make_app(FRAMES_CACHE_BYTES=sizes[0] + sizes[1] + sizes[2] // 2)  # room for two of them
    client = app.test_client()
    cache = app.extensions["api.frames"]
    for record in ids[:3]:
        assert client.get(f"/records/{record}/frames.json").status_code == 200
    assert len(cache) == 2 and cache.size <= cache.max_bytes
    assert cache.get(("frames", ids[0], 1, "en")) is None and cache.get(("frames", ids[1], 1, "en")) is not None and cache.get(("frames", ids[2], 1, "en")) is not None
    client.get(f"/records/{ids[1]}/frames.json")  # used: now the most recent
    client.get(f"/records/{ids[3]}/frames.json")
    assert cache.get(("frames", ids[1], 1, "en")) is not None and cache.get(("frames", ids[2], 1, "en")) is None
    assert cache.size <= cache.max_bytes


def test_no_cache_still_answers_with_the_headers(make_app, record_id):
    app = make_app(FRAMES_CACHE_BYTES=0)
    assert "api.frames" not in app.extensions
    client = app.test_client()
    first = client.get(f"/records/{record_id}/frames.json")
    assert first.status_code == 200 and first.headers["ETag"]
    assert client.get(f"/records/{record_id}/frames.json",
                      headers={"If-None-Match": first.headers["ETag"]}).status_code == 304


def test_an_unknown_record_is_404_and_not_cached(client):
    response = client.get("/records/424242/frames.json")
    assert response.status_code == 404 and response.mimetype == "application/problem+json"
    assert "ETag" not in response.headers


def test_a_posted_logs_frames_keep_a_tight_limit_that_is_a_setting(make_app):
    client = make_app(FRAMES_MAX_ACTIONS=10).test_client()
    assert client.post("/frames.json", json={"code": CODE, "moves": "S " * 10}).status_code == 200
    refused = client.post("/frames.json", json={"code": CODE, "moves": "S " * 11})
    assert refused.status_code == 422
    assert refused.get_json()["detail"] == "moves: the log has 11 actions; the replay viewer shows at most 10"
    assert make_app().config["FRAMES_MAX_ACTIONS"] == 5000
