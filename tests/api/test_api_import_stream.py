"""``flask --app api records import`` streams its file: the lines are read as the
import goes, a batch at a time, never the whole file at once; a bad line far into a
long file is still named by its exact number, and nothing is imported. Export streams
as it did (rows fetched a batch at a time)."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from collections.abc import Iterator
from unittest import mock

import pytest

from api.records import backup
from api.records.backup import BATCH, BackupError, import_records

FT = "FT1-N-AAAAAAB"


def record_line(number: int) -> str:
    canonical = "S " * (number % 7) + "S"
    return json.dumps({
        "id": number, "player": f"player{number}", "code": FT, "variant": "forty-thieves", "number": 1,
        "canonical": canonical, "log_hash": hashlib.sha256(canonical.encode()).hexdigest(), "won": False,
        "score": 0, "moves": 1, "actions": 1, "undos": 0, "takebacks": 0, "foundation_cards": 0, "claimed": None,
        "elapsed_ms": None, "client": None, "engine_version": "1.0.0", "rules_version": 1,
        "received_at": "2025-01-01T00:00:00+00:00", "verified_at": "2025-01-01T00:00:00+00:00",
        "submitted_by": None, "status": "visible", "history": []})


class CountingLines:
    """An iterable of lines that counts how many were taken, and refuses to be read whole."""

    def __init__(self, count: int, bad_at: int | None = None) -> None:
        self.count, self.bad_at, self.taken = count, bad_at, 0

    def __iter__(self) -> Iterator[str]:
        for number in range(1, self.count + 1):
            self.taken += 1
            yield "{not json\n" if number == self.bad_at else record_line(number) + "\n"

    def read(self, *_args):  # pragma: no cover - would mean the import read the file whole
        raise AssertionError("read() of the whole file")

    readlines = read


def count_rows(app) -> int:
    with app.extensions["api.platform.db"].sessions() as session:
        return backup.count_records(session)


def test_the_import_takes_its_lines_a_batch_at_a_time(app):
    lines = CountingLines(3 * BATCH + 7)
    seen = []

    def progress(done: int) -> None:
        seen.append((done, lines.taken))

    with app.extensions["api.platform.db"].sessions() as session:
        report = import_records(session, lines, progress)
    assert report.imported == 3 * BATCH + 7 and report.kept_ids
    # each batch was stored when the line after it had not been taken yet
    assert seen == [(BATCH, BATCH), (BATCH, 2 * BATCH), (BATCH, 3 * BATCH), (7, 3 * BATCH + 7)]
    assert count_rows(app) == 3 * BATCH + 7


def test_a_bad_line_late_in_a_stream_is_named_exactly_and_nothing_is_imported(app):
    lines = CountingLines(2 * BATCH + 50, bad_at=2 * BATCH + 17)
    with app.extensions["api.platform.db"].sessions() as session, pytest.raises(BackupError) as error:
        import_records(session, lines)
    assert str(error.value).startswith(f"line {2 * BATCH + 17}: not JSON")
    assert lines.taken == 2 * BATCH + 17  # it stopped there, without reading on
    assert count_rows(app) == 0  # the batches flushed before were rolled back


def test_an_id_reused_across_batches_names_its_line(app):
    lines = [record_line(n) for n in range(1, BATCH + 3)] + [json.dumps({**json.loads(record_line(3)),
                                                                         "player": "other"})]
    with app.extensions["api.platform.db"].sessions() as session, pytest.raises(BackupError) as error:
        import_records(session, lines)
    assert str(error.value) == f"line {BATCH + 3}: id: 3 is already the id of an earlier line"
    assert count_rows(app) == 0


def test_a_duplicate_across_batches_is_reported_as_an_earlier_line(app):
    lines = [record_line(n) for n in range(1, BATCH + 3)] + [json.dumps({**json.loads(record_line(3)), "id": 9999})]
    with app.extensions["api.platform.db"].sessions() as session:
        report = import_records(session, lines)
    assert report.imported == BATCH + 2
    assert [str(d) for d in report.duplicates] == [
        f"line {BATCH + 3}: player3 {FT}: already stored as an earlier line of the file"]


def test_the_command_imports_a_large_file_without_holding_it(app, tmp_path):
    """A file of a few records and a million blank lines: read whole it would take far
    more memory than the import holds while it streams."""
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for number in range(1, 4):
            out.write(record_line(number) + "\n")
            out.write("\n" * 400_000)
        out.write("{broken\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        result = app.test_cli_runner().invoke(args=["records", "import", str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 1
    assert f"line {3 * 400_001 + 1}: not JSON" in result.output and "nothing was imported" in result.output
    # readlines() alone would hold every line: about 50 bytes for each of 1.2 million
    assert peak < 10 * 1024 * 1024 < 50 * 1.2e6, (peak, size)
    assert count_rows(app) == 0

    path.write_text("".join(record_line(n) + "\n\n" for n in range(1, 4)), encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["records", "import", "--progress", str(path)])
    assert result.exit_code == 0 and "imported 3 records (ids kept)" in result.output
    assert "importing" in result.output  # the bar, from a first pass over the file


def test_export_streams_a_batch_at_a_time(app, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(record_line(n) + "\n" for n in range(1, 2 * BATCH + 2)), encoding="utf-8")
    assert app.test_cli_runner().invoke(args=["records", "import", str(path)]).exit_code == 0
    written = []

    class Out:
        def write(self, text: str) -> None:
            written.append(text)

    with app.extensions["api.platform.db"].sessions() as session, \
            mock.patch.object(session, "execute", wraps=session.execute) as execute:
        written_rows = backup.export_backup(session, Out())
    assert written_rows["records"] == 2 * BATCH + 1
    # one query a table, whose rows come a batch at a time (a server-side cursor on PostgreSQL)
    assert execute.call_count == len(backup.backed_up())
    assert {call.args[0].get_execution_options()["yield_per"] for call in execute.call_args_list} == {BATCH}
    records = [json.loads(line)["row"]["id"] for line in written[1:] if json.loads(line)["table"] == "records"]
    assert records == list(range(1, 2 * BATCH + 2))
