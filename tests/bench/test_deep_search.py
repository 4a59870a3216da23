"""``bench.deep_search``: one JSON line a deal, the solver's own answer and counts at the caps given."""

from __future__ import annotations

import json

import pytest

from bench import deep_search
from engine import Game
from engine.solver import solve
from verifier import replay


def _lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:
    assert deep_search.main(list(argv)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_lost_deal_is_exhausted_depth_first(capsys: pytest.CaptureFixture[str]) -> None:
    [line] = _lines(capsys, "YU1-C-2KU2AKA", "--depth", "--nodes", "100000", "--table", "100000")
    # (the node count pinned by tests/solver for the same search)
    assert (line["code"], line["status"], line["nodes"], line["length"]) == ("YU1-C-2KU2AKA", "unwinnable", 16910, 0)


def test_caps_are_the_callers(capsys: pytest.CaptureFixture[str]) -> None:
    [line] = _lines(capsys, "YU1-C-2KU2AKA", "--depth", "--nodes", "500")
    assert (line["status"], line["nodes"]) == ("unknown", 500)
    [line] = _lines(capsys, "YU1-C-2KU2AKA", "--depth", "--table", "1000")
    assert line["status"] == "unknown" and line["positions"] == 1000 and "table is full" in line["reason"]


def test_won_deals_print_the_solvers_answer(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(capsys, "YU1-C-AAAAAAC", "FT1-N-AAAAAAB", "--nodes", "50000")
    assert [line["code"] for line in lines] == ["YU1-C-AAAAAAC", "FT1-N-AAAAAAB"]
    for line in lines:
        # the same search as the service's (beams, then the complete search), and its line wins when replayed
        result = solve(Game.from_code(line["code"]).position, budget_seconds=None, max_nodes=50000, shorten_steps=0)
        assert (line["status"], line["nodes"], line["positions"], line["length"]) == (
            "winnable", result.nodes, result.positions, len(result.actions))
        assert replay(line["code"], list(result.actions)).won
