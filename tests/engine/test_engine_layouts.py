"""Layout hashes and the effective line (``engine.layouts``): the hash a game keeps step by
step is the hash of the position made afresh, whatever the actions (undos, flips, draws,
group moves); a settled hash is the layout the engine reaches by playing every foundation
move it can; and the values themselves are pinned: records store them, so a faster way of
computing them must give the same numbers."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine import Game, Move
from engine.layouts import Layouts, effective_line, loop_erased, position_hash, settled_hash

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


def settled_text(game: Game) -> str:
    """The position's columns, stock and waste once the engine has played every move to a
    foundation it can (the settled layout, by the engine's own rules)."""
    game = Game.from_position(str(game.position))
    while True:
        home = [a for a in game.legal_actions() if isinstance(a, Move) and a.target == "F"]
        if not home:
            fields = str(game.position).split(" ")
            return " ".join(fields[:2] + fields[3:5])
        game.push(home[0])


def reference_line(code: str, actions: list[str]) -> list[int]:
    """The effective line by its definition: the positions on the undo stack when the log
    ends, each settled afresh, loops cut out, then those a draw reached left out."""
    game, stack = Game.from_code(code), [(settled_hash(Game.from_code(code).position), True)]
    for text in actions:
        if text == "U":
            game.undo()
            stack.pop()
            continue
        game.push_text(text)
        stack.append((settled_hash(game.position), text == "S"))
    path: list[tuple[int, bool]] = []
    for here, drawn in stack:
        seen = [position for position, _ in path]
        path = path[:seen.index(here) + 1] if here in seen else [*path, (here, drawn)]
    return [position for position, drawn in path if not drawn]


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
def test_the_settled_hash_kept_step_by_step_is_the_settled_layout_made_afresh(code):
    """Kept step by step or made afresh, a settled hash is the same; two positions share one
    exactly when the engine, playing every foundation move it can, reaches the same columns,
    stock and waste."""
    texts: dict[int, str] = {}
    for seed in range(3):
        game = Game.from_code(code)
        layouts = Layouts(game.position, settle=True)
        for text in random_game(code, seed, 120):
            game.undo() if text == "U" else game.push_text(text)
            here = layouts.hash(game.position)
            assert here == settled_hash(game.position), (code, seed, text)
            assert texts.setdefault(here, settled_text(game)) == settled_text(game)
    assert len(set(texts.values())) == len(texts) > 30


@pytest.mark.parametrize("code", CODES)
def test_a_move_to_a_foundation_played_later_changes_no_settled_position(code):
    """A move to a foundation (or its undo) keeps the settled position."""
    for seed in range(3):
        game = Game.from_code(code)
        for text in random_game(code, seed, 120):
            if text == "U":
                game.undo()
                continue
            before = settled_hash(game.position)
            action = game.push_text(text)
            if isinstance(action, Move) and action.target == "F":
                assert settled_hash(game.position) == before


@pytest.mark.parametrize("code", CODES)
def test_the_effective_line_is_its_definition(code):
    for seed in range(4):
        actions = random_game(code, seed)
        assert effective_line(code, actions) == reference_line(code, actions)


def test_loops_are_cut_where_a_position_comes_again():
    assert loop_erased([7, 1, 2, 1, 3, 3, 4, 2, 5]) == [0, 1, 4, 6, 7, 8]
    assert loop_erased([7, 1, 7]) == [0]


def test_the_values_are_pinned():
    lines = [effective_line(code, random_game(code, seed)) for code in CODES for seed in range(3)]
    digest = hashlib.sha256(repr(lines).encode()).hexdigest()
    assert sum(map(len, lines)) > 500
    # (settled positions since migration 0018, which recomputed every stored line)
    assert digest == "61631ca7d84012606d72e7f80751f52ffbc7080efdb2f54f1346d11104e9607b"
