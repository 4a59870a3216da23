"""The framework's floor under ``POST /verify`` and ``POST /records``: the service's own app
(``api.create_app``, every hook, metric and log line included) with two more routes whose
views do only what no implementation of the endpoint can skip on this stack:

- ``POST /api/v1/bench/verify-floor`` reads the JSON body and answers with a real ``/verify``
  answer of the bench's game, made once: no replay, no schema;
- ``POST /api/v1/bench/record-floor`` reads the JSON body and stores a record as the real view
  does when it is judged later (``FAIRPLAY_JUDGE=worker``): an autocommit session, the one store
  statement through SQLAlchemy (the player settled by name in it), the session's commit and the
  ask for its judgement; it answers with a real record's answer. Its values are those of a real
  submission of the body's deal, made once, with the body's player name: no replay, no name
  checks, no evidence, no schema.

``python -m bench.http_bench --floor`` serves this app and measures both routes beside the real
ones, so that the share of healthz that no code in the views could pass is a same-run figure.
Not part of the service: only gunicorn imports it, for the bench.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

from flask import Flask, current_app, request

from api.routes import PREFIX

VERIFY_FLOOR, RECORD_FLOOR = "/bench/verify-floor", "/bench/record-floor"
#: the file of the templates' bodies (:func:`write_templates`), for :func:`app`
ENV = "BENCH_FLOOR_TEMPLATES"


def app() -> Flask:
    """The service's app with the two floor routes (gunicorn: ``bench.record_floor:app()``). Each
    process first sends the templates through the real routes (their records are stored under
    the players ``bench-template-PID-N``)."""
    from api import create_app, db, records
    from api.tasks import evidence_learned

    service = create_app()
    made: dict[str, Any] = {}

    def verify_floor() -> tuple[dict[str, Any], int]:
        request.get_json()
        return made["verify"], 200

    def record_floor() -> tuple[dict[str, Any], int]:
        body = request.get_json()
        name, (values, bands, claim, answer) = body["player"], made[body["code"]]
        session = db.session()
        records.begin(session)
        values = dict(values, player=name, player_id=None, vouched_by=None)
        new_id = records.insert_record(session.connection(), values, bands, None, False, replace(claim, name=name))
        session.commit()
        evidence_learned(current_app, values["code"], solve=bool(current_app.config["FAIRPLAY_SOLVE_TOP"]),
                         pending_only=True)
        return dict(answer, id=new_id, player=name), 201

    service.add_url_rule(PREFIX + VERIFY_FLOOR, "bench_verify_floor", verify_floor, methods=["POST"])
    service.add_url_rule(PREFIX + RECORD_FLOOR, "bench_record_floor", record_floor, methods=["POST"])
    with open(os.environ[ENV]) as file:
        templates = json.load(file)
    client = service.test_client()
    made["verify"] = client.post(PREFIX + "/verify", data=templates["verify"],
                                 content_type="application/json").get_json()
    real, caught = records.insert_record, []

    def catching(connection: Any, values: dict[str, Any], bands: Any = None, seen: Any = None,
                 upkeep: bool = True, claim: Any = None) -> int | None:
        caught.append((dict(values), bands, claim))
        return real(connection, values, bands, seen, upkeep, claim)

    records.insert_record = catching
    try:
        for index, body in enumerate(templates["records"]):
            response = client.post(PREFIX + "/records", content_type="application/json",
                                   data=body.replace("{{N}}", f"template-{os.getpid()}-{index}"))
            values, bands, claim = caught.pop()
            if response.status_code != 201 or claim is None:
                raise SystemExit(f"a template record was not stored judged later: {response.get_data()[:300]!r}")
            made[values["code"]] = (values, bands, claim, response.get_json())
    finally:
        records.insert_record = real
    return service


def write_templates(path: str, verify: str, records: list[str]) -> dict[str, str]:
    """Write the templates' bodies (``/verify``'s, and ``records``, each of another deal) to
    ``path``; the environment that gives them to :func:`app`."""
    with open(path, "w") as file:
        json.dump({"verify": verify, "records": records}, file)
    return {ENV: path}


def floor_bodies(records: list[str]) -> str:
    """The record floor's bodies: ``records`` with player names of their own, one a line."""
    return "\n".join(body.replace('"bench-', '"floor-') for body in records)
