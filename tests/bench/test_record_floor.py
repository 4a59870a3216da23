"""``bench.record_floor``: the floor routes do what the real ones do, less the views' own work,
so that ``http_bench --floor`` bounds the real routes from below."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from bench import record_floor
from bench.http_bench import record_bodies, typical_log

API = "/api/v1"
#: what differs between two records of one game by two new players
PLAYERS = {"id", "player", "player_id"}


@pytest.mark.parametrize("empty_database_url", ["postgresql"], indirect=True)
def test_the_floor_stores_the_real_routes_record_for_another_player(empty_database_url, monkeypatch, tmp_path):
    from api import db, tasks
    from api.models import Record

    asked: list[tuple[str, bool, bool]] = []
    monkeypatch.setattr(tasks.Asks, "add", lambda self, code, solve, pending_only=False:
                        asked.append((code, solve, pending_only)))
    code, log = typical_log(40)
    bodies = record_bodies(length=40, games=2).split("\n")
    for name, value in {"DATABASE_URL": empty_database_url, "FAIRPLAY_JUDGE": "worker", "API_KEYS_REQUIRED": "0",
                        "RATELIMIT_ENABLED": "0", "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
                        **record_floor.write_templates(str(tmp_path / "floor.json"),
                                                       json.dumps({"code": code, "moves": log}), bodies)}.items():
        monkeypatch.setenv(name, value)
    app = record_floor.app()
    client = app.test_client()

    verify = client.post(API + "/verify", json={"code": code, "moves": log})
    floor = client.post(API + record_floor.VERIFY_FLOOR, json={"code": code, "moves": log})
    assert floor.status_code == verify.status_code == 200 and floor.get_json() == verify.get_json()

    [body] = record_floor.floor_bodies(bodies[1:]).replace("{{N}}", "one").split("\n")
    answer = client.post(API + record_floor.RECORD_FLOOR, data=body, content_type="application/json")
    assert answer.status_code == 201 and answer.get_json()["player"] == "floor-one"
    with app.app_context():
        same_deal = select(Record).where(Record.code == json.loads(body)["code"])
        rows = {row.player: row for row in db.session().scalars(same_deal)}
        template, copy = rows.pop(next(name for name in rows if name.startswith("bench-template-"))), rows["floor-one"]
        assert copy.id == answer.get_json()["id"] and copy.player_id != template.player_id
        columns = [column.key for column in Record.__table__.columns if column.key not in PLAYERS]
        assert {key: getattr(copy, key) for key in columns} == {key: getattr(template, key) for key in columns}
        assert [found["flag"] for found in copy.flags] == ["pending"]  # unjudged, as the real route stores it
    # the floor asked for its deal's judgement as the real route did
    real, floor_ask = [ask for ask in asked if ask[0] == template.code]
    assert floor_ask == real and real[2] is True
