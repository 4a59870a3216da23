"""Batch mode: JSON Lines in, one result a line out, same order, errors per line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

import verifier.batch
from verifier import replay
from verifier.batch import PARALLEL_FROM, run_batch, verify_line
from verifier.cli import main

ILLEGAL_YU = {"id": "a", "code": "YU1-C-AAAAAAB", "moves": "T4:KS>T1"}  # T1 holds 7H
LEGAL_FT = {"id": "b", "code": "fT1-n-aaaaaab", "moves": ["S", {"action": "draw"}, "U"], "claimed": {"moves": 2}}
MISMATCH = {"id": "c", "code": "FT1-N-AAAAAAB", "moves": "S", "claimed": {"score": 5}}


def lines_of(*items: object) -> list[str]:
    return [item if isinstance(item, str) else json.dumps(item) for item in items]


def run(lines: list[str], workers: int = 1) -> tuple[list[dict], int, int]:
    out = io.StringIO()
    total, failed = run_batch(lines, out, workers=workers)
    return [json.loads(line) for line in out.getvalue().splitlines()], total, failed


def test_results_match_replay_and_keep_order_and_passthrough():
    results, total, failed = run(lines_of(ILLEGAL_YU, LEGAL_FT, MISMATCH))
    assert [r["id"] for r in results] == ["a", "b", "c"]
    assert [r["line"] for r in results] == [1, 2, 3]
    assert (total, failed) == (3, 2)
    expected = replay(LEGAL_FT["code"], LEGAL_FT["moves"], LEGAL_FT["claimed"]).to_json()
    assert {k: results[1][k] for k in expected} == expected
    assert results[0]["legal"] is False
    assert (results[0]["error"]["index"], results[0]["error"]["rule"]) == (0, "tableau.build")
    assert results[2]["legal"] is True and results[2]["verified"] is False
    assert results[2]["claims"]["score"] == {"claimed": 5, "actual": 0, "match": False}


@pytest.mark.parametrize(
    "line, reason",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"code": "YU1-C-AAAAAAB"}', "missing 'moves'"),
        ('{"moves": "S"}', "missing 'code'"),
        ('{"code": "YU1-C-AAAAAAB", "moves": 5}', "'moves' must be"),
        ('{"code": "YU1-C-AAAA0AB", "moves": ""}', "not base32"),
        ('{"code": "YU1-C-AAAAAAB", "moves": "", "claimed": 3}', "'claimed' must be"),
        ('{"code": "YU1-C-AAAAAAB", "moves": "", "claimed": {"time": 3}}', "unknown claimed field"),
    ],
)
def test_malformed_line_gives_an_error_result_and_the_run_goes_on(line, reason):
    results, total, failed = run([line, json.dumps(LEGAL_FT)])
    assert total == 2 and failed == 1
    assert results[0]["line"] == 1 and results[0]["legal"] is False and reason in results[0]["input_error"]
    assert results[1]["verified"] is True


def test_blank_lines_are_skipped_but_line_numbers_stay_true():
    results, total, _ = run(["", json.dumps(LEGAL_FT), "   ", json.dumps(LEGAL_FT)])
    assert total == 2 and [r["line"] for r in results] == [2, 4]


def test_two_workers_give_the_same_output_in_the_same_order():
    items = [dict(LEGAL_FT, id=i, moves=["S"] * (i % 5)) for i in range(300)] + [MISMATCH, "oops"]
    lines = lines_of(*items)
    one = io.StringIO()
    two = io.StringIO()
    assert run_batch(lines, one, workers=1) == run_batch(lines, two, workers=2, chunksize=7)
    assert one.getvalue() == two.getvalue()
    assert [json.loads(x).get("id") for x in two.getvalue().splitlines()][:300] == list(range(300))


@pytest.mark.parametrize(
    "count, shared", [(1, []), (PARALLEL_FROM - 1, []), (PARALLEL_FROM, [3]), (PARALLEL_FROM + 40, [3])]
)
def test_auto_workers_share_the_work_among_the_cpus_only_for_a_long_input(monkeypatch, count, shared):
    asked: list[int] = []

    def in_this_process(numbered, out, workers):
        asked.append(workers)
        return verifier.batch._write(map(verify_line, numbered), out)

    monkeypatch.setattr(verifier.batch, "_shared", in_this_process)
    monkeypatch.setattr(verifier.batch, "usable_cpus", lambda: 3)
    items = [dict(LEGAL_FT, id=i, moves=["S"] * (i % 7)) for i in range(count - 1)] + [MISMATCH]
    auto, one = io.StringIO(), io.StringIO()
    assert run_batch(lines_of(*items), auto, workers=None) == run_batch(lines_of(*items), one, workers=1)
    assert auto.getvalue() == one.getvalue() and len(auto.getvalue().splitlines()) == count
    assert asked == shared


def test_shares_are_runs_of_consecutive_lines_of_about_the_same_size():
    block = [(n, "x" * size) for n, size in enumerate([10, 10, 10, 10, 40, 10, 10], 1)]
    shares = verifier.batch._split(block, 2)
    assert [[n for n, _ in share] for share in shares] == [[1, 2, 3, 4], [5, 6, 7]]  # 40 and 60 characters
    assert verifier.batch._split(block[:1], 3) == [[], block[:1], []]


def test_a_failed_worker_process_leaves_its_share_to_this_one(monkeypatch):
    def failing_child(share):
        pid = os.fork()
        if pid == 0:
            os._exit(3)
        read_end, write_end = os.pipe()
        os.close(write_end)
        return pid, read_end

    monkeypatch.setattr(verifier.batch, "_fork", failing_child)
    items = [dict(LEGAL_FT, id=i, moves=["S"] * (i % 5)) for i in range(40)] + ["oops"]
    two, one = io.StringIO(), io.StringIO()
    assert run_batch(lines_of(*items), two, workers=2) == run_batch(lines_of(*items), one, workers=1)
    assert two.getvalue() == one.getvalue()


def test_auto_workers_with_real_processes_give_the_same_output():
    items = [dict(LEGAL_FT, id=i, moves=["S"] * (i % 5)) for i in range(PARALLEL_FROM + 10)] + ["oops"]
    auto, one = io.StringIO(), io.StringIO()
    assert run_batch(lines_of(*items), auto, workers=None) == run_batch(lines_of(*items), one, workers=1)
    assert auto.getvalue() == one.getvalue()


def test_cli_workers_auto_is_the_default_and_anything_else_must_be_a_positive_number(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(LEGAL_FT, LEGAL_FT)) + "\n", encoding="utf-8")
    assert main(["batch", str(path), "--workers", "auto"], io.StringIO()) == 0
    for bad in ("-1", "two", "1.5"):
        assert main(["batch", str(path), "--workers", bad], io.StringIO()) == 2
        assert f"--workers must be a number of at least 1, or auto (not '{bad}')" in capsys.readouterr().err


def test_cli_batch_from_a_file_and_exit_status(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines_of(LEGAL_FT, LEGAL_FT)) + "\n", encoding="utf-8")
    out = io.StringIO()
    assert main(["batch", str(path), "--workers", "2"], out) == 0
    assert len(out.getvalue().splitlines()) == 2
    path.write_text("\n".join(lines_of(LEGAL_FT, MISMATCH)), encoding="utf-8")
    assert main(["batch", str(path)], io.StringIO()) == 1
    assert main(["batch", str(tmp_path / "missing.jsonl")], io.StringIO()) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["batch", str(path), "--workers", "0"], io.StringIO()) == 2


def test_cli_batch_reads_standard_input():
    proc = subprocess.run(
        [sys.executable, "-m", "verifier", "batch", "-"],
        input="\n".join(lines_of(LEGAL_FT, "x")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    first, second = (json.loads(x) for x in proc.stdout.splitlines())
    assert first["verified"] is True and "input_error" in second
    assert "2 lines, 1 verified, 1 not" in proc.stderr


def test_verify_line_reports_bad_json_position():
    verified, text = verify_line((7, '{"code": '))
    assert not verified and json.loads(text)["line"] == 7


@pytest.mark.parametrize(
    "extra",
    [{}, {"note": "\x00canonical"}, {"canonical": "mine", "position": "\x00position"}, {"position": "\x00canonical"}],
)
def test_each_line_is_the_verdict_as_the_json_encoder_writes_it(extra):
    item = dict(LEGAL_FT, **extra)
    verified, text = verify_line((7, json.dumps(item)))
    verdict = replay(item["code"], item["moves"], item["claimed"])
    passthrough = {k: v for k, v in item.items() if k not in ("code", "moves", "claimed")}
    assert text == json.dumps({**passthrough, "line": 7, **verdict.to_json()}, ensure_ascii=False)
    assert verified is verdict.verified
