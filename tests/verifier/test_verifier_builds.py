"""The compiled and the pure-Python engine give the same verdicts: a few thousand
generated lines (legal games, and the same games broken in every way a client can
break them) are verified by ``verifier batch`` once with each build, byte for byte."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.corpus import VARIANTS, play_random
from engine import DECK, GameCode
from engine.build import why_pure

ROOT = Path(__file__).resolve().parents[2]
GAMES_PER_VARIANT = 120
#: each legal game gives this many broken ones
BROKEN_PER_GAME = 8

pytestmark = pytest.mark.skipif(why_pure({}) is not None, reason=f"no compiled build to compare: {why_pure({})}")


def random_action(rng: random.Random) -> object:
    """An action a careless or hostile client might send: near misses, other piles, bad syntax, objects."""
    card = rng.choice(DECK)._text
    i, j, k = rng.randint(0, 11), rng.randint(1, 10), rng.randint(0, 9)
    return rng.choice([
        f"T{i}:{card}>T{j}", f"T{i}>F", f"T{i}:{card}>F{k}", f"W>T{j}", f"W:{card}>F", f"F{k}>T{j}",
        f"F{k}:{card}>T{j}", "S", "U", "U", f"T{i}>T{i}", f"F{k}>F{j}", f"t{j}:{card.lower()}>t{i}",
        "X", "T1:ZZ>T2", "T1>>T2", "", "S>W", "T01>T2", "W>F", f"T{j}:10♦>T{i}",
        {"from": f"T{j}", "to": "F"}, {"from": "W", "card": card, "to": f"T{j}"}, {"action": "draw"},
        {"action": "undo"}, {"action": "jump"}, {"from": "T1"}, [1, 2], None, 7,
    ])


def broken(moves: list[str], rng: random.Random) -> object:
    """``moves`` changed: an action put in, taken out, swapped, or re-spelled, or a claim added."""
    log: list[object] = list(moves)
    at = rng.randrange(len(log) + 1)
    how = rng.randrange(6)
    if how == 0:
        log.insert(at, random_action(rng))
    elif how == 1 and log:
        del log[min(at, len(log) - 1)]
    elif how == 2 and len(log) > 1:
        a, b = rng.sample(range(len(log)), 2)
        log[a], log[b] = log[b], log[a]
    elif how == 3:
        log[at:] = [random_action(rng) for _ in range(3)] + log[at:]
    elif how == 4:
        log += ["U"] * rng.randint(1, 120)
    else:
        return {"moves": " ".join(moves), "claimed": {"score": rng.randint(0, 300), "won": rng.random() < 0.5}}
    text_form = rng.random() < 0.5 and all(isinstance(item, str) and item for item in log)
    return {"moves": " ".join(map(str, log)) if text_form else log}


def corpus(seed: int = 25) -> list[str]:
    rng = random.Random(seed)
    lines: list[str] = []
    for game_letter, rules_letter in VARIANTS.values():
        for _ in range(GAMES_PER_VARIANT):
            code = str(GameCode(game_letter, rules_letter, rng.randrange(32**7)))
            moves = play_random(GameCode.from_text(code), rng, max_actions=rng.choice([20, 60, 200]))
            lines.append(json.dumps({"code": code, "moves": " ".join(moves)}))
            for _ in range(BROKEN_PER_GAME):
                lines.append(json.dumps({"code": code, **broken(moves, rng)}))
    # lines a client gets wrong: a code or log of the wrong JSON type reaches the engine's typed functions
    lines += ['{"code": "YU1-C-AAAAAA1", "moves": ""}', "not json", '{"code": "FT1-N-AAAAAAB"}',
              '{"code": 5, "moves": ""}', '{"code": ["YU1-C-AAAAAAB"], "moves": "T1>F"}', '{"code": null, "moves": []}',
              '{"code": "YU1-C-AAAAAAB", "moves": 7}', '{"code": "YU1-C-AAAAAAB", "moves": [{"from": 1, "to": "F"}]}']
    return lines


def environment(pure: bool) -> dict[str, str]:
    """This process's environment, asking for pure Python or not."""
    env = {k: v for k, v in os.environ.items() if k != "SOLITAIRE_PURE"}
    return env | {"SOLITAIRE_PURE": "1"} if pure else env


def batch(path: Path, pure: bool) -> tuple[int, str]:
    env = environment(pure)
    done = subprocess.run([sys.executable, "-m", "verifier", "batch", str(path), "--workers", "1"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    version = subprocess.run([sys.executable, "-m", "verifier", "--version"], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=True).stdout
    assert ("pure Python" in version) == pure, version
    return done.returncode, done.stdout


def test_both_builds_give_identical_verdicts_on_a_large_generated_corpus(tmp_path):
    lines = corpus()
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    compiled, pure = batch(path, pure=False), batch(path, pure=True)
    assert compiled == pure
    verdicts = [json.loads(line) for line in compiled[1].splitlines()]
    assert len(verdicts) == len(lines) >= 3000
    # the corpus reaches far: legal and won games, and refusals of many kinds
    rules = Counter(v["error"]["rule"] for v in verdicts if v.get("error"))
    assert sum(v["legal"] for v in verdicts) > 600 and sum(v.get("won", False) for v in verdicts) > 0
    assert sum(rules.values()) > 1500 and len(rules) >= 15, rules
    assert sum("input_error" in v for v in verdicts) >= 6


@pytest.mark.parametrize("pure", [False, True])
def test_the_engine_command_expects_the_build_the_environment_asks_for(pure):
    """``verifier engine --expect auto`` (the Docker image's build check) passes for the build
    ``SOLITAIRE_PURE`` asks for, and ``--expect`` of the other one fails."""
    env = environment(pure)

    def engine(expect: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "verifier", "engine", "--expect", expect], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)

    auto = engine("auto")
    assert auto.returncode == 0 and auto.stdout.startswith("engine: pure Python" if pure else "engine: compiled")
    other = engine("compiled" if pure else "pure")
    assert other.returncode == 1 and "verifier: the engine is" in other.stderr
