"""``POST /records``, ``GET /records/{id}``, ``GET /records``."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

import engine
from verifier import replay

API = "/api/v1"
CODE = "FT1-N-AAAAAAB"


def submit(http, **body):
    return http.post(f"{API}/records", json={"code": CODE, "player": "ann", "moves": "T7>F S", **body})


def test_a_legal_log_is_stored_with_the_replays_results(client):
    before = datetime.now(UTC)
    response = submit(client, claimed={"score": 10, "moves": 2}, elapsed_ms=93000, client="yukon-web/1.0")
    assert response.status_code == 201
    record = response.get_json()
    assert response.headers["Location"] == f"{API}/records/{record['id']}"
    verdict = replay(CODE, "T7>F S").to_json()
    for field in ("code", "variant", "won", "score", "moves", "actions", "undos", "takebacks", "foundation_cards",
                  "canonical", "engine_version", "rules_version"):
        assert record[field] == verdict[field], field
    assert record["player"] == "ann" and record["number"] == 1
    assert record["canonical"] == "T7:AS>F1 S" and record["score"] == 10 and record["moves"] == 2
    assert record["claimed"] == {"score": 10, "moves": 2}
    assert record["elapsed_ms"] == 93000 and record["client"] == "yukon-web/1.0"
    assert record["engine_version"] == engine.__version__ and record["rules_version"] == engine.RULES_VERSION
    received = datetime.fromisoformat(record["received_at"])
    assert received.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= received <= datetime.now(UTC) + timedelta(seconds=1)
    assert client.get(response.headers["Location"]).get_json() == record


def test_optional_fields_may_be_absent_or_null(client):
    record = submit(client, claimed=None, elapsed_ms=None, client=None).get_json()
    assert (record["claimed"], record["elapsed_ms"], record["client"]) == (None, None, None)


def test_the_same_game_again_is_200_with_the_first_record(client, count_records):
    first = submit(client, elapsed_ms=1000)
    assert first.status_code == 201
    # the same canonical log, written differently: still the same record
    again = submit(client, moves=[{"from": "t7", "to": "f1"}, "s>w"], elapsed_ms=2000, code=CODE.lower())
    assert again.status_code == 200
    assert again.get_json() == first.get_json()  # as first stored, elapsed_ms included
    assert again.headers["Location"] == first.headers["Location"]
    assert count_records() == 1
    # another player, or another log, is another record
    assert submit(client, player="bob").status_code == 201
    assert submit(client, moves="T7>F S S").status_code == 201
    assert count_records() == 3


def test_concurrent_submissions_of_one_game_store_one_record(app, count_records, legal_log):
    body = {"code": CODE, "player": "racer", "moves": legal_log(CODE, 12)}
    threads = 8
    barrier = threading.Barrier(threads)

    def post() -> tuple[int, int]:
        client = app.test_client()
        barrier.wait()
        response = client.post(f"{API}/records", json=body)
        return response.status_code, response.get_json()["id"]

    with ThreadPoolExecutor(threads) as pool:
        results = [future.result(timeout=60) for future in [pool.submit(post) for _ in range(threads)]]
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * (threads - 1) + [201]
    assert len({record_id for _, record_id in results}) == 1
    assert count_records() == 1


def test_an_illegal_log_is_422_with_the_verdict_and_not_stored(client, count_records):
    response = submit(client, moves="T7>F S T1>T2")
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["type"].endswith("/illegal-log") and problem["title"] == "Illegal move log"
    assert problem["verdict"] == replay(CODE, "T7>F S T1>T2").to_json()
    error = problem["verdict"]["error"]
    assert error["index"] == 2 and error["action"] == "T1>T2"
    assert "action 2 'T1>T2'" in problem["detail"] and error["rule"] in problem["detail"]
    assert count_records() == 0


def test_a_notation_error_is_an_illegal_log_too(client, count_records):
    response = submit(client, moves=["S", "T7->F"])
    assert response.status_code == 422
    assert response.get_json()["verdict"]["error"]["kind"] == "syntax"
    assert count_records() == 0


def test_claims_that_do_not_match_are_422_and_not_stored(client, count_records):
    response = submit(client, claimed={"score": 10, "moves": 99, "won": True})
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["type"].endswith("/claims-mismatch")
    assert problem["verdict"]["legal"] is True and problem["verdict"]["claims_match"] is False
    assert "moves claimed 99, replay gives 2" in problem["detail"]
    assert "won claimed True, replay gives False" in problem["detail"]
    assert "score" not in problem["detail"]
    assert count_records() == 0


@pytest.mark.parametrize("body, field", [
    ({"player": ""}, "player"),
    ({"player": "   "}, "player"),
    ({"player": "ann\n"}, "player"),
    ({"player": "\tann"}, "player"),
    ({"player": "a\x07b"}, "player"),
    ({"player": "a\x85b"}, "player"),
    ({"player": "x" * 33}, "player"),
    ({"player": " " + "x" * 33 + " "}, "player"),
    ({"player": "zero\u200bwidth"}, "player"),
    ({"player": "right\u202eleft"}, "player"),
    ({"player": "line\u2028break"}, "player"),
    ({"player": "private\ue000use"}, "player"),
    ({"player": "no\u00a0break"}, "player"),
    ({"player": 7}, "player"),
    ({"player": None}, "player"),
    ({"elapsed_ms": -1}, "elapsed_ms"),
    ({"elapsed_ms": 1.5}, "elapsed_ms"),
    ({"elapsed_ms": "100"}, "elapsed_ms"),
    ({"elapsed_ms": True}, "elapsed_ms"),
    ({"elapsed_ms": 2 ** 53}, "elapsed_ms"),
    ({"client": "c" * 101}, "client"),
    ({"client": 3}, "client"),
    ({"client": ""}, "client"),
    ({"client": "\ud800"}, "client"),
    ({"player": "\udfff"}, "player"),
    ({"score": 10}, "score"),
])
def test_wrong_fields_are_422_naming_the_field(client, count_records, body, field):
    response = submit(client, **body)
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]
    assert count_records() == 0


def test_player_is_required(client):
    response = client.post(f"{API}/records", json={"code": CODE, "moves": "S"})
    assert response.status_code == 422
    assert response.get_json()["errors"] == [{"field": "player", "message": "Missing data for required field."}]


def test_a_bad_code_is_422_naming_the_part(client):
    response = submit(client, code="FT1-N-AAAAAA")
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["part"] == "deal"


def test_an_unknown_record_is_404(client):
    assert client.get(f"{API}/records/1").status_code == 404
    assert client.get(f"{API}/records/{2 ** 63}").status_code == 404  # past any id, never a database error
    assert client.get(f"{API}/records/abc").status_code == 404
    assert client.get(f"{API}/records/-1").status_code == 404


# -- the list ------------------------------------------------------------

def test_the_list_is_newest_first_a_page_at_a_time(client, records):
    made = records.create_batch(5)
    page = client.get(f"{API}/records?page_size=2").get_json()
    assert (page["page_size"], page["has_more"]) == (2, True)
    assert [r["id"] for r in page["items"]] == [made[4].id, made[3].id]
    page2 = client.get(f"{API}/records?page_size=2&cursor={page['next_cursor']}").get_json()
    assert [r["id"] for r in page2["items"]] == [made[2].id, made[1].id] and page2["has_more"]
    page3 = client.get(f"{API}/records?page_size=2&cursor={page2['next_cursor']}").get_json()
    assert [r["id"] for r in page3["items"]] == [made[0].id]
    assert (page3["has_more"], page3["next_cursor"]) == (False, None)
    default = client.get(f"{API}/records?page=1").get_json()
    assert (default["page_size"], len(default["items"]), default["has_more"]) == (20, 5, False)


def test_the_cursor_neither_skips_nor_repeats_records_received_at_the_same_moment(client, records):
    from datetime import datetime

    moment = datetime(2025, 6, 1, tzinfo=UTC)
    made = [records.create(received_at=moment) for _ in range(5)]
    seen, cursor = [], None
    while True:
        body = client.get(f"{API}/records", query_string={"page_size": 2, **({"cursor": cursor} if cursor else {})})
        body = body.get_json()
        seen += [r["id"] for r in body["items"]]
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert seen == [r.id for r in reversed(made)]


@pytest.mark.parametrize("cursor", ["x", "W10", "WyJub3QgYSB0aW1lIiwgMV0", "WzEsMiwzXQ"])
def test_a_cursor_not_handed_out_is_422(client, cursor):
    response = client.get(f"{API}/records?cursor={cursor}")
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == ["cursor"]


def test_the_list_filters_by_code_player_and_won(client, records):
    records.create(player="ann", game_code="FT1-N-AAAAAAB", won=True, score=1040)
    records.create(player="ann", game_code="YU1-C-AAAAAAB")
    records.create(player="bob", game_code="FT1-N-AAAAAAB")

    def ids(query):
        return sorted(r["player"] + ":" + r["code"] for r in client.get(f"{API}/records?{query}").get_json()["items"])

    assert ids("player=ann") == ["ann:FT1-N-AAAAAAB", "ann:YU1-C-AAAAAAB"]
    assert ids("code=ft1-n-aaaaaab") == ["ann:FT1-N-AAAAAAB", "bob:FT1-N-AAAAAAB"]
    assert ids("won=true") == ["ann:FT1-N-AAAAAAB"]
    assert ids("won=0&code=FT1-N-AAAAAAB") == ["bob:FT1-N-AAAAAAB"]
    assert ids("player=carol") == []
    assert len(client.get(f"{API}/records?player=ann&won=false").get_json()["items"]) == 1


@pytest.mark.parametrize("query, field", [
    ("page=0", "page"), ("page=x", "page"), ("page=1.5", "page"), ("page=2", "page"),
    ("page_size=0", "page_size"), ("page_size=101", "page_size"),
    ("won=yes", "won"), ("player=", "player"), ("sort=score", "sort"),
])
def test_bad_list_queries_are_422(client, query, field):
    response = client.get(f"{API}/records?{query}")
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]


def test_a_bad_code_filter_is_422(client):
    response = client.get(f"{API}/records?code=YU1-Q-AAAAAAB")
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["part"] == "rules"


def test_names_may_hold_any_printable_text(client):
    for player in ("Zoë Ångström", "李雷", "a b", "x" * 32):
        response = submit(client, player=player, client="yukon/1.0 (Android 14)")
        assert response.status_code == 201, player
        assert response.get_json()["player"] == player
    assert len(client.get(f"{API}/records", query_string={"player": "Zoë Ångström"}).get_json()["items"]) == 1


def test_a_record_judged_at_an_old_version_of_its_deal_is_not_stored(app, count_records):
    """The write stores a record only while its deal's version is the one its evidence was read
    at (``seen``), bumping it; a stale one raises :class:`api.records.store.Stale` and stores nothing
    (no record, no new player): the submission is then judged again."""
    from sqlalchemy import func, select

    from api.platform.models import DealVersion, Player
    from api.records.store import Stale, insert_record, new_record

    def values(player):
        verdict = replay(CODE, "T7>F S")
        return {**new_record(verdict, {"player": player}), "line": None}

    with app.extensions["api.platform.db"].sessions() as session:
        def version():
            return session.scalar(select(DealVersion.version).where(DealVersion.code == CODE))

        connection = session.connection()
        assert version() is None  # a deal never stored to reads as version 0
        first = insert_record(connection, values("ann"), seen=0)
        assert first is not None and version() == 1
        with pytest.raises(Stale):
            insert_record(connection, values("bob"), seen=0)
        assert version() == 1
        assert session.scalar(select(func.count()).select_from(Player).where(Player.name == "bob")) == 0
        stored = values("bob")
        assert insert_record(connection, stored, seen=1) is not None and version() == 2
        assert stored["player_id"] == session.scalar(select(Player.id).where(Player.name == "bob"))
        session.commit()
    assert count_records() == 2


def test_a_dollar_statement_binds_every_type_as_sqlalchemy_does(app):
    """``api.platform.db.DollarStatement`` (the record's store statement on PostgreSQL) applies each
    type's bind processing for the dialect: JSON, booleans, arrays, times, bytes and None
    come back as the same statement run by SQLAlchemy gives them, times read back in UTC,
    a literal keeps its value, and a missing parameter is an error, not a NULL; and
    ``api.platform.db.packed_values`` reads back the values ``api.fairplay.evidence.pack`` packed."""
    from sqlalchemy import JSON, BigInteger, Boolean, LargeBinary, bindparam, cast, literal, select
    from sqlalchemy.dialects import postgresql

    from api.fairplay.evidence import pack
    from api.platform.columns import UTCDateTime
    from api.platform.db import DollarStatement, packed_values

    with app.app_context():
        engine_ = app.extensions["api.platform.db"].engine
        if engine_.dialect.name != "postgresql":
            pytest.skip("a PostgreSQL statement")
        statement = select(
            cast(bindparam("flags", type_=JSON), postgresql.JSONB), bindparam("won", type_=Boolean),
            bindparam("bands", type_=postgresql.ARRAY(BigInteger)), bindparam("at", type_=UTCDateTime),
            bindparam("line", type_=LargeBinary), bindparam("none", type_=BigInteger), literal(7))
        values = {"flags": [{"flag": "copy", "evidence": {"of": 3}}], "won": True, "bands": [-(2 ** 63), 5],
                  "at": datetime(2026, 12, 1, 12, tzinfo=UTC), "line": b"\x00\xff", "none": None}
        with engine_.connect() as connection:
            connection.exec_driver_sql("SET TIME ZONE 'Asia/Kathmandu'")  # (answers in UTC all the same)
            expected = connection.execute(statement, values).one()
            [row] = DollarStatement(statement).execute(connection, values)
            with pytest.raises(KeyError, match="'line'"):
                DollarStatement(statement).execute(connection, {k: v for k, v in values.items() if k != "line"})
            unpacked = DollarStatement(select(packed_values("v"))).execute(connection, {"v": pack([5, -(2 ** 63), -1])})
            empty = DollarStatement(select(packed_values("v"))).execute(connection, {"v": pack([])})
    assert tuple(row) == tuple(expected)
    assert row[0] == values["flags"] and row[2] == values["bands"] and bytes(row[4]) == values["line"]
    assert row[3].tzinfo == UTC and row[5] is None and row[6] == 7
    assert sorted(value for (value,) in unpacked) == [-(2 ** 63), -1, 5] and empty == []


def test_a_records_answer_is_marshmallows_dump(app, client):
    """``api.schemas.record_json`` copies plain values itself: for stored records (with times,
    claims, a history, flags) and for the dicts a new record is answered with, missing keys and
    values of another type included, it gives what ``RecordSchema().dump`` gives."""
    from sqlalchemy import select

    from api.platform.models import Record
    from api.schemas import RecordSchema, record_json

    submit(client, claimed={"score": 10, "moves": 2}, elapsed_ms=93000, client="web/1", times=[400, 900])
    submit(client, player="bob")
    schema = RecordSchema()
    with app.app_context(), app.extensions["api.platform.db"].sessions() as session:
        stored = session.scalars(select(Record)).all()
        assert len(stored) == 2
        for record in stored:
            assert record_json(record) == schema.dump(record)
            values = {column.key: getattr(record, column.key) for column in Record.__table__.columns}
            for odd in ({}, {"won": 1, "score": 7.0, "player": None, "number": True}, {"history": []}):
                as_dict = {**values, "history": [], "claimed": None, **odd}
                assert record_json(as_dict) == schema.dump(as_dict), odd
            partial = {key: value for key, value in values.items() if key not in ("client", "moves", "won")}
            assert record_json(partial) == schema.dump(partial)
