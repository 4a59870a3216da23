"""The engine frees what it makes, in either build: the solver's keys and the layout hashes'
pile bytes are built by joining bytes, since a compiled ``bytes + bytes`` (mypyc 1.20) keeps a
reference to its left operand and so never frees it (the worker tier grew by 100 MB a minute).
Each loop below runs thousands of times; the objects alive afterwards are counted."""

from __future__ import annotations

import gc
import sys

from engine import Game
from engine.layouts import Layouts
from engine.solver.forty import FortyState
from engine.solver.yukon import YukonState
from tests.engine.test_engine_layouts import random_game

LOOPS = 5000
#: a few blocks come and go with the interpreter's own caches
SLACK = 200


def grown(step, loops: int = LOOPS) -> int:
    step()
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(loops):
        step()
    gc.collect()
    return sys.getallocatedblocks() - before


def test_the_solvers_keys_are_freed():
    forty = FortyState(Game.from_code("FT1-N-AAAAABC").position)
    yukon = YukonState(Game.from_code("YU1-C-AAAAABC").position, relaxed=False)
    for step in (forty.key, forty.encode, forty.estimate, yukon.key, yukon.encode, yukon.moves):
        assert grown(step) < SLACK, step


def test_the_layout_hashes_free_their_piles():
    code = "YU1-C-AAAAABC"
    actions = random_game(code, 7, 120)

    def replay_hashed() -> None:
        game = Game.from_code(code)
        layouts = Layouts(game.position)
        for text in actions:
            game.undo() if text == "U" else game.push_text(text)
            layouts.hash(game.position)

    assert grown(replay_hashed, 200) < SLACK
