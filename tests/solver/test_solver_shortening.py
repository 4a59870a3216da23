"""The solver's shortening pass (engine.solver.shorten): shorter lines that still win."""

from __future__ import annotations

import time

import pytest

from engine import Game
from engine.solver import WINNABLE, shorten, solve, state_for
from engine.solver.yukon import GROUP
from verifier import replay


def found_line(code: str, nodes: int = 30000) -> tuple[str, ...]:
    """The line the search finds, before any shortening."""
    result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=nodes, shorten_steps=0)
    assert result.status == WINNABLE
    assert result.found_length == len(result.actions)
    return result.actions


def won(code: str, line) -> bool:
    verdict = replay(code, list(line))
    return verdict.legal and verdict.won


def detour(code: str, line: tuple[str, ...]) -> list[str]:
    """``line`` with one Yukon group move X -> Z made in two, X -> Y -> Z: the same position
    after, two actions instead of one, and neither of the two can be dropped on its own."""
    game = Game.from_code(code)
    for index, text in enumerate(line):
        state = state_for(game.position)
        for m in state.moves():
            if state.action_text(m) != text or m[0] != GROUP:
                continue
            for other in state.moves():
                if other[0] == GROUP and other[1] == m[1] and other[4] == m[4] and other[3] != m[3]:
                    first = state.action_text(other)
                    second = f"T{other[3] + 1}:{text.split(':')[1].split('>')[0]}>T{m[3] + 1}"
                    return list(line[:index]) + [first, second] + list(line[index + 1 :])
        game.push_text(text)
    raise AssertionError("no group move of the line has a second target")


def round_trip(code: str, line: tuple[str, ...]) -> list[str]:
    """``line`` with a group move and the move straight back inserted where both are legal."""
    game = Game.from_code(code)
    for index, text in enumerate(line):
        state = state_for(game.position)
        for there in state.moves():
            if there[0] != GROUP:
                continue
            flip = state.do(there)
            back = [m for m in state.moves() if m[0] == GROUP and m[4] == there[4] and m[3] == there[1]]
            if back and not flip:
                pair = [state_for(game.position).action_text(there), state.action_text(back[0])]
                return list(line[:index]) + pair + list(line[index:])
            state.undo(there, flip)
        game.push_text(text)
    raise AssertionError("no group move of the line can be taken straight back")


@pytest.mark.parametrize("code, pad, extra", [("YU1-R-AAAAAAB", detour, 1), ("YU1-C-AAAAAAB", round_trip, 2)])
def test_a_padded_line_comes_back_at_most_as_long_as_found_and_still_wins(code, pad, extra):
    """A detour through another column (X -> Y -> Z for X -> Z; no single action of it can be
    dropped) is cut by a shortcut; a move and its way back are dropped."""
    line = found_line(code)
    longer = pad(code, line)
    assert len(longer) == len(line) + extra and won(code, longer)
    shorter = shorten(Game.from_code(code).position, longer)
    assert len(shorter) <= len(line) and won(code, shorter)


@pytest.mark.parametrize("code", ["YU1-R-AAAAAAB", "FT1-N-AAAAAAB"])
def test_solve_gives_a_shorter_verified_line_than_it_found(code):
    """Measured: these lines shrink (100 -> 88 and 254 -> 249 actions at this budget)."""
    result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=30000)
    assert result.status == WINNABLE
    assert len(result.actions) < result.found_length
    assert won(code, result.actions)
    assert result.reason == f"a winning line of {len(result.actions)} actions"


def test_shortening_never_lengthens_and_always_wins():
    for code in ("YU1-C-AAAAAAB", "YU1-C-AAAAAAC", "YU1-R-AAAAAAC"):
        line = found_line(code)
        shorter = shorten(Game.from_code(code).position, line)
        assert len(shorter) <= len(line) and won(code, shorter)


def test_the_step_budget_bounds_the_work_and_the_line_still_wins():
    code = "YU1-R-AAAAAAB"
    position = Game.from_code(code).position
    longer = detour(code, found_line(code))
    assert shorten(position, longer, max_steps=1) == tuple(longer)  # one step: nothing tried to the end
    assert won(code, shorten(position, longer, max_steps=500))


def test_a_deadline_stops_the_work_and_the_line_still_wins():
    code = "YU1-R-AAAAAAB"
    position = Game.from_code(code).position
    longer = detour(code, found_line(code))
    late = shorten(position, longer, deadline=time.monotonic() - 1)
    assert len(late) <= len(longer) and won(code, late)
    assert len(shorten(position, longer, deadline=time.monotonic() + 600)) < len(longer)


def test_a_line_that_does_not_win_is_refused():
    code = "YU1-C-AAAAAAB"
    line = found_line(code)
    with pytest.raises(ValueError, match="does not replay as a won game"):
        shorten(Game.from_code(code).position, line[:-1])


def test_shortening_is_deterministic():
    code = "FT1-N-AAAAAAB"
    position = Game.from_code(code).position
    line = found_line(code)
    assert shorten(position, line) == shorten(position, line)
