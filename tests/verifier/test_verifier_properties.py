"""Properties of replays over random logs, with hypothesis: replays are deterministic,
the canonical log and the JSON form give the same verdict, and a replay agrees with
playing the same actions on a ``Game``."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (the test extra)")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import UNDO, Game, GameCode, Move, parse_action
from engine.codes import MAX_DEAL
from verifier import replay

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

codes = st.builds(
    lambda game_rules, number: GameCode(*game_rules, number),
    st.sampled_from([("YU", "C"), ("YU", "R"), ("FT", "N")]),
    st.integers(0, MAX_DEAL),
)
# actions written the way a client might: short forms, lower case, any card spelling
noise = st.sampled_from(["U", "S", "T1>T2", "T3>F", "W>T1", "F1>T1", "T1:10♦>T4", "t2>t9", "T12>T1"])


def _top_of_source(game: Game, move: Move):
    pos = game.position
    pile = (
        pos.waste
        if move.source == "W"
        else (pos.columns if move.source == "T" else pos.foundations)[move.source_index - 1]
    )
    return pile[-1]


@st.composite
def played_logs(draw):
    """A code and a log of random legal actions (undos included), written in random
    short or long forms and cases, sometimes followed by an action that may be illegal."""
    code = draw(codes)
    game = Game.from_code(code)
    written = []
    for _ in range(draw(st.integers(0, 60))):
        choices = game.legal_actions() + ([UNDO] if game.can_undo else [])
        if not choices:
            break
        action = choices[draw(st.integers(0, len(choices) - 1))]
        text = str(action)
        if isinstance(action, Move):
            short = action
            if action.card is _top_of_source(game, action) and draw(st.booleans()):
                short = Move(short.source, short.source_index, short.target, short.target_index)  # top card: default
            if action.target == "F" and game.rules.game == "YU" and draw(st.booleans()):
                short = Move(short.source, short.source_index, short.target, None, short.card)  # one slot per suit
            text = str(short)
        assert game.push(parse_action(text)) == action
        written.append(text.lower() if draw(st.booleans()) else text)
    if draw(st.booleans()):
        written.append(draw(noise))
    return code, written


@SETTINGS
@given(played_logs())
def test_replaying_twice_gives_identical_results(case):
    code, written = case
    first = replay(code, " ".join(written)).to_json()
    second = replay(code, " ".join(written)).to_json()
    assert first == second


@SETTINGS
@given(played_logs(), st.sampled_from([" ", "\n", ",", ";", " , ", "\t;\n"]))
def test_text_forms_and_the_json_form_give_the_same_verdict(case, separator):
    code, written = case
    verdict = replay(code, " ".join(written)).to_json()
    assert replay(code, separator.join(written)).to_json() == verdict
    assert replay(code, "# a comment\n" + separator.join(written) + "\n# the end").to_json() == verdict
    assert replay(code, written).to_json() == verdict  # a JSON array of text actions
    objects = [parse_action(text).to_json() for text in written]
    as_objects = replay(code, objects).to_json()
    if as_objects["error"]:
        assert as_objects["error"]["action"].startswith("{")
        as_objects["error"]["action"] = verdict["error"]["action"]
    assert as_objects == verdict


@SETTINGS
@given(played_logs())
def test_the_canonical_log_replays_to_the_same_verdict(case):
    code, written = case
    verdict = replay(code, " ".join(written))
    again = replay(code, verdict.canonical_text)
    assert again.legal
    assert again.canonical == verdict.canonical
    assert again.position == verdict.position
    assert (
        again.score,
        again.moves,
        again.actions,
        again.undos,
        again.takebacks,
        again.won,
        again.foundation_cards,
    ) == (
        verdict.score,
        verdict.moves,
        verdict.actions,
        verdict.undos,
        verdict.takebacks,
        verdict.won,
        verdict.foundation_cards,
    )
    if verdict.legal:
        assert again.to_json() == verdict.to_json()


@SETTINGS
@given(played_logs())
def test_a_replay_agrees_with_the_game(case):
    code, written = case
    verdict = replay(code, written)
    game = Game.from_code(code)
    for text in written[: verdict.error.index if verdict.error else len(written)]:
        game.push(parse_action(text))
    assert verdict.position == str(game.position)
    assert (verdict.score, verdict.moves, verdict.takebacks, verdict.won) == (
        game.position.score,
        game.position.moves,
        game.position.takebacks,
        game.is_won,
    )
    if verdict.error:
        assert verdict.error.position == str(game.position)
    claimed = {"score": game.position.score, "moves": game.position.moves, "won": game.is_won}
    assert replay(code, written, claimed).claims_match is True
    claimed["score"] += 5
    assert replay(code, written, claimed).claims_match is False
