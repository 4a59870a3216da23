"""``flask --app api records reverify``: every stored record replayed with the
engine installed now; the ones whose result changed are reported and left
alone, the others are stamped with the current engine and rules version."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

import engine
from api import commands
from api.platform.models import Record
from verifier import replay

CODE = "FT1-N-AAAAAAB"
LOG = "T7:AS>F1 T10:6H>T9 T10:AC>F4 T10:AH>F2 S"  # score 30, moves 5
LONG_AGO = datetime(2024, 6, 1, tzinfo=UTC)


@pytest.fixture
def stored(records):
    """``stored(**fields)``: a record made from a real replay of ``canonical``, then ``fields`` as given."""

    def make(canonical: str = LOG, **fields):
        verdict = replay(CODE, canonical)
        values = {name: getattr(verdict, name) for name in ("won", "score", "moves", "actions", "undos", "takebacks",
                                                            "foundation_cards")}
        values.update(engine_version="0.9.0", rules_version=1, verified_at=LONG_AGO)
        values.update(fields)
        return records.create(game_code=CODE, canonical=canonical, **values)

    return make


def reverify(app, *args):
    return app.test_cli_runner().invoke(args=["records", "reverify", *args])


def reloaded(app, record_id) -> Record:
    with app.extensions["api.platform.db"].sessions() as session:
        return session.scalars(select(Record).where(Record.id == record_id)).one()


def test_unchanged_records_are_stamped_with_this_engine(app, stored):
    before = datetime.now(UTC)
    first, second = stored(), stored(player="bob", claimed_score=30, claimed_moves=5)
    result = reverify(app)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"re-verified 2 records with engine {engine.__version__} (rules {engine.RULES_VERSION}): 2 unchanged, 0 changed"]
    for record in (first, second):
        again = reloaded(app, record.id)
        assert (again.engine_version, again.rules_version) == (engine.__version__, engine.RULES_VERSION)
        assert again.verified_at >= before - timedelta(seconds=1)
        assert again.received_at == record.received_at  # nothing else moves


def test_records_whose_result_changed_are_reported_and_left_alone(app, stored):
    good = stored(player="good")
    inflated = stored(player="inflated", score=999, moves=4)
    illegal = stored(player="illegal", canonical="T7:AS>F1 T1:6D>T2")
    claims = stored(player="claims", claimed_score=25)
    rewritten = stored(player="rewritten", canonical="T7>F S")
    result = reverify(app)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:-1] == [
        f"record {inflated.id} (inflated, {CODE}): score 999 -> 30; moves 4 -> 5; earned 999 -> 30",
        f"record {illegal.id} (illegal, {CODE}): now illegal: action 1 'T1:6D>T2': "
        + replay(CODE, "T7:AS>F1 T1:6D>T2").error.rule + ": " + replay(CODE, "T7:AS>F1 T1:6D>T2").error.message,
        f"record {claims.id} (claims, {CODE}): claims no longer match: score claimed 25, replay gives 30",
        f"record {rewritten.id} (rewritten, {CODE}): the canonical log is written differently now",
    ]
    assert lines[-1].endswith(": 1 unchanged, 4 changed")
    for record in (inflated, illegal, claims, rewritten):
        again = reloaded(app, record.id)
        assert (again.engine_version, again.verified_at, again.score) == ("0.9.0", LONG_AGO, record.score)
    assert reloaded(app, good.id).engine_version == engine.__version__


def test_a_dry_run_stamps_nothing(app, stored):
    record = stored()
    result = reverify(app, "--dry-run")
    assert result.exit_code == 0 and "(dry run: nothing stamped)" in result.stdout
    assert reloaded(app, record.id).engine_version == "0.9.0"


def test_an_empty_database(app):
    result = reverify(app)
    assert result.exit_code == 0 and ": 0 unchanged, 0 changed" in result.stdout


def test_long_runs_show_a_progress_bar(app, stored, monkeypatch):
    for number in range(4):
        stored(player=f"p{number}")
    assert "re-verifying" not in reverify(app).stderr
    monkeypatch.setattr(commands, "PROGRESS_FROM", 3)
    result = reverify(app)
    assert result.exit_code == 0 and "re-verifying" in result.stderr
    assert "re-verifying" not in reverify(app, "--no-progress").stderr


def test_records_are_read_a_batch_at_a_time(app, stored, monkeypatch):
    from api.records import reverify as module

    monkeypatch.setattr(module, "BATCH", 2)
    made = [stored(player=f"p{number}") for number in range(4)]
    made.append(stored(player="p4", score=7))  # the last batch, alone: still checked
    result = reverify(app)
    assert result.exit_code == 1 and ": 4 unchanged, 1 changed" in result.stdout
    assert f"record {made[4].id} (p4, {CODE}): score 7 -> 30" in result.stdout
    assert [reloaded(app, r.id).engine_version for r in made] == [engine.__version__] * 4 + ["0.9.0"]


# -- with a broker: the workers must use the command's database ------------------------

def old_records(app, count: int) -> None:
    from api.records.store import new_record

    verdict = replay(CODE, LOG)
    with app.extensions["api.platform.db"].sessions() as session:
        for number in range(count):
            session.add(Record(**{**new_record(verdict, {"player": f"p{number}"}), "engine_version": "0.9.0"}))
        session.commit()


def test_workers_on_another_database_refuse_and_nothing_is_reported_done(tier, tmp_path):
    """After a restore into a new database, `records reverify` with the new DATABASE_URL and a
    broker whose workers still use the old database: each range is refused by the worker before
    it reads a record, the command says why, and neither database is stamped."""
    production = tier.app()
    restored = tier.app(DATABASE_URL=f"sqlite:///{tmp_path / 'restored.sqlite3'}")
    old_records(production, 3)
    old_records(restored, 3)
    tier.worker()
    result = restored.test_cli_runner().invoke(args=["records", "reverify", "--chunk", "2"])
    assert result.exit_code == 1, result.output
    assert "refused: the workers use another database than this command" in result.output
    assert "start workers on this database, or use --in-process; 0 of 2 ranges (0 records)" in result.output
    assert "re-verified 3 records" not in result.output  # no work it did not do is reported
    for app in (production, restored):
        with app.extensions["api.platform.db"].sessions() as session:
            assert set(session.scalars(select(Record.engine_version))) == {"0.9.0"}
    # the same command with the workers' database goes ahead
    result = production.test_cli_runner().invoke(args=["records", "reverify", "--chunk", "2"])
    assert result.exit_code == 0 and "re-verified 3 records" in result.stdout, result.output


def test_a_database_is_the_same_whatever_url_reaches_it(make_app, database_url, tmp_path, monkeypatch):
    from sqlalchemy import make_url

    from api.platform.db import Database

    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        monkeypatch.chdir(tmp_path)
        other = database_url.replace(str(tmp_path), ".") if str(tmp_path) in database_url else None
        other = other or f"sqlite:///{url.database}"
    else:
        other = url.set(host="localhost" if url.host != "localhost" else "127.0.0.1").render_as_string(False)
    first, second = Database(database_url), Database(other)
    try:
        assert first.identity() == second.identity()
    finally:
        first.dispose()
        second.dispose()
    assert Database(f"sqlite:///{tmp_path / 'a.sqlite3'}").identity() != Database(
        f"sqlite:///{tmp_path / 'b.sqlite3'}").identity()
