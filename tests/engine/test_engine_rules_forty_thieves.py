"""Forty Thieves rules: every rule with a passing and a failing case."""

from __future__ import annotations

import pytest

from engine import Game, Move
from tests.engine.engine_helpers import build_position, column, is_canonical, played, refused


def forty(columns: list[str | None], **kw) -> Game:
    return Game.from_position(build_position("FT1-N", columns, **kw))


def waste(game: Game) -> str:
    return " ".join(map(str, game.position.waste))


#          T1       T2    T3    T4    T5    T6  T7    T8       T9    T10
TABLEAU = ["9H 5S", "6S", "6H", "7S", "AS", "", "KD", "5S 4S", "2D", "3D"]


# -- the tableau -------------------------------------------------------------------


def test_a_card_goes_onto_the_same_suit_one_rank_higher():
    game = forty(TABLEAU)
    assert played(game, "T1>T2") == "T1:5S>T2"
    assert column(game, 2) == "6S 5S"
    assert played(game, "T9:2D>T10") == "T9:2D>T10"
    assert game.position.score == 0
    assert game.position.moves == 2


def test_the_suit_must_be_the_same():
    error = refused(forty(TABLEAU), "T1:5S>T3")
    assert error.rule == "tableau.same-suit"
    assert "same suit" in error.message


def test_the_rank_must_be_one_higher():
    game = forty(TABLEAU)
    assert refused(game, "T1:5S>T4").rule == "tableau.build"  # 5S onto 7S
    assert refused(game, "T2:6S>T1").rule == "tableau.build"  # 6S onto 5S
    assert refused(game, "T10:3D>T9").rule == "tableau.build"  # up, not down


@pytest.mark.parametrize("text", ["T1:5S>T5", "T9:2D>T5", "T7:KD>T5"])
def test_nothing_goes_onto_an_ace(text):
    error = refused(forty(TABLEAU), text)
    assert error.rule == "tableau.nothing-on-ace"
    assert "ace" in error.message


def test_only_one_card_moves_even_in_sequence():
    game = forty(TABLEAU)
    error = refused(game, "T8:5S>T6")  # 5S 4S are in sequence
    assert error.rule == "move.single-card"
    assert refused(game, "T1:9H>T6").rule == "move.single-card"
    assert played(game, "T8>T6") == "T8:4S>T6"
    assert not [
        a
        for a in game.legal_actions()
        if isinstance(a, Move) and a.source == "T" and a.card is not game.position.columns[a.source_index - 1][-1]
    ]


def test_the_named_card_must_be_the_top_card():
    game = forty(TABLEAU)
    error = refused(game, "T1:KC>T6")
    assert error.rule == "card.mismatch"
    assert "5S" in error.message


@pytest.mark.parametrize("text", ["T1>T6", "T7:KD>T6", "T5:AS>T6"])
def test_an_empty_column_takes_any_card(text):
    game = forty(TABLEAU)
    played(game, text)
    assert len(game.position.columns[5]) == 1
    assert game.position.score == 0


def test_a_card_never_goes_onto_its_own_column():
    game = forty(TABLEAU)
    assert refused(game, "T1>T1").rule == "move.same-column"
    assert refused(game, "T6>T6").rule == "source.empty"


@pytest.mark.parametrize(
    "text, rule",
    [
        ("T11>T1", "pile.no-such-column"),
        ("T1>T11", "pile.no-such-column"),
        ("T1>F9", "pile.no-such-foundation"),
        ("F9>T1", "pile.no-such-foundation"),
    ],
)
def test_pile_numbers_out_of_range(text, rule):
    error = refused(forty(TABLEAU), text)
    assert error.rule == rule
    assert "T10" in error.message or "F8" in error.message


# -- stock and waste ---------------------------------------------------------------


def test_draw_turns_the_next_stock_card_onto_the_waste():
    game = forty(["", "", "", "", "", "", "", "", "", None], stock="6D KD")
    assert played(game, "S") == "S"
    assert waste(game) == "6D"
    assert [str(c) for c in game.position.stock] == ["KD"]
    assert played(game, "S>W") == "S"
    assert waste(game) == "6D KD"
    assert game.position.stock == []
    assert game.position.score == 0
    assert game.position.moves == 2


def test_drawing_from_an_empty_stock_is_refused():
    game = forty(["", "", "", "", "", "", "", "", "", None], stock="6D")
    played(game, "S")
    error = refused(game, "S")
    assert error.rule == "stock.empty"
    assert "once" in error.message  # no redeal
    assert all(str(a) != "S" for a in game.legal_actions())


def test_the_deal_draws_the_spec_order():
    game = Game.from_code("FT1-N-AAAAAAB")
    drawn = []
    for _ in range(64):
        played(game, "S")
        drawn.append(str(game.position.waste[-1]))
    assert drawn[:5] == ["6D", "KD", "3D", "KS", "JC"]
    assert drawn[-3:] == ["AS", "4D", "7C"]
    assert refused(game, "S").rule == "stock.empty"


WASTE = ["", "6D", "7C", "", "", "", "", "", "", None]


def test_only_the_top_card_of_the_waste_plays():
    game = forty(WASTE, stock="", waste="5C 6C")
    error = refused(game, "W:5C>T1")
    assert error.rule == "card.mismatch"
    assert "6C" in error.message
    assert played(game, "W>T3") == "W:6C>T3"
    assert played(game, "W:5C>T3") == "W:5C>T3"


def test_a_waste_card_onto_a_column_scores_5():
    game = forty(WASTE, stock="", waste="5C 6C", score=7)
    played(game, "W>T1")
    assert game.position.score == 12
    played(game, "W:5C>T1")
    assert game.position.score == 17
    assert refused(game, "W>T1").rule == "source.empty"


def test_a_waste_card_follows_the_tableau_rule():
    game = forty(WASTE, stock="", waste="5C 6C")
    assert refused(game, "W:6C>T2").rule == "tableau.same-suit"


def test_a_waste_card_onto_a_foundation_scores_10():
    game = forty(WASTE, stock="", waste="2S AS")
    assert played(game, "W>F") == "W:AS>F1"
    assert played(game, "W:2S>F") == "W:2S>F1"
    assert game.position.score == 20
    assert game.position.waste == []


# -- foundations -------------------------------------------------------------------


def test_foundations_fixed_suits_ace_first():
    game = forty(["AS", "2H", "AH", "", "", "", "", "", "", None])
    assert refused(game, "T1:AS>F2").rule == "foundation.suit"
    assert refused(game, "T1:AS>F6").rule == "foundation.suit"
    assert refused(game, "T2:2H>F2").rule == "foundation.build"
    assert refused(game, "T2>F").rule == "foundation.build"
    assert played(game, "T1:AS>F5") == "T1:AS>F5"
    assert played(game, "T3>F") == "T3:AH>F2"
    assert played(game, "T2>F") == "T2:2H>F2"
    assert game.position.score == 30


@pytest.mark.parametrize(
    "foundations, card, slot",
    [
        ("--------", "AS", 1),  # both slots accept: the leftmost
        ("A-------", "AS", 5),  # the first slot does not accept a second ace
        ("A---A---", "2S", 1),
        ("3---A---", "2S", 5),  # the first slot wants 4S
        ("3---A---", "4S", 1),
        ("----A---", "AS", 1),
        ("----A---", "2S", 5),
        ("-------Q", "KC", 8),
        ("---Q---J", "KC", 4),
    ],
)
def test_foundation_without_index_is_the_leftmost_slot_that_accepts(foundations, card, slot):
    game = forty([card, "", "", "", "", "", "", "", "", None], foundations=foundations)
    assert played(game, "T1>F") == f"T1:{card}>F{slot}"
    assert str(game.position.foundations[slot - 1][-1]) == card


def test_foundation_without_index_when_no_slot_accepts():
    game = forty(["3S", "", "", "", "", "", "", "", "", None], foundations="A---A---")
    assert refused(game, "T1>F").rule == "foundation.build"


def test_a_complete_foundation_takes_nothing():
    game = forty(["KS", "", "", "", "", "", "", "", "", None], foundations="K---Q---")
    error = refused(game, "T1:KS>F1")
    assert error.rule == "foundation.build"
    assert "complete" in error.message
    assert played(game, "T1>F") == "T1:KS>F5"


def test_a_foundation_card_never_goes_to_another_foundation():
    game = forty(["", "", "", "", "", "", "", "", "", None], foundations="3-------")
    for text in ("F1>F5", "F1>F", "F1:3S>F1"):
        assert refused(game, text).rule == "foundation.to-foundation"


# -- take-backs --------------------------------------------------------------------

TAKEBACK = ["", "4S", "4H", "", "", "", "", "", "", None]


def test_take_back_costs_15():
    game = forty(TAKEBACK, foundations="3-------", score=40)
    assert played(game, "F1>T2") == "F1:3S>T2"
    assert column(game, 2) == "4S 3S"
    assert game.position.score == 25
    assert game.position.takebacks == 1


def test_take_back_onto_an_empty_column_takes_any_card():
    game = forty(TAKEBACK, foundations="3-------", score=40)
    assert played(game, "F1:3S>T1") == "F1:3S>T1"
    assert played(game, "F1:2S>T4") == "F1:2S>T4"
    assert game.position.score == 10
    assert game.position.takebacks == 2


def test_take_back_follows_the_tableau_rule():
    game = forty(TAKEBACK, foundations="3-------", score=40)
    assert refused(game, "F1:3S>T3").rule == "tableau.same-suit"
    assert refused(game, "F1:2S>T2").rule == "card.mismatch"
    assert refused(game, "F2>T1").rule == "source.empty"


def test_the_score_floor_applies_action_by_action():
    game = forty(TAKEBACK, foundations="3-------", score=10)
    played(game, "F1>T2")  # 10 - 15 -> 0, not -5
    assert game.position.score == 0
    played(game, "T2>F")  # 0 + 10 -> 10: the lost 5 is not carried
    assert game.position.score == 10
    played(game, "F1>T1")  # 10 - 15 -> 0
    played(game, "F1>T4")  # 0 - 15 -> 0
    assert game.position.score == 0
    assert game.position.takebacks == 3
    played(game, "T4>F")
    assert game.position.score == 10


def test_legal_actions_are_all_legal_and_canonical():
    positions = [
        Game.from_code("FT1-N-AAAAAAB").position,
        forty(TAKEBACK, foundations="3---A---", waste="2S 5H", stock="", score=40).position,
    ]
    for pos in positions:
        before = str(pos)
        actions = Game.from_position(before).legal_actions()
        assert actions
        for action in actions:
            assert str(action) == "S" or is_canonical(action)
            trial = Game.from_position(before)
            assert trial.push(action) == action
