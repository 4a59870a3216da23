"""Hints that lead to a win (issue 42, item 1), without the service: following
``verifier hint`` from the empty log wins, each hint's line one action shorter than the one
before (the rest of each line is kept, by the position it leads to, and continued); a new
search never goes back to a position the log went through; the engine's ``avoid``."""

from __future__ import annotations

import io
import json

import pytest

from engine import Game
from engine.solver import solve
from verifier import cli, replay
from verifier.solving import LINES_KEPT, LineFile, continue_line, hint_code, position_key

#: one deal of each rule set that the hint budget wins, with its budget; YU1-R-YTJ4DJX looped
#: (``T3:3C>T4 T4:3C>T3`` forever) when every hint was a new search
WALKS = [("YU1-C-AAAAAAB", 10_000), ("YU1-R-YTJ4DJX", 10_000), ("FT1-N-AAAAAAB", 30_000)]


def ask(code: str, log: list[str], nodes: int, *options: str) -> dict:
    out = io.StringIO()
    log_file = io.StringIO(" ".join(log))
    import sys

    stdin, sys.stdin = sys.stdin, log_file
    try:
        status = cli.main(["hint", code, "-", "--max-nodes", str(nodes), "--json", *options], out)
    finally:
        sys.stdin = stdin
    assert status == 0, out.getvalue()
    return json.loads(out.getvalue())


@pytest.mark.parametrize(("code", "nodes"), WALKS)
def test_following_verifier_hint_wins_and_each_line_is_one_shorter(code, nodes):
    log: list[str] = []
    lengths: list[int] = []
    while True:
        answer = ask(code, log, nodes)
        assert answer["status"] == "winnable", answer
        if answer["hint"] is None:
            break
        assert answer["continued"] is (len(log) > 0)
        lengths.append(answer["line_length"])
        log.append(answer["hint"])
        assert len(log) <= lengths[0], "the walk is longer than its first line"
    assert replay(code, log).won
    assert lengths == list(range(lengths[0], 0, -1))


def test_without_kept_lines_every_hint_is_a_new_search_that_still_never_loops():
    """``--no-lines``: fresh searches only; each avoids the positions already played, so the walk
    that looped on YU1-R-YTJ4DJX wins, and no position comes twice."""
    code, nodes = WALKS[1]
    game, seen, log = Game.from_code(code), set(), []
    for _ in range(400):
        answer = ask(code, log, nodes, "--no-lines")
        assert answer["continued"] is False
        if answer["hint"] is None:
            break
        seen.add(game.position.layout())
        game.push_text(answer["hint"])
        assert game.position.layout() not in seen
        log.append(answer["hint"])
    assert replay(code, log).won


def test_a_player_who_leaves_the_line_gets_a_new_one_that_does_not_go_back():
    code, nodes = WALKS[1]
    store: dict[str, list[str]] = {}
    game, path, log = Game.from_code(code), [], []
    for _ in range(20):
        hint = hint_code(code, log, max_nodes=nodes, budget_seconds=None, known=store.get)
        store[hint.next_key] = list(hint.line[1:])
        path.append(game.position.layout())
        game.push_text(hint.action)
        log.append(hint.action)
    off = next(str(a) for a in game.legal_actions() if str(a) != hint.line[1])  # not the line's next action
    path.append(game.position.layout())
    game.push_text(off)
    log.append(off)
    fresh = hint_code(code, log, max_nodes=nodes, budget_seconds=None, known=store.get)
    assert fresh.status == "winnable" and fresh.continued is False
    for action in fresh.line:  # the new line never reaches a position of the path
        game.push_text(action)
        assert game.position.layout() not in path
    assert game.is_won


def test_a_kept_line_is_continued_only_where_it_wins():
    code = WALKS[0][0]
    first = hint_code(code, [], max_nodes=10_000, budget_seconds=None)
    after = [first.action]
    continued = continue_line(code, after, first.line[1:])
    assert continued is not None and continued.continued and continued.action == first.line[1]
    assert continued.to_json()["line_length"] == len(first.line) - 1
    assert continue_line(code, [], first.line[1:]) is None  # from another position: it does not win
    game = Game.from_code(code)
    game.push_text(first.action)
    assert first.next_key == position_key(game.position)


def test_the_line_file_is_bounded_and_survives_a_bad_file(tmp_path):
    path = tmp_path / "lines.json"
    path.write_text("{not json", encoding="utf-8")
    lines = LineFile(path)
    assert lines.get("x") is None
    for index in range(LINES_KEPT + 5):
        lines.lines[f"k{index}"] = "T1:AS>F"
    lines.put("newest", ["T2:AH>F"])
    again = LineFile(path)
    assert len(again.lines) == LINES_KEPT and again.get("newest") == ["T2:AH>F"] and again.get("k0") is None


def test_the_engine_search_avoids_the_positions_it_is_given():
    """The positions of a winning line, all avoided but the start: the search finds another
    line (or searches again through them when none avoids them), and the shortening keeps out."""
    start = Game.from_code("YU1-C-AAAAAAB")
    line = solve(start.position, max_nodes=10_000, budget_seconds=None).actions
    game, along = Game.from_code("YU1-C-AAAAAAB"), []
    for action in line[:10]:
        game.push_text(action)
        along.append(game.position.copy())
    other = solve(start.position, max_nodes=10_000, budget_seconds=None, avoid=along)
    assert other.status == "winnable"
    layouts = {p.layout() for p in along}
    replayed = Game.from_code("YU1-C-AAAAAAB")
    for action in other.actions:
        replayed.push_text(action)
        assert replayed.position.layout() not in layouts
    assert replayed.is_won
