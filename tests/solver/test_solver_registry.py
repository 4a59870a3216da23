"""The solver registers itself by variant id (engine.solver.registry); the rules never import it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine import Game, GameCode
from engine.rules import RULE_SETS
from engine.solver import settings_for, state_for
from engine.solver.registry import SOLVERS

ROOT = Path(__file__).resolve().parents[2]


def test_every_rule_set_has_a_solver_and_every_solver_a_rule_set():
    assert set(SOLVERS) == {s.variant for s in RULE_SETS}


def test_each_rule_set_gets_its_own_state_and_settings():
    for s in RULE_SETS:
        position = Game.from_code(GameCode(s.game.letters, s.letter, 1)).position
        state = state_for(position)
        assert state.key() == SOLVERS[s.variant].state(position).key()
        assert settings_for(position) is SOLVERS[s.variant].search
    yukon = [SOLVERS[v].search for v in ("yukon-classic", "yukon-relaxed")]
    assert yukon[0] is not yukon[1] and SOLVERS["forty-thieves"].search not in yukon


def test_a_replay_imports_no_part_of_the_solver():
    probe = (
        "import sys, engine, verifier\n"
        "engine.Game.from_code('YU1-C-AAAAAAB').push_text('T3:5H>T5')\n"
        "print(sorted(m for m in sys.modules if m.startswith('engine.solver')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
