"""Re-evaluation does only what can change (issue 46, item 4): a record is judged against the
records stored before it, so a new record changes no other record's judgement and asks for
no re-evaluation of its deal; a solver line or a hint re-judges only the findings of the
lines the service knows, and the full judgement (the operator's command) then finds nothing
more. Every test runs on SQLite and, with ``TEST_DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from api.fairplay import judging as fairplay
from api.platform.models import Solvability
from tests.api.test_api_evidence import API, CODES, ON, flags, honest_game, solver_line, submit, token_of


def test_known_lines_find_what_the_full_judgement_finds(make_empty_app):
    app = make_empty_app(**ON)
    client = app.test_client()
    code = CODES[0]
    first = submit(client, token_of(client, "first"), code, honest_game(code))
    submit(client, token_of(client, "second"), code, honest_game(code, 90))
    copy = submit(client, token_of(client, "copier"), code, honest_game(code))
    line = solver_line(code)
    offline = submit(client, token_of(client, "offline"), code, line)
    assert flags(copy) == ["copy"] and copy["copy_of"] == first["id"] and offline["ranked"] is True
    with app.extensions["api.platform.db"].sessions() as session:
        assert fairplay.reevaluate_deal(session, code) == []  # the new records changed no judgement
        assert fairplay.reevaluate_deal(session, code, copies=False) == []  # nothing known of the deal yet
        now = datetime.now(UTC)
        session.add(Solvability(code=code, variant="yukon-classic", budget="test", budget_seconds=1.0,
                                engine_version="1.0.0", rules_version=1, status="winnable", reason="found",
                                solution=" ".join(line), solution_actions=len(line), verified=True, attempts=1,
                                requested_at=now, solved_at=now))
        session.commit()
        assert fairplay.reevaluate_deal(session, code, copies=False) == [offline["id"]]
        assert fairplay.reevaluate_deal(session, code) == []  # the full judgement finds nothing more
    stored = client.get(f"{API}/records/{offline['id']}").get_json()
    assert flags(stored) == ["solver-like"] and stored["history"][-1]["actor"] == "fair-play"
    assert client.get(f"{API}/records/{first['id']}").get_json()["ranked"] is True


def test_a_new_record_asks_for_no_judgement_of_its_deals_records(make_empty_app, monkeypatch):
    """Embedded, the ask runs here: a high record on an unsearched deal has it searched, and the
    line found re-judges the known-line findings only."""
    calls = []
    original = fairplay.reevaluate_deal

    def spy(session, code, copies=True):
        calls.append(copies)
        return original(session, code, copies)

    monkeypatch.setattr(fairplay, "reevaluate_deal", spy)
    app = make_empty_app(**ON, FAIRPLAY_SOLVE_TOP=1)  # (its boards hold only the record: place 1 of 1)
    client = app.test_client()
    code = CODES[0]
    record = submit(client, token_of(client, "offline"), code, solver_line(code))
    assert calls == [False]  # the search's line, not the record, asked
    assert flags(client.get(f"{API}/records/{record['id']}").get_json()) == ["solver-like"]
