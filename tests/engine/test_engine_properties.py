"""Properties of random legal play, with hypothesis: conservation of cards, exact undo,
canonical round trips, position text round trips, and push agreeing with legal_actions()."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (the test extra)")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    DECK,
    UNDO,
    Game,
    GameCode,
    IllegalActionError,
    InvalidActionError,
    Move,
    Position,
    format_log,
    parse_action,
    parse_log,
)
from engine.actions import json_key
from engine.codes import MAX_DEAL
from engine.rules import RULE_SETS, Rules
from tests.engine.engine_helpers import build_position, card_counts, is_canonical, refused

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

codes = st.builds(
    lambda game_rules, number: GameCode(*game_rules, number),
    st.sampled_from([(s.game.letters, s.letter) for s in RULE_SETS]),
    st.integers(0, MAX_DEAL),
)


def set_moves(text: str, moves: int) -> str:
    fields = text.split(" ")
    fields[6] = str(moves)
    return " ".join(fields)


def choose(data, game: Game):
    """A random legal action, or undo when there is something to undo."""
    choices = game.legal_actions() + ([UNDO] if game.can_undo else [])
    return choices[data.draw(st.integers(0, len(choices) - 1), label="choice")] if choices else None


@SETTINGS
@given(code=codes, data=st.data(), steps=st.integers(1, 80))
def test_random_play_keeps_every_card_and_undo_is_exact(code, data, steps):
    game = Game.from_code(code)
    decks = game.rules.decks
    history: list[str] = []  # position texts before each action still in effect
    canonical: list[str] = []
    for _ in range(steps):
        action = choose(data, game)
        if action is None:
            break
        before = str(game.position)
        moves_before = game.position.moves
        done = game.push(action)
        canonical.append(str(done))
        if action is UNDO:
            # cards, face-up state, score and take-backs return; the move counter stays
            assert str(game.position) == set_moves(history.pop(), moves_before)
        else:
            history.append(before)
            assert game.position.moves == moves_before + 1
            assert parse_action(str(done)) == done
            if isinstance(done, Move):
                assert is_canonical(done)
        counts = card_counts(game.position)
        assert all(counts[card] == decks for card in DECK)
        assert sum(counts.values()) == 52 * decks
        assert game.position.score >= 0
        text = str(game.position)
        assert str(Position.from_text(text)) == text
        assert Position.from_text(text) == game.position

    # the canonical log round-trips and replays to the same position
    log = format_log(parse_log(" ".join(canonical)))
    assert log == " ".join(canonical)
    again = Game.from_code(code)
    assert [str(again.push(a)) for a in parse_log(log)] == canonical
    assert str(again.position) == str(game.position)
    assert (again.actions, again.undos) == (game.actions, game.undos)


def _random_move(data, game: Game) -> Move:
    """A move that is syntactically valid but often breaks a rule."""
    rules, pos = game.rules, game.position
    source = data.draw(st.sampled_from("TTTWF"), label="source")
    if source == "T":
        index = data.draw(st.integers(1, rules.n_columns + 1), label="column")
        pile = pos.columns[index - 1] if index <= rules.n_columns else []
    elif source == "W":
        index, pile = 0, pos.waste
    else:
        index = data.draw(st.integers(1, rules.n_foundations + 1), label="foundation")
        pile = pos.foundations[index - 1] if index <= rules.n_foundations else []
    if pile and data.draw(st.booleans(), label="card from the pile"):
        card = data.draw(st.sampled_from(pile), label="card")
    else:
        card = data.draw(st.none() | st.sampled_from(DECK), label="any card")
    if data.draw(st.booleans(), label="to a column"):
        target, target_index = "T", data.draw(st.integers(1, rules.n_columns + 1), label="target column")
    else:
        target = "F"
        target_index = data.draw(st.none() | st.integers(1, rules.n_foundations + 1), label="target foundation")
    return Move(source, index, target, target_index, card)


def _denotes(move: Move, legal: Move, pos: Position) -> bool:
    """Whether ``legal`` (canonical) is one of the actions ``move`` may stand for."""
    if (move.source, move.source_index, move.target) != (legal.source, legal.source_index, legal.target):
        return False
    if move.target_index is not None and move.target_index != legal.target_index:
        return False
    return move.card is None and legal.card is _top(move, pos) or move.card is legal.card


def _top(move: Move, pos: Position):
    if move.source == "W":
        return pos.waste[-1] if pos.waste else None
    piles = pos.columns if move.source == "T" else pos.foundations
    pile = piles[move.source_index - 1] if move.source_index <= len(piles) else []
    return pile[-1] if pile else None


@SETTINGS
@given(code=codes, data=st.data(), steps=st.integers(1, 40))
def test_push_agrees_with_legal_actions(code, data, steps):
    game = Game.from_code(code)
    for _ in range(steps):
        legal = [a for a in game.legal_actions() if isinstance(a, Move)]
        move = _random_move(data, game)
        matching = [a for a in legal if _denotes(move, a, game.position)]
        before = str(game.position)
        counters = (game.actions, game.undos)
        try:
            done = game.push(move)
        except IllegalActionError as exc:
            assert not matching, f"{move} was refused ({exc.rule}) but {matching[0]} is legal"
            assert str(game.position) == before
            assert (game.actions, game.undos) == counters
            assert exc.rule and exc.message
        else:
            assert done in matching
            if move.target_index is None and move.target == "F":
                # the app's choice: the leftmost slot that accepts the card
                assert done.target_index == min(a.target_index for a in matching)
        action = choose(data, game)
        if action is None:
            break
        game.push(action)


@SETTINGS
@given(code=codes, data=st.data(), steps=st.integers(1, 60), bad=st.sampled_from([None, "T1>T1", "X9", "U", "S"]))
def test_push_items_is_push_on_each_item_and_stops_at_the_first_refused(code, data, steps, bad):
    """``Game.push_items`` (the replay's one-loop fast path) agrees with ``Game.push`` item by item:
    the same canonical texts, position and counters, and the same first refused item."""
    one_by_one = Game.from_code(code)
    items: list = []
    for _ in range(steps):
        action = choose(data, one_by_one)
        if action is None:
            break
        done = one_by_one.push(action)
        items.append(str(done) if data.draw(st.booleans(), label="text") else done.to_json())
    if bad is not None:
        items.append(bad)
        try:
            one_by_one.push(parse_action(bad))
        except (IllegalActionError, InvalidActionError):
            pass
        else:
            bad = None  # legal here after all
    fast = Game.from_code(code)
    canonical: list[str] = []
    if bad is None:
        fast.push_items(items, canonical)
    else:
        with pytest.raises((IllegalActionError, InvalidActionError)):
            fast.push_items(items, canonical)
        assert len(canonical) == len(items) - 1  # the refused item's index
    assert str(fast.position) == str(one_by_one.position)
    assert (fast.actions, fast.undos, fast.is_won, fast.can_undo) == (
        one_by_one.actions,
        one_by_one.undos,
        one_by_one.is_won,
        one_by_one.can_undo,
    )


_CARD_TEXTS = [str(card) for card in DECK]
_pile_numbers = st.integers(0, 11)
random_move_texts = st.builds(
    "{}:{}>{}".format,
    st.one_of(st.builds("T{}".format, _pile_numbers), st.just("W"), st.builds("F{}".format, _pile_numbers)),
    st.sampled_from(_CARD_TEXTS),
    st.one_of(st.just("F"), st.builds("T{}".format, _pile_numbers), st.builds("F{}".format, _pile_numbers)),
)


def plausible_move_texts(pos: Position) -> st.SearchStrategy[str]:
    """Moves of a face-up card (Yukon: of the group on it) or a foundation's top card, onto any
    pile: most break a build rule, some do not."""
    sources = [(f"T{i}", column[pos.down[i - 1] :]) for i, column in enumerate(pos.columns, 1) if column]
    if pos.waste:
        sources.append(("W", pos.waste[-1:]))
    sources += [(f"F{i}", foundation[-1:]) for i, foundation in enumerate(pos.foundations, 1) if foundation]
    if not sources:
        return random_move_texts
    targets = st.one_of(
        st.just("F"),
        st.builds("T{}".format, st.integers(1, len(pos.columns))),
        st.builds("F{}".format, st.integers(1, len(pos.foundations))),
    )
    return st.sampled_from(sources).flatmap(
        lambda source: st.builds(
            lambda card, target: f"{source[0]}:{card}>{target}", st.sampled_from(source[1]), targets
        )
    )


@settings(SETTINGS, max_examples=200)
@given(code=codes, data=st.data(), steps=st.integers(1, 120))
def test_compiled_actions_are_checked_like_the_general_path(code, data, steps):
    """Every text (or action object) of a log compiled before the replay (``Rules.compile``,
    as after earlier logs), so that ``push_items`` takes its fast path for each: the result is
    ``Game.push`` item by item, down to the first refused item and the rule it breaks,
    also for random named moves that may break any rule (or no rule) where they come."""
    one_by_one = Game.from_code(code)
    items: list[str] = []
    refused = None
    for _ in range(steps):
        if data.draw(st.integers(0, 9), label="random") == 0:
            text = data.draw(st.one_of(random_move_texts, plausible_move_texts(one_by_one.position)), label="move")
        else:
            action = choose(data, one_by_one)
            if action is None:
                break
            text = str(action)
        items.append(text)
        try:
            one_by_one.push(parse_action(text))
        except (IllegalActionError, InvalidActionError) as error:
            refused = error
            break
    rules = one_by_one.rules
    as_objects = data.draw(st.booleans(), label="action objects")  # the log's JSON form: the same, keyed otherwise
    for index, text in enumerate(items):
        try:
            action = parse_action(text)
        except InvalidActionError:
            continue  # not an action at all: nothing to compile
        key = json_key(action.to_json()) if as_objects else text
        rules.compile(key, action)
        assert key in rules._ops
        if as_objects:
            items[index] = action.to_json()  # type: ignore[call-overload]
    fast = Game.from_code(code)
    canonical: list[str] = []
    if refused is None:
        fast.push_items(items, canonical)
    else:
        with pytest.raises(type(refused)) as raised:
            fast.push_items(items, canonical)
        assert len(canonical) == len(items) - 1
        assert str(raised.value) == str(refused)
        assert getattr(raised.value, "key", None) == getattr(refused, "key", None)
    replayed = Game.from_code(code)
    for text in canonical:
        replayed.push(parse_action(text))  # each canonical text is what push gave for the item
    assert str(fast.position) == str(one_by_one.position) == str(replayed.position)
    assert (fast.actions, fast.undos, fast.is_won, fast.can_undo) == (
        one_by_one.actions,
        one_by_one.undos,
        one_by_one.is_won,
        one_by_one.can_undo,
    )


TWENTY_ONE = "QC 2H 3S 4H 5S 6H 7S 8H 9S TH JS QH KS AH 2S 3H 4S 5H 6S 7H 8S"


@pytest.mark.parametrize(
    "tag, columns, kw, text, rule",
    [
        ("YU1-C", [TWENTY_ONE, "KD", "", None, "", "", ""], {}, "T1:QC>T2", "group.max-20"),
        ("YU1-C", ["KD", "QC", "", None, "", "", ""], {}, "T2:QC>T3", "empty-column.king-only"),
        ("YU1-R", ["KD", "jc QC", "", None, "", "", ""], {}, "T2:JC>T1", "card.face-down"),
        ("YU1-C", ["KD", "QC", "", None, "", "", ""], {}, "T2:QC>F", "foundation.build"),
        ("FT1-N", ["KD", "QD", None, "", "", "", "", "", "", ""], {"waste": "JD 5C"}, "W:JD>T2", "card.mismatch"),
        ("FT1-N", ["KD", "QD", None, "", "", "", "", "", "", ""], {"waste": "JD 5C"}, "W:5C>F", "foundation.build"),
        ("FT1-N", ["KD", "QD 5S", None, "", "", "", "", "", "", ""], {}, "T2:QD>T1", "move.single-card"),
        ("YU1-C", ["KD", "QC", "", None, "", "", ""], {"foundations": "-2--"}, "F2:2H>T1", "tableau.build"),
        ("YU1-R", ["KD", "QC", "", None, "", "", ""], {"foundations": "-2--"}, "F2:2H>T3", "empty-column.king-only"),
        (
            "FT1-N",
            ["KD", "QD 5S", None, "", "", "", "", "", "", ""],
            {"foundations": "2-------"},
            "F1:2S>T1",
            "tableau.same-suit",
        ),
    ],
)
def test_compiled_actions_refused_with_the_rule_they_break(tag, columns, kw, text, rule):
    """Rules no random game reaches easily, on the fast path of ``push_items`` (the
    text compiled before): refused with the same rule as ``Game.push``, nothing changed."""
    start = build_position(tag, columns, **kw)
    expected = refused(Game.from_position(start), text)
    assert expected.rule == rule
    game = Game.from_position(start)
    game.rules.compile(text, parse_action(text))
    with pytest.raises(IllegalActionError) as raised:
        game.push_items([text], [])
    assert (raised.value.rule, str(raised.value)) == (expected.rule, str(expected))
    assert str(game.position) == start


@pytest.mark.pure_only
def test_the_compiled_actions_stay_bounded_and_keep_the_texts_in_use(monkeypatch):
    """Texts without end (a flood of distinct spellings) never grow the table past its cap:
    when full it starts again, and the texts of the next logs are compiled anew."""
    game = Game.from_code("FT1-N-AAAAAAB")
    rules = game.rules
    monkeypatch.setattr(type(rules), "OPS_CAP", 25)
    monkeypatch.setattr(rules, "_ops", {})
    spellings = [f"{' ' * i}S" for i in range(60)]  # (the stock has 64 cards)
    game.push_items(spellings, [])
    assert 0 < len(rules._ops) <= 25
    log = ["S", "U", "S"]
    for _ in range(2):
        replay = Game.from_code("FT1-N-AAAAAAB")
        canonical: list[str] = []
        replay.push_items(log, canonical)
        assert canonical == log and all(text in rules._ops for text in log)


@pytest.mark.parametrize("form", ["text", "objects"])
def test_a_log_seen_before_takes_no_general_path(monkeypatch, form):
    """The second replay of a log, in text form or as action objects, checks and applies
    every action from its compiled op: nothing is parsed or compiled again."""
    game = Game.from_code("FT1-N-AAAAAAB")
    log = []
    for _ in range(40):
        action = ([a for a in game.legal_actions() if isinstance(a, Move)] or game.legal_actions())[0]
        log.append(str(game.push(action)))
    log.append("U")
    items = log if form == "text" else [parse_action(text).to_json() for text in log]
    Game.from_code("FT1-N-AAAAAAB").push_items(items, [])  # compiles what it has not seen
    general: list = []
    for name in ("compile", "compile_text"):  # the only work besides the checks: compiling an item seen anew
        real = getattr(Rules, name)
        monkeypatch.setattr(Rules, name, lambda self, *args, real=real: general.append(args) or real(self, *args))
    again, canonical = Game.from_code("FT1-N-AAAAAAB"), []
    again.push_items(items, canonical)
    assert general == [] and canonical == log
