"""The engine frees what it makes, in either build: the solver's keys and the layout hashes'
pile bytes are built by joining bytes, since a compiled ``bytes + bytes`` (mypyc 1.20) keeps a
reference to its left operand and so never frees it (the worker tier grew by 100 MB a minute);
and its exceptions stay Python (``engine/build.py``'s ``NOT_COMPILED``), since the attributes of a
compiled class derived from ``Exception`` are never freed (python/mypy#21716; a shortening meets
hundreds of illegal actions: the hints' processes grew by 9 MB a minute). Each loop below runs
many times; the objects alive afterwards are counted.

The count is of the whole interpreter's blocks, so it is taken in a fresh interpreter of its
own: in the suite's process, another test's threads (a pool, a dispatcher) allocate meanwhile."""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess
import sys
from pathlib import Path

from engine import Game, IllegalActionError, InvalidActionError
from engine.layouts import Layouts
from engine.solver import solve
from engine.solver.forty import FortyState
from engine.solver.yukon import YukonState
from tests.engine.test_engine_layouts import random_game

LOOPS = 5000
#: a few blocks come and go with the interpreter's own caches
SLACK = 200
ROOT = Path(__file__).resolve().parents[2]


def grown(step, loops: int = LOOPS) -> int:
    step()
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(loops):
        step()
    gc.collect()
    return sys.getallocatedblocks() - before


def solver_steps() -> dict[str, int]:
    forty = FortyState(Game.from_code("FT1-N-AAAAABC").position)
    yukon = YukonState(Game.from_code("YU1-C-AAAAABC").position, relaxed=False)
    steps = {"forty.key": forty.key, "forty.encode": forty.encode, "forty.estimate": forty.estimate,
             "yukon.key": yukon.key, "yukon.encode": yukon.encode, "yukon.moves": yukon.moves}
    return {name: grown(step) for name, step in steps.items()}


def layout_hashes() -> dict[str, int]:
    code = "YU1-C-AAAAABC"
    actions = random_game(code, 7, 120)

    def replay_hashed() -> None:
        game = Game.from_code(code)
        layouts = Layouts(game.position)
        for text in actions:
            game.undo() if text == "U" else game.push_text(text)
            layouts.hash(game.position)

    return {"replay_hashed": grown(replay_hashed, 200)}


def errors_and_shortening() -> dict[str, int]:
    game = Game.from_code("YU1-C-AAAAABC")

    def refused() -> None:
        for text in ("zz", "1-8", "F1-2"):  # bad syntax, then broken rules
            with contextlib.suppress(InvalidActionError, IllegalActionError):
                game.copy().push_text(text)

    def shortened() -> None:  # a winning line, shortened: most of its trials break a rule
        assert solve(game.position, budget_seconds=None, max_nodes=5000).status == "winnable"

    return {"refused": grown(refused), "shortened": grown(shortened, 5)}


def in_a_fresh_interpreter(measure: str) -> dict[str, int]:
    script = f"import json; from tests.engine.test_engine_memory import {measure}; print(json.dumps({measure}()))"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_solvers_keys_are_freed():
    growth = in_a_fresh_interpreter("solver_steps")
    assert len(growth) == 6 and all(blocks < SLACK for blocks in growth.values()), growth


def test_the_layout_hashes_free_their_piles():
    growth = in_a_fresh_interpreter("layout_hashes")
    assert growth["replay_hashed"] < SLACK, growth


def test_refused_actions_and_shortened_lines_are_freed():
    growth = in_a_fresh_interpreter("errors_and_shortening")
    assert growth["refused"] < SLACK and growth["shortened"] < SLACK, growth
