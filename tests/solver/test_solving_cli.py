"""``verifier.solving``: solve/hint on codes and partial logs, replay-checked answers, the CLI."""

from __future__ import annotations

import argparse
import io
import json

import pytest

import engine.solver
from engine import Game, InvalidCodeError
from verifier import cli, replay, solving
from verifier.solving import (
    EXIT_ILLEGAL,
    EXIT_OK,
    EXIT_UNDECIDED,
    EXIT_UNUSABLE,
    IllegalLogError,
    hint_code,
    register,
    solve_code,
)

NODES = 200_000


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return cli.main(argv, out), out.getvalue()


def test_solve_code_from_the_start_is_replayed_as_won():
    answer = solve_code("yu1-c-aaaaaab", budget_seconds=None, max_nodes=NODES)
    assert answer.status == "winnable" and answer.verified
    assert str(answer.code) == "YU1-C-AAAAAAB" and answer.prefix == ()
    verdict = replay(answer.code, " ".join(answer.log))
    assert verdict.legal and verdict.won


def test_solve_code_after_a_partial_log_with_undo():
    prefix = "S S U T7:AS>F"  # Forty Thieves: draw, draw, undo, an ace up
    answer = solve_code("FT1-N-AAAAAAB", prefix, budget_seconds=None, max_nodes=NODES)
    assert answer.status == "winnable" and answer.verified
    assert answer.prefix == ("S", "S", "U", "T7:AS>F1")
    assert answer.log[:4] == answer.prefix
    assert replay("FT1-N-AAAAAAB", list(answer.log)).won
    # undo could still go back into the log: the answer says that part was not examined
    assert any("undo back into the given log" in item for item in answer.coverage["left_out"])


def test_a_json_log_is_accepted():
    answer = solve_code(
        "YU1-C-AAAAAAB", [{"from": "T7", "card": "TS", "to": "T2"}], budget_seconds=None, max_nodes=NODES
    )
    assert answer.prefix == ("T7:TS>T2",) and answer.verified


def test_illegal_log_is_refused_with_its_place():
    with pytest.raises(IllegalLogError) as info:
        solve_code("YU1-C-AAAAAAB", "T7:TS>T2 T1:7H>F", max_nodes=10)
    assert info.value.error.index == 1 and info.value.error.rule == "foundation.build"
    with pytest.raises(InvalidCodeError):
        solve_code("YU2-C-AAAAAAB")


def test_a_line_the_verifier_rejects_is_never_given_out(monkeypatch):
    real = engine.solver.solve

    def broken(position, **kwargs):
        result = real(position, **kwargs)
        return engine.solver.SolveResult("winnable", result.actions[:-1], "a line", coverage=result.coverage)

    monkeypatch.setattr(solving, "solve", broken)
    answer = solve_code("YU1-C-AAAAAAB", budget_seconds=None, max_nodes=NODES)
    assert answer.status == "unknown" and not answer.verified and answer.actions == ()
    assert answer.reason.startswith("solver error") and "won game" in answer.reason


def test_hint_is_the_first_action_of_a_verified_line():
    log = "T7:TS>T2 T6:6D>T2"
    hint = hint_code("YU1-C-AAAAAAB", log, budget_seconds=None, max_nodes=NODES)
    assert hint.answer.status == "winnable" and hint.action == hint.answer.actions[0]
    game = Game.from_code("YU1-C-AAAAAAB")
    for text in log.split() + [hint.action]:
        game.push_text(text)  # the hint is legal where the log ends
    follow = solve_code("YU1-C-AAAAAAB", log.split() + [hint.action], budget_seconds=None, max_nodes=NODES)
    assert follow.status == "winnable"


def test_hint_on_a_won_game_and_on_an_undecided_one():
    answer = solve_code("YU1-C-AAAAAAB", budget_seconds=None, max_nodes=NODES)
    won = hint_code("YU1-C-AAAAAAB", list(answer.log), max_nodes=10)
    assert won.action is None and "already won" in won.reason
    undecided = hint_code("FT1-N-AAAAAAC", "S", budget_seconds=None, max_nodes=20)
    assert undecided.action is None and undecided.answer.status == "unknown"
    assert "node budget" in undecided.reason


def test_cli_solve_json():
    code, text = run(["solve", "YU1-R-AAAAAAB", "--max-nodes", str(NODES), "--json"])
    doc = json.loads(text)
    assert code == EXIT_OK
    assert doc["status"] == "winnable" and doc["verified"] is True
    assert doc["solution_actions"] == len(doc["solution"].split())
    assert replay("YU1-R-AAAAAAB", doc["log"]).won
    assert set(doc["search"]) == {"nodes", "positions", "seconds", "table_bytes"}
    assert doc["budget"] == {"seconds": 10.0, "nodes": NODES, "table": None}


def test_cli_solve_text_and_a_log_file(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text("T7:TS>T2  # a ten onto the jack\n", encoding="utf-8")
    code, text = run(["solve", "YU1-C-AAAAAAB", str(path), "--max-nodes", str(NODES)])
    assert code == EXIT_OK
    assert text.startswith("YU1-C-AAAAAAB: winnable") and "verified" in text


def test_cli_hint(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(json.dumps(["T7:TS>T2"]), encoding="utf-8")
    code, text = run(["hint", "YU1-C-AAAAAAB", str(path), "--max-nodes", str(NODES), "--json"])
    doc = json.loads(text)
    assert code == EXIT_OK and doc["status"] == "winnable"
    game = Game.from_code("YU1-C-AAAAAAB")
    game.push_text("T7:TS>T2")
    game.push_text(doc["hint"])
    code, text = run(["hint", "YU1-C-AAAAAAB", str(path), "--max-nodes", str(NODES)])
    assert text.splitlines()[0] == doc["hint"]


def test_cli_exit_codes(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("T1:7H>F", encoding="utf-8")
    code, text = run(["solve", "YU1-C-AAAAAAB", str(bad)])
    assert code == EXIT_ILLEGAL and "action 0" in text and "foundation.build" in text
    code, text = run(["solve", "YU1-C-AAAAAAB", str(bad), "--json"])
    assert code == EXIT_ILLEGAL and json.loads(text)["error"]["index"] == 0
    code, _ = run(["solve", "XX1-C-AAAAAAB"])
    assert code == EXIT_UNUSABLE and "invalid game code" in capsys.readouterr().err
    code, _ = run(["solve", "YU1-C-AAAAAAB", str(tmp_path / "missing.txt")])
    assert code == EXIT_UNUSABLE and "cannot read" in capsys.readouterr().err
    code, text = run(["solve", "FT1-N-AAAAAAC", "--max-nodes", "10", "--json"])
    assert code == EXIT_UNDECIDED and json.loads(text)["status"] == "unknown"


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "YU1-C-AAAAAAB", "--budget-seconds", "0"],
        ["solve", "YU1-C-AAAAAAB", "--budget-seconds", "soon"],
        ["solve", "YU1-C-AAAAAAB", "--max-nodes", "-3"],
        ["hint", "YU1-C-AAAAAAB"],
    ],
)
def test_cli_rejects_bad_options(argv, capsys):
    with pytest.raises(SystemExit) as info:
        run(argv)
    assert info.value.code == 2
    assert "error" in capsys.readouterr().err


def test_register_adds_both_commands_to_any_parser():
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["hint", "FT1-N-AAAAAAB", "-", "--budget-seconds", "2.5"])
    assert (args.command, args.file, args.budget_seconds, args.json) == ("hint", "-", 2.5, False)
    assert args.func is solving.cmd_hint
