"""Layout hashes and the effective line (``engine.layouts``): the hash a game keeps step by
step is the hash of the position made afresh, whatever the actions (undos, flips, draws,
group moves), and the values themselves are pinned: records store them, so a faster way of
computing them must give the same numbers."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine import Game
from engine.layouts import Layouts, effective_line, position_hash

CODES = ["YU1-C-AAAAAAB", "YU1-C-3WVS57R", "YU1-R-AAAAAAC", "YU1-R-BCDEFGH", "FT1-N-AAAAAAB", "FT1-N-QWERTYU"]


def random_game(code: str, seed: int, length: int = 160) -> list[str]:
    """Canonical texts of a random legal game with undos (about one action in six)."""
    rng, game, played = random.Random(seed), Game.from_code(code), []
    while len(played) < length and not game.won:
        if game.can_undo and rng.random() < 0.17:
            game.undo()
            played.append("U")
            continue
        actions = game.legal_actions()
        if not actions:
            break
        played.append(str(game.push(rng.choice(actions))))
    return played


def reference_line(code: str, actions: list[str]) -> list[int]:
    """The effective line by its definition, each position hashed afresh."""
    game, path = Game.from_code(code), [position_hash(Game.from_code(code).position)]
    for text in actions:
        if text == "U":
            game.undo()
            if len(path) > 1:  # (the deal's start never leaves)
                path.pop()
            continue
        game.push_text(text)
        here = position_hash(game.position)
        path = path[:path.index(here) + 1] if here in path else [*path, here]
    return path[1:]


@pytest.mark.parametrize("code", CODES)
def test_the_hash_kept_step_by_step_is_the_hash_made_afresh(code):
    for seed in range(4):
        game = Game.from_code(code)
        layouts = Layouts(game.position)
        assert layouts.hash(game.position) == position_hash(game.position)
        for text in random_game(code, seed):
            if text == "U":
                game.undo()
            else:
                game.push_text(text)
            assert layouts.hash(game.position) == position_hash(game.position), (code, seed, text)


@pytest.mark.parametrize("code", CODES)
def test_the_effective_line_is_its_definition(code):
    for seed in range(4):
        actions = random_game(code, seed)
        assert effective_line(code, actions) == reference_line(code, actions)


def test_the_values_are_pinned():
    lines = [effective_line(code, random_game(code, seed)) for code in CODES for seed in range(3)]
    digest = hashlib.sha256(repr(lines).encode()).hexdigest()
    assert sum(map(len, lines)) > 500
    assert digest == "cb84c873b8cca0059030078a40403b403550a748484a690af7338dd0aa23a8b6"
