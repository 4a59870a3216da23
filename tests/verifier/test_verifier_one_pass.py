"""One replay a log (issue 46, item 3): :func:`verifier.play` gives the verdict, the effective
line fair play judges and the earned points in one pass, equal to what the separate passes
gave: the line made action by action afresh (the path the service took before), the line
by its definition, and the earned points replayed on their own; whatever the log's form
(text or JSON objects), and up to the first illegal action of a broken one. A copy of a
game (:meth:`engine.Game.copy`) plays on without touching the game, its undo stack included."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (the test extra)")
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game
from engine.layouts import Layouts, loop_erased
from tests.engine.test_engine_layouts import CODES, random_game, reference_line
from verifier import play, replay
from verifier.earned import earned, replayed


def line_afresh(code: str, actions: list[str]) -> list[int]:
    """The effective line as the service computed it in a pass of its own before: a game
    pushed one action at a time, its settled hash kept after each."""
    game = Game.from_code(code)
    layouts = Layouts(game.position, settle=True)
    stack, drawn = [layouts.hash(game.position)], [True]
    for text in actions:
        game.push_text(text) if text != "U" else game.undo()
        here = layouts.hash(game.position)
        if text == "U":
            if len(stack) > 1:
                stack.pop()
                drawn.pop()
            continue
        stack.append(here)
        drawn.append(text == "S")
    return [stack[step] for step in loop_erased(stack) if not drawn[step]]


def as_objects(actions: list[str]) -> list[object]:
    """The same log as JSON action objects (undo and draw as their objects, moves by piles)."""
    objects: list[object] = []
    for text in actions:
        if text == "U":
            objects.append({"action": "undo"})
        elif text == "S":
            objects.append({"action": "draw"})
        else:
            source, target = text.split(">")
            pile, _, card = source.partition(":")
            objects.append({"from": pile, "card": card, "to": target} if card else {"from": pile, "to": target})
    return objects


@settings(max_examples=60, deadline=None)
@given(code=st.sampled_from(CODES), seed=st.integers(0, 10_000), length=st.integers(0, 220))
def test_the_one_pass_gives_the_positions_and_points_of_the_separate_passes(code, seed, length):
    actions = random_game(code, seed, length)
    played = play(code, " ".join(actions), line=True)
    assert played.verdict == replay(code, " ".join(actions)) and played.verdict.legal
    assert played.positions == line_afresh(code, actions) == reference_line(code, actions)
    assert played.line is not None
    verdict = played.verdict
    assert played.line.earned == replayed(code, actions) == earned(code, actions, verdict.score, verdict.takebacks)
    assert str(played.game.position) == verdict.position
    by_objects = play(code, as_objects(actions), line=True)
    assert by_objects.verdict.canonical == verdict.canonical and by_objects.positions == played.positions


@settings(max_examples=30, deadline=None)
@given(code=st.sampled_from(CODES), seed=st.integers(0, 10_000), cut=st.integers(1, 150))
def test_a_broken_log_stops_where_the_verifier_stops_and_keeps_the_line_before(code, seed, cut):
    actions = random_game(code, seed, 160)
    cut = min(cut, len(actions))
    broken = [*actions[:cut], "T1:ZZ>T2", *actions[cut:]]
    played = play(code, broken, line=True)
    assert played.verdict == replay(code, broken)
    assert played.verdict.error is not None and played.verdict.error.index == cut
    assert played.positions == reference_line(code, actions[:cut])


def test_the_line_is_kept_only_when_asked_for():
    played = play(CODES[0], "S")
    assert played.line is None
    with pytest.raises(ValueError, match="line=True"):
        played.positions  # noqa: B018 (the property raises)


def test_a_copy_plays_on_and_undoes_into_the_log_without_touching_the_game():
    for code in CODES:
        for seed in range(5):
            actions = random_game(code, seed, 90)
            game = play(code, actions).game
            before, depth = str(game.position), game.stack.size
            copy = game.copy()
            undone = [copy.undo() for _ in range(depth)]
            assert len(undone) == depth and str(game.position) == before and game.stack.size == depth
            # undoing the copy as deep as it goes reaches the position the log had that many actions back
            expected = Game.from_code(code)
            kept: list[str] = []
            for text in actions:  # the actions still in effect, by replaying the log without the undone ones
                if text == "U":
                    kept.pop()
                else:
                    kept.append(text)
            for text in kept[:len(kept) - depth]:
                expected.push_text(text)
            assert copy.position.layout() == expected.position.layout()
            legal = game.legal_actions()
            if legal:
                action = random.Random(seed).choice(legal)
                other = game.copy()
                other.push(action)
                assert str(game.position) == before and other.actions == game.actions + 1
