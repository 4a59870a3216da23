"""The command line: ``python -m verifier deal|replay``, exit codes 0 / 1 / 2, JSON shapes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Game
from verifier import deal_json, replay
from verifier.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOG = "T5>T1 T7:TS>T2 T6:6D>T2 U T6:QD>T4"  # legal on YU1-C-AAAAAAB, score 5, 4 moves


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    out = io.StringIO()
    status = main(argv, out)
    return status, out.getvalue(), capsys.readouterr().err


def write(tmp_path: Path, content: str, name: str = "game.log") -> str:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return str(path)


# -- deal -----------------------------------------------------------------------------


def test_deal_json_hides_face_down_cards(capsys):
    status, out, err = run(["deal", "yu1-c-aaaaaab", "--json"], capsys)
    assert status == 0 and err == ""
    deal = json.loads(out)
    assert (deal["code"], deal["game"], deal["rules"], deal["number"]) == ("YU1-C-AAAAAAB", "yukon", "classic", 1)
    assert deal["revealed"] is False
    assert [len(col) for col in deal["tableau"]] == [1, 6, 7, 8, 9, 10, 11]
    assert deal["tableau"][0] == [{"card": "7H", "face_up": True}]
    assert deal["tableau"][1][:2] == [{"card": None, "face_up": False}, {"card": "4H", "face_up": True}]
    for number, col in enumerate(deal["tableau"]):
        assert [c["face_up"] for c in col] == [False] * number + [True] * (len(col) - number)
        assert all((c["card"] is None) == (not c["face_up"]) for c in col)
    assert deal["foundations"] == [[], [], [], []]
    assert deal["waste"] == []
    assert deal["stock"] is None
    assert deal["position"] is None
    assert deal == deal_json("YU1-C-AAAAAAB")


def test_deal_json_reveal_shows_every_card(capsys):
    status, out, _ = run(["deal", "YU1-R-AAAAAAB", "--reveal", "--json"], capsys)
    assert status == 0
    deal = json.loads(out)
    assert deal["rules"] == "relaxed" and deal["revealed"] is True
    assert [c["card"] for c in deal["tableau"][1]] == ["9S", "4H", "8D", "8H", "5C", "JH"]
    assert [c["face_up"] for c in deal["tableau"][1]] == [False, True, True, True, True, True]
    cards = [c["card"] for col in deal["tableau"] for c in col]
    assert len(cards) == len(set(cards)) == 52
    assert deal["position"] == str(Game.from_code("YU1-R-AAAAAAB").position)


def test_forty_thieves_deal_json(capsys):
    _, out, _ = run(["deal", "FT1-N-AAAAAAB", "--json"], capsys)
    hidden = json.loads(out)
    assert (hidden["game"], hidden["rules"]) == ("forty-thieves", "normal")
    assert [c["card"] for c in hidden["tableau"][0]] == ["6D", "7D", "JS", "8S"]
    assert all(c["face_up"] for col in hidden["tableau"] for c in col)
    assert hidden["foundations"] == [[]] * 8
    assert hidden["stock"] is None and hidden["stock_size"] == 64
    _, out, _ = run(["deal", "FT1-N-AAAAAAB", "--json", "--reveal"], capsys)
    shown = json.loads(out)
    assert shown["stock"][:4] == ["6D", "KD", "3D", "KS"] and shown["stock"][-1] == "7C"
    assert len(shown["stock"]) == 64


def test_deal_as_a_board(capsys):
    status, out, _ = run(["deal", "YU1-C-AAAAAAB"], capsys)
    assert status == 0
    assert "YU1-C-AAAAAAB" in out
    assert "T1: 7H\n" in out
    assert "T2: (??) 4H 8D 8H 5C JH\n" in out
    assert "9S" not in out.split("T2:")[1].split("\n")[0]
    _, out, _ = run(["deal", "YU1-C-AAAAAAB", "--reveal"], capsys)
    assert "T2: (9S) 4H 8D 8H 5C JH\n" in out
    assert "T7: (3H) (3C) (AS) (4S) (2D) (8S) TS 3D 2C 9D 7C\n" in out


@pytest.mark.parametrize(
    "code, reason",
    [
        ("YU2-C-AAAAAAB", "unsupported version 2"),
        ("FT1-R-AAAAAAB", "rule letter R is not valid for FT"),
        ("YU1-C-AAAA0AB", "character 5 '0' is not base32"),
    ],
)
def test_deal_with_a_bad_code_exits_2(code, reason, capsys):
    status, out, err = run(["deal", code, "--json"], capsys)
    assert status == 2
    assert out == ""
    assert reason in err


# -- replay -----------------------------------------------------------------------------


def test_replay_a_legal_text_log(tmp_path, capsys):
    status, out, err = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, LOG)], capsys)
    assert status == 0 and err == ""
    assert "YU1-C-AAAAAAB: legal" in out
    assert "score 5, moves 4, actions 5, undos 1, take-backs 0" in out
    assert "canonical: T5:6S>T1 T7:TS>T2 T6:6D>T2 U T6:QD>T4" in out


def test_replay_json_equals_the_library_verdict(tmp_path, capsys):
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, LOG), "--json"], capsys)
    assert status == 0
    assert json.loads(out) == replay("YU1-C-AAAAAAB", LOG).to_json()


def test_replay_a_json_array_log(tmp_path, capsys):
    array = json.dumps([{"from": "T5", "to": "T1"}, "T7:TS>T2", {"action": "undo"}])
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, array, "game.json"), "--json"], capsys)
    assert status == 0
    assert json.loads(out)["canonical"] == "T5:6S>T1 T7:TS>T2 U"


def test_replay_from_standard_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("S S U\n"))
    status, out, _ = run(["replay", "FT1-N-AAAAAAB", "-", "--json"], capsys)
    assert status == 0
    data = json.loads(out)
    assert (data["moves"], data["actions"], data["undos"]) == (2, 3, 1)


def test_replay_an_illegal_log_exits_1(tmp_path, capsys):
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, "T5>T1 T2:JH>T1")], capsys)
    assert status == 1
    assert "ILLEGAL" in out
    assert "action 1 'T2:JH>T1': tableau.build:" in out
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, "T5>T1 T2>W"), "--json"], capsys)
    assert status == 1
    error = json.loads(out)["error"]
    assert (error["index"], error["action"], error["kind"]) == (1, "T2>W", "syntax")


def test_replay_with_claims(tmp_path, capsys):
    good = json.dumps({"moves": LOG, "claimed": {"score": 5, "moves": 4, "won": False}})
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, good, "good.json"), "--json"], capsys)
    assert status == 0
    assert json.loads(out)["claims_match"] is True
    bad = json.dumps({"moves": LOG, "claimed": {"score": 50}})
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, bad, "bad.json")], capsys)
    assert status == 1
    assert "claimed score 50, recomputed 5: MISMATCH" in out
    status, out, _ = run(["replay", "YU1-C-AAAAAAB", write(tmp_path, bad, "bad.json"), "--json"], capsys)
    data = json.loads(out)
    assert status == 1 and data["legal"] is True and data["verified"] is False
    assert data["claims"]["score"] == {"claimed": 50, "actual": 5, "match": False}


@pytest.mark.parametrize(
    "content, reason",
    [
        ("[1, 2", "not valid JSON"),
        ('{"moves": "S", "claimed": {"points": 3}}', "points"),
        ('{"claimed": {"score": 3}}', "needs 'moves'"),
        ('{"moves": 5}', "'moves' must be"),
        ('{"moves": "S", "extra": 1}', "extra"),
    ],
)
def test_replay_with_unusable_input_exits_2(content, reason, tmp_path, capsys):
    status, out, err = run(["replay", "FT1-N-AAAAAAB", write(tmp_path, content, "x.json")], capsys)
    assert status == 2
    assert out == ""
    assert reason in err


def test_replay_with_a_missing_file_exits_2(tmp_path, capsys):
    missing = str(tmp_path / "nothing-here.log")
    status, out, err = run(["replay", "YU1-C-AAAAAAB", missing], capsys)
    assert status == 2 and out == ""
    assert "nothing-here.log" in err


def test_replay_with_a_bad_code_exits_2(tmp_path, capsys):
    status, _, err = run(["replay", "YU1-N-AAAAAAB", write(tmp_path, LOG)], capsys)
    assert status == 2
    assert "rule letter N is not valid for YU" in err


def test_replay_of_undecodable_bytes_exits_2(tmp_path, capsys):
    path = tmp_path / "binary.log"
    path.write_bytes(b"\xff\xfe\x00S")
    status, _, err = run(["replay", "FT1-N-AAAAAAB", str(path)], capsys)
    assert status == 2 and err


# -- a real process -------------------------------------------------------------------


def _python_m_verifier(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "verifier", *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def test_a_real_process_deal_and_replay():
    done = _python_m_verifier("deal", "FT1-N-AAAAAAB", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == deal_json("FT1-N-AAAAAAB")

    done = _python_m_verifier("replay", "YU1-C-AAAAAAB", "-", "--json", stdin=LOG)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == replay("YU1-C-AAAAAAB", LOG).to_json()

    done = _python_m_verifier("replay", "YU1-C-AAAAAAB", "-", stdin="T5>T1 T2:JH>T1")
    assert done.returncode == 1
    assert "tableau.build" in done.stdout

    done = _python_m_verifier("deal", "YU2-C-AAAAAAB")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "unsupported version 2" in done.stderr


# -- engine -----------------------------------------------------------------------------


def test_engine_says_which_build_runs_and_checks_an_expected_one(capsys):
    from engine import BUILD, BUILD_NOTE

    other = "pure" if BUILD == "compiled" else "compiled"
    assert run(["engine"], capsys) == (0, f"engine: {BUILD_NOTE}\n", "")
    assert run(["engine", "--expect", BUILD], capsys)[0] == 0
    status, out, err = run(["engine", "--expect", other], capsys)
    assert (status, out) == (1, f"engine: {BUILD_NOTE}\n")
    assert err == f"verifier: the engine is {BUILD}, not {other}\n"
