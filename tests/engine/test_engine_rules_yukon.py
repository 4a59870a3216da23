"""Yukon rules (classic and relaxed): every rule with a passing and a failing case."""

from __future__ import annotations

import pytest

from engine import Game
from tests.engine.engine_helpers import build_position, column, is_canonical, played, refused

BOTH = ["YU1-C", "YU1-R"]


def yukon(tag: str, columns: list[str | None], **kw) -> Game:
    return Game.from_position(build_position(tag, columns, **kw))


# -- tableau build ----------------------------------------------------------------

BUILD = ["KS", "QH", "QC", "JD", "", "", None]


@pytest.mark.parametrize("tag", BOTH)
def test_build_one_rank_lower_in_the_other_colour(tag):
    game = yukon(tag, BUILD)
    assert played(game, "T2>T1") == "T2:QH>T1"
    assert column(game, 1) == "KS QH"
    assert game.position.score == 0 and game.position.moves == 1
    assert game.position.columns[1] == []


@pytest.mark.parametrize("tag", BOTH)
def test_build_needs_exactly_one_rank_lower(tag):
    game = yukon(tag, BUILD)
    assert refused(game, "T4:JD>T1").rule == "tableau.build"  # a jack onto a king
    assert refused(game, "T1:KS>T2").rule == "tableau.build"  # a king onto a queen
    assert refused(game, "T2:QH>T4").rule == "tableau.build"  # higher onto lower


def test_classic_wants_alternating_colours():
    game = yukon("YU1-C", BUILD)
    error = refused(game, "T3:QC>T1")
    assert error.rule == "tableau.alternate-colour"
    assert "colour" in error.message


def test_relaxed_ignores_colour():
    game = yukon("YU1-R", BUILD)
    assert played(game, "T3:QC>T1") == "T3:QC>T1"  # black on black
    assert column(game, 1) == "KS QC"
    assert played(game, "T4:JD>T2") == "T4:JD>T2"  # red on red
    # ... but the rank still counts
    error = refused(game, "T2:QH>T1")  # a queen onto a queen
    assert error.rule == "tableau.build"


def test_legal_actions_follow_the_colour_rule():
    classic = {str(a) for a in yukon("YU1-C", BUILD).legal_actions()}
    relaxed = {str(a) for a in yukon("YU1-R", BUILD).legal_actions()}
    assert "T2:QH>T1" in classic and "T2:QH>T1" in relaxed
    assert "T3:QC>T1" not in classic and "T3:QC>T1" in relaxed
    assert "T4:JD>T1" not in classic | relaxed
    assert "T4:JD>T3" in classic  # red on black
    assert "T4:JD>T2" not in classic and "T4:JD>T2" in relaxed  # red on red


# -- groups -------------------------------------------------------------------------

GROUP = ["KS", "4c QH 3D 9C", "", "", "", "", None]


@pytest.mark.parametrize("tag", BOTH)
def test_a_group_in_any_order_moves_when_its_bottom_card_fits(tag):
    game = yukon(tag, GROUP)
    assert "T2:QH>T1" in {str(a) for a in game.legal_actions()}
    assert played(game, "T2:QH>T1") == "T2:QH>T1"
    assert column(game, 1) == "KS QH 3D 9C"
    assert column(game, 2) == "4C"


@pytest.mark.parametrize("tag", BOTH)
def test_only_the_bottom_card_of_a_group_counts(tag):
    game = yukon(tag, GROUP)
    assert refused(game, "T2:3D>T1").rule == "tableau.build"
    assert refused(game, "T2:9C>T1").rule == "tableau.build"


@pytest.mark.parametrize("tag", BOTH)
def test_a_move_without_a_card_takes_the_top_card_alone(tag):
    game = yukon(tag, ["KS", "4c QH 3D 9C", "TD", "", "", "", None])
    assert played(game, "T2>T3") == "T2:9C>T3"
    assert column(game, 3) == "TD 9C"
    assert column(game, 2) == "4C QH 3D"


TWENTY_ON_QH = "QH AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS AH 2H 3H 4H 5H 6H 7H"  # 20 cards


@pytest.mark.parametrize("tag", BOTH)
def test_a_group_of_20_moves(tag):
    assert len(TWENTY_ON_QH.split()) == 20
    game = yukon(tag, [TWENTY_ON_QH, "KS", "", "", "", "", None])
    assert "T1:QH>T2" in {str(a) for a in game.legal_actions()}
    assert played(game, "T1:QH>T2") == "T1:QH>T2"
    assert len(game.position.columns[1]) == 21
    assert game.position.columns[0] == []


@pytest.mark.parametrize("tag", BOTH)
def test_a_group_of_21_is_refused(tag):
    game = yukon(tag, [TWENTY_ON_QH + " 8H", "KS", "", "", "", "", None])
    error = refused(game, "T1:QH>T2")
    assert error.rule == "group.max-20"
    assert "21" in error.message
    assert "T1:QH>T2" not in {str(a) for a in game.legal_actions()}
    # the 20 cards above the queen are still one group
    assert refused(game, "T1:AS>T2").rule == "tableau.build"


# -- empty columns ----------------------------------------------------------------

EMPTY = ["KS", "4c KH QS JD", "ah QD", "", "", "", None]


@pytest.mark.parametrize("tag", BOTH)
def test_a_king_alone_fills_an_empty_column(tag):
    game = yukon(tag, EMPTY)
    assert played(game, "T1>T4") == "T1:KS>T4"
    assert column(game, 4) == "KS"


@pytest.mark.parametrize("tag", BOTH)
def test_a_king_with_cards_on_it_fills_an_empty_column(tag):
    game = yukon(tag, EMPTY)
    assert played(game, "T2:KH>T4") == "T2:KH>T4"
    assert column(game, 4) == "KH QS JD"
    assert column(game, 2) == "4C"
    assert game.position.score == 5  # 4C turned up


@pytest.mark.parametrize("tag", BOTH)
def test_an_empty_column_takes_nothing_but_a_king(tag):
    game = yukon(tag, EMPTY)
    error = refused(game, "T2:QS>T4")
    assert error.rule == "empty-column.king-only"
    assert "king" in error.message
    # not even to uncover a face-down card
    assert refused(game, "T3:QD>T4").rule == "empty-column.king-only"
    assert refused(game, "T2>T5").rule == "empty-column.king-only"
    assert not [
        a for a in game.legal_actions() if a.target == "T" and a.target_index in (4, 5, 6) and a.card.rank != 13
    ]


# -- face-down cards -------------------------------------------------------------


@pytest.mark.parametrize("tag", BOTH)
def test_a_face_down_card_is_turned_up_at_once_for_5_points(tag):
    game = yukon(tag, ["KS", "9c 4c QH 3D", "", "", "", "", None], score=20)
    assert game.position.down[1] == 2
    played(game, "T2:QH>T1")
    assert game.position.down[1] == 1
    assert column(game, 2) == "9C 4C"
    assert game.position.score == 25
    assert build_position(tag, ["KS QH 3D", "9c 4C", "", "", "", "", None]).split()[1] == str(game.position).split()[1]


def test_moving_off_a_face_up_card_turns_nothing_up():
    game = yukon("YU1-C", ["KS", "9c 4C QH", "", "", "", "", None])
    played(game, "T2:QH>T1")
    assert game.position.down[1] == 1
    assert game.position.score == 0


def test_face_down_cards_do_not_move():
    game = Game.from_code("YU1-C-AAAAAAB")  # T2: (9S) 4H 8D 8H 5C JH
    error = refused(game, "T2:9S>T4")
    assert error.rule == "card.face-down"


def test_the_deal_turns_up_a_card_as_part_of_the_move():
    game = Game.from_code("YU1-C-AAAAAAB")  # T7: (3H) (3C) (AS) (4S) (2D) (8S) TS 3D 2C 9D 7C
    assert played(game, "T7:TS>T2") == "T7:TS>T2"
    assert game.position.down[6] == 5
    assert [str(c) for c in game.position.columns[6]] == ["3H", "3C", "AS", "4S", "2D", "8S"]
    assert game.position.score == 5
    assert str(game.position).split()[1].split("/")[6] == "3h3cas4s2d8S"


# -- foundations -------------------------------------------------------------------

FOUNDATION = ["AS", "2S", "AH 5C", "AD", "", None, "AC"]


def test_foundations_have_fixed_suits():
    game = yukon("YU1-C", FOUNDATION)
    error = refused(game, "T1:AS>F2")
    assert error.rule == "foundation.suit"
    assert refused(game, "T4:AD>F4").rule == "foundation.suit"
    assert played(game, "T1:AS>F1") == "T1:AS>F1"
    assert played(game, "T4:AD>F3") == "T4:AD>F3"


def test_foundations_start_with_the_ace_and_go_up_one_at_a_time():
    game = yukon("YU1-C", FOUNDATION)
    assert refused(game, "T2:2S>F1").rule == "foundation.build"
    assert refused(game, "T2>F").rule == "foundation.build"
    played(game, "T1>F")
    assert played(game, "T2>F") == "T2:2S>F1"
    assert [str(c) for c in game.position.foundations[0]] == ["AS", "2S"]
    assert game.position.score == 20


def test_foundation_moves_score_10():
    game = yukon("YU1-C", FOUNDATION, score=3)
    played(game, "T1>F")
    assert game.position.score == 13
    assert game.position.foundation_cards == 1


def test_foundations_take_one_card_from_the_end_of_a_column():
    game = yukon("YU1-C", FOUNDATION)
    error = refused(game, "T3:AH>F2")
    assert error.rule == "foundation.one-card"
    assert refused(game, "T3:AH>F").rule == "foundation.one-card"
    assert "T3:AH>F2" not in {str(a) for a in game.legal_actions()}


def test_foundation_without_index_takes_the_slot_of_the_suit():
    game = yukon("YU1-C", FOUNDATION)
    assert played(game, "T7>F") == "T7:AC>F4"
    assert played(game, "T4:AD>F") == "T4:AD>F3"
    assert played(game, "T1>F") == "T1:AS>F1"


def test_foundation_is_complete_at_the_king():
    game = yukon("YU1-C", ["KS", "", "", "", "", "", None], foundations="Q---")
    assert played(game, "T1>F") == "T1:KS>F1"
    assert len(game.position.foundations[0]) == 13


# -- take-backs ----------------------------------------------------------------------

TAKEBACK = ["KH", "", "", "", "", "", None]


@pytest.mark.parametrize("tag", BOTH)
def test_take_back_onto_a_column_scores_nothing(tag):
    game = yukon(tag, TAKEBACK, foundations="Q-K-", score=100)
    assert played(game, "F1>T1") == "F1:QS>T1"
    assert column(game, 1) == "KH QS"
    assert game.position.score == 100
    assert game.position.takebacks == 1
    assert len(game.position.foundations[0]) == 11
    # putting it up again scores 10 again
    played(game, "T1>F")
    assert game.position.score == 110
    assert game.position.takebacks == 1


@pytest.mark.parametrize("tag", BOTH)
def test_take_back_onto_an_empty_column_only_a_king(tag):
    game = yukon(tag, TAKEBACK, foundations="Q-K-", score=100)
    assert refused(game, "F1:QS>T2").rule == "empty-column.king-only"
    assert played(game, "F3:KD>T2") == "F3:KD>T2"
    assert game.position.takebacks == 1


def test_take_back_follows_the_build_rule():
    game = yukon("YU1-C", ["KS", "", "", "", "", "", None], foundations="Q---", score=50)
    assert refused(game, "F1:QS>T1").rule == "tableau.alternate-colour"  # black onto black
    relaxed = yukon("YU1-R", ["KH", "", "", "", "", "", None], foundations="J---", score=50)
    assert refused(relaxed, "F1:JS>T1").rule == "tableau.build"


def test_take_back_needs_a_card_and_names_the_top_one():
    game = yukon("YU1-C", TAKEBACK, foundations="Q-K-")
    assert refused(game, "F2>T1").rule == "source.empty"
    assert refused(game, "F1:KS>T1").rule == "card.mismatch"
    assert refused(game, "F1:JS>T1").rule == "card.mismatch"


def test_a_foundation_card_never_goes_to_another_foundation():
    game = yukon("YU1-C", TAKEBACK, foundations="Q-K-")
    assert refused(game, "F1>F").rule == "foundation.to-foundation"
    assert refused(game, "F1:QS>F1").rule == "foundation.to-foundation"
    assert refused(game, "F3>F2").rule == "foundation.to-foundation"


# -- everything else ---------------------------------------------------------------


@pytest.mark.parametrize("tag", BOTH)
@pytest.mark.parametrize("text", ["S", "S>W", "W>T1", "W:5C>F"])
def test_yukon_has_no_stock_and_no_waste(tag, text):
    game = yukon(tag, GROUP)
    assert refused(game, text).rule == "stock.none"


@pytest.mark.parametrize(
    "text, rule",
    [
        ("T8>T1", "pile.no-such-column"),
        ("T1>T8", "pile.no-such-column"),
        ("T10:KS>T1", "pile.no-such-column"),
        ("T1>F5", "pile.no-such-foundation"),
        ("F5>T1", "pile.no-such-foundation"),
        ("F8:KS>T1", "pile.no-such-foundation"),
    ],
)
def test_pile_numbers_out_of_range(text, rule):
    error = refused(yukon("YU1-C", GROUP), text)
    assert error.rule == rule
    assert "T7" in error.message or "F4" in error.message


def test_a_card_never_goes_onto_its_own_column():
    game = yukon("YU1-C", GROUP)
    assert refused(game, "T2:QH>T2").rule == "move.same-column"
    assert refused(game, "T1>T1").rule == "move.same-column"


def test_the_named_card_must_be_in_the_column():
    game = yukon("YU1-C", GROUP)
    error = refused(game, "T2:KS>T3")
    assert error.rule == "card.mismatch"
    assert "KS" in error.message


def test_an_empty_column_has_nothing_to_move():
    game = yukon("YU1-C", GROUP)
    assert refused(game, "T3>T1").rule == "source.empty"
    assert refused(game, "T3>F").rule == "source.empty"


def test_legal_actions_are_all_legal_and_canonical():
    for code in ("YU1-C-AAAAAAB", "YU1-R-AAAAAAB", "YU1-C-QWERTY2"):
        game = Game.from_code(code)
        before = str(game.position)
        actions = game.legal_actions()
        assert actions
        for action in actions:
            assert is_canonical(action)
            trial = Game.from_position(before)
            assert trial.push(action) == action
        assert str(game.position) == before


def test_a_position_text_round_trips_through_from_position():
    text = build_position(
        "YU1-R", ["KS", "9c 4c QH 3D", "", "", "", "", None], foundations="----", score=35, moves=12, takebacks=2
    )
    game = Game.from_position(text)
    assert str(game.position) == text
    assert (game.position.score, game.position.moves, game.position.takebacks) == (35, 12, 2)
    assert game.position.down == [0, 2, 0, 0, 0, 0, 52 - 5 - 1]  # the filler column: all but its top card
