"""Yukon search aids: the estimate's weights and the stuck-card test (held, glued and buried cards)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine import Game
from engine.position import Position
from engine.solver import (
    BEAM_SHARE,
    UNWINNABLE,
    WINNABLE,
    SearchSettings,
    _beams,
    coverage_for,
    settings_for,
    solve,
    state_for,
)
from engine.solver.search import best_first, depth_first
from engine.solver.yukon import BACK, CLASSIC_BEAM_CAP, CLASSIC_BEAM_SHARE, GROUP, NO_CARD, PORTFOLIO, STYLES, UP
from verifier import replay


def unbuilt(state) -> int:
    """Face-up cards not on a face-up card one rank higher of the other colour (classic)."""
    count = 0
    for i, col in enumerate(state.cols):
        for p in range(state.down[i] + 1, len(col)):
            g, t = col[p], col[p - 1]
            red_g, red_t = g // 13 in (1, 2), t // 13 in (1, 2)
            if not (t % 13 == g % 13 + 1 and red_g != red_t):
                count += 1
    return count


@pytest.mark.parametrize("style", STYLES)
def test_the_estimate_weighs_what_it_says(style):
    state = state_for(Game.from_code("YU1-C-KDURELR").position)
    w_down, w_break, w_cover = style
    covers = sum(len(col) - d for col, d in zip(state.cols, state.down) if d)
    assert state.estimate(style) == w_down * sum(state.down) + 52 + w_break * unbuilt(state) + w_cover * covers


@pytest.mark.parametrize("style", STYLES)
def test_every_style_wins_and_the_line_replays(style):
    code = "YU1-C-AAAAAAB"
    state = state_for(Game.from_code(code).position)
    out = best_first(
        state, max_nodes=100_000, deadline=None, max_table=1_000_000, settings=SearchSettings(weights=style)
    )
    assert out.end == "won"
    assert replay(code, [state.action_text(m) for m in out.moves]).won


# classic deals of bench/corpora the first solver left undecided after 10 s
@pytest.mark.parametrize("code", ["YU1-C-K3ATZIG", "YU1-C-F2PEZZ4", "YU1-C-RUNCE5R"])
def test_deals_the_unbuilt_count_wins_quickly_with_no_position_called_stuck(code):
    state = state_for(Game.from_code(code).position)
    unbuilt_only = SearchSettings(weights=(4, 2, 0))  # the unbuilt count without the covers
    out = best_first(state, max_nodes=20_000, deadline=None, max_table=1_000_000, settings=unbuilt_only)
    assert out.end == "won"
    game = Game.from_code(code)
    for action in [state.action_text(m) for m in out.moves]:
        game.push_text(action)
        assert not state_for(game.position).dead(), action
    assert game.position.is_won


def test_a_cover_that_only_moves_with_its_target_leaves_it_covered():
    # proved lost in 95,728 positions examined by the one-set test, far fewer now
    state = state_for(Game.from_code("YU1-C-2KU2AKA").position)
    assert best_first(state, max_nodes=60_000, deadline=None, max_table=1_000_000).end == "exhausted"
    # solve() gets there too, after beam searches that find no win
    result = solve(Game.from_code("YU1-C-2KU2AKA").position, budget_seconds=None, max_nodes=200_000)
    assert result.status == UNWINNABLE


def stuck_by_passes(state) -> bool:
    """The stuck-card test computed the plain way: pass over every card until no
    pass lets one out (docs/winnability.md), to check the solver's worklist."""
    cols, down, loc, found = state.cols, state.down, state.loc, state.found
    held = [loc[c] >= 0 for c in range(52)]
    glued = held[:]
    at = {c: p for col in cols for p, c in enumerate(col)}

    def glued_above(c) -> bool:
        col = cols[loc[c]]
        return at[c] + 1 < len(col) and glued[col[at[c] + 1]]

    def buried(c) -> bool:  # may never go up: glued, or a glued card right on it
        return glued[c] or glued_above(c)

    def open_target(t) -> bool:
        if loc[t] < 0:
            return True
        col = cols[loc[t]]
        face_up = at[t] >= down[loc[t]]
        return (face_up or not held[t]) and (at[t] == len(col) - 1 or not glued[col[at[t] + 1]])

    changed = True
    while changed:
        changed = False
        may_empty = any(not col or not glued[col[0]] for col in cols)
        for i, col in enumerate(cols):
            for p, c in enumerate(col):
                if not glued[c]:
                    continue
                suit, rank = divmod(c, 13)
                covered = p < down[i] and glued[col[p + 1]]  # face down for good
                leaves = not covered and (
                    (not glued_above(c) and all(not buried(13 * suit + r) for r in range(found[suit], rank)))
                    or (rank == 12 and may_empty)
                    or any(open_target(t) for t in range(52) if state.targets[c] >> t & 1)
                )
                if leaves:
                    held[c] = glued[c] = False
                    changed = True
                elif held[c] and ((p > down[i] and not held[col[p - 1]]) or (p < down[i] and not covered)):
                    held[c] = False
                    changed = True
    return any(glued)


def neighbours_afresh(state) -> tuple[list[int], list[int]]:
    """Each card's neighbours in its column, read from the columns (NO_CARD: none, or not on one)."""
    above, below = [NO_CARD] * 52, [NO_CARD] * 52
    for col in state.cols:
        for lower, upper in zip(col, col[1:]):
            above[lower], below[upper] = upper, lower
    return above, below


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-R-KDURELR", "YU1-C-K3ATZIG"])
def test_the_neighbours_the_stuck_card_test_reads_are_kept_through_every_move_and_its_undo(code):
    # moves (group moves, foundation moves, take-backs) made at random and sometimes taken back, and
    # positions decoded: after each, the kept tables are those of the columns, and so is the verdict
    rng = random.Random(code)
    state = state_for(Game.from_code(code).position)
    made: list[tuple[tuple[int, ...], bool]] = []
    kinds = set()
    for step in range(400):
        moves = state.moves()
        if made and (not moves or rng.random() < 0.3):
            state.undo(*made.pop())
        elif moves:
            rare = [m for m in moves if m[0] != GROUP]  # foundation moves and take-backs, when there are any
            m = rng.choice(rare if rare and rng.random() < 0.5 else moves)
            kinds.add(m[0])
            made.append((m, state.do(m)))
        if step % 50 == 49:
            state.decode(state.encode())
            made.clear()  # (a decoded state undoes nothing made before)
        assert (state.above[:52], state.below[:52]) == neighbours_afresh(state), step
        fresh = state_for(Game.from_code(code).position)
        fresh.decode(state.encode())  # (its tables made from the columns)
        assert state.dead() == fresh.dead(), step
    assert kinds == {GROUP, UP, BACK}


@pytest.mark.pure_only
# lost or undecided deals (many stuck positions on the way), then deals with none
@pytest.mark.parametrize("code", ["YU1-C-2KU2AKA", "YU1-C-SNRDRTO", "YU1-C-KDURELR", "YU1-C-K3ATZIG", "YU1-R-KDURELR"])
def test_the_worklist_finds_the_same_stuck_positions_as_repeated_passes(code):
    state = state_for(Game.from_code(code).position)
    seen = []

    class Recording(type(state)):
        __slots__ = ()

        def dead(self) -> bool:
            seen.append((super().dead(), stuck_by_passes(self)))
            return seen[-1][0]

    state.__class__ = Recording
    best_first(state, max_nodes=3000, deadline=None, max_table=100_000)
    assert len(seen) > 300
    assert all(fast == plain for fast, plain in seen)
    assert any(fast for fast, _ in seen) == (code in ("YU1-C-2KU2AKA", "YU1-C-SNRDRTO", "YU1-C-KDURELR"))


def test_yukon_gets_beam_searches_of_growing_width():
    widths = settings_for(Game.from_code("YU1-C-KDURELR").position).beam_widths
    assert widths and list(widths) == sorted(widths)


def test_classic_deals_get_a_portfolio_of_styles_and_relaxed_deals_one():
    classic = settings_for(Game.from_code("YU1-C-VWNIL64").position)
    relaxed = settings_for(Game.from_code("YU1-R-VWNIL64").position)
    assert classic.styles == PORTFOLIO and len({style for style, _ in PORTFOLIO}) == len(PORTFOLIO) > 1
    assert classic.styles[0][0] == STYLES[0] and all(style in STYLES for style, _ in PORTFOLIO)
    assert relaxed.styles == ((STYLES[0], 1),)


# classic deals of bench/corpora the default style's beams left undecided within the beam share of 10 s
@pytest.mark.parametrize("code", ["YU1-C-RGHEDEC", "YU1-C-X2N7ZL6", "YU1-C-P7CSB4T"])
def test_the_portfolio_wins_a_deal_the_first_style_alone_does_not(code):
    state = state_for(Game.from_code(code).position)
    settings = settings_for(Game.from_code(code).position)
    alone = replace(settings, styles=((STYLES[0], 1),))
    assert _beams(state_for(Game.from_code(code).position), alone, 40_000, None, 10**6).end != "won"
    out = _beams(state, settings, 40_000, None, 10**6)
    assert out.end == "won" and out.nodes <= int(40_000 * CLASSIC_BEAM_SHARE)
    assert settings.weights is None  # the complete search keeps the state's own estimate (the first style)
    assert replay(code, [state.action_text(m) for m in out.moves]).won
    result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=40_000, shorten_steps=0)
    assert result.status == WINNABLE and result.actions == tuple(state.action_text(m) for m in out.moves)


def test_classic_deals_get_half_the_budget_for_beams_then_depth_first_and_relaxed_deals_the_defaults():
    classic = settings_for(Game.from_code("YU1-C-KDURELR").position)
    relaxed = settings_for(Game.from_code("YU1-R-KDURELR").position)
    assert (classic.beam_share, classic.complete_search) == (CLASSIC_BEAM_SHARE, "depth")
    assert CLASSIC_BEAM_SHARE < BEAM_SHARE
    assert (relaxed.beam_share, relaxed.complete_search) == (None, "best")
    out = _beams(
        state_for(Game.from_code("YU1-C-KDURELR").position), classic, 20_000, None, 10**6
    )  # no style wins this deal: the beams spend their whole share
    assert out.end != "won" and int(20_000 * CLASSIC_BEAM_SHARE) - 1000 < out.nodes <= int(20_000 * CLASSIC_BEAM_SHARE)
    capped = _beams(state_for(Game.from_code("YU1-C-KDURELR").position), replace(classic, beam_cap=5_000), 20_000,
                    None, 10**6)  # a cap below the share: the beams stop there, the rest is the complete search's
    assert capped.end != "won" and 4_000 < capped.nodes <= 5_000
    assert classic.beam_cap == CLASSIC_BEAM_CAP and relaxed.beam_cap is None


def test_a_classic_deal_the_beams_leave_is_proved_lost_by_the_depth_first_search():
    position = Game.from_code("YU1-C-MLMKJNA").position
    depth = depth_first(state_for(position), max_nodes=10**6, deadline=None, max_table=10**6)
    best = best_first(state_for(position), max_nodes=10**6, deadline=None, max_table=10**6)
    # both examine every position, but not the same number of times
    assert depth.end == best.end == "exhausted" and depth.positions == best.positions and depth.nodes != best.nodes
    beams = _beams(state_for(position), settings_for(position), 200_000, None, 10**6)
    assert beams.end == "exhausted"  # every beam died out without a win, well within its share
    result = solve(position, budget_seconds=None, max_nodes=200_000)
    assert result.status == UNWINNABLE and result.nodes == beams.nodes + depth.nodes


def test_depth_first_wins_a_classic_deal_no_beam_and_no_best_first_search_won_in_10_s():
    state = state_for(Game.from_code("YU1-C-EX7EFDT").position)
    out = depth_first(state, max_nodes=300_000, deadline=None, max_table=10**6)
    assert out.end == "won" and out.nodes <= 300_000
    assert replay("YU1-C-EX7EFDT", [state.action_text(m) for m in out.moves]).won


def without_the_test(position):
    """A solver state for ``position`` whose stuck-card test never fires."""
    plain = state_for(position)

    class NoTest(type(plain)):  # type: ignore[misc]
        __slots__ = ()

        def dead(self) -> bool:
            return False

    plain.__class__ = NoTest
    return plain


# Spades and clubs up to the jack, hearts up, diamonds up to the nine. The J♦ lies face down on
# the face-down 10♦, on both black queens: turned up (the K♠ may go to an empty column) it could
# only go onto a black queen or up after the 10♦, all beneath it: it never leaves.
FACE_DOWN_STUCK = "YU1-C qsqctdjdKS/KD/KC/QD/-/-/- JK9J - - 0 0 0"
# The same with the Q♣ face up on the K♦: once turned up, the J♦ goes onto it.
FACE_DOWN_FREE = "YU1-C qstdjdKS/KDQC/KC/QD/-/-/- JK9J - - 0 0 0"
# Spades and clubs up to the jack, hearts to the 10, diamonds up. The Q♥ lies right on the J♥,
# and both black queens and both black kings lie face down beneath them: the J♥ can only go up,
# once the Q♥ has left it; the Q♥ only up, after the J♥. With two sets the J♥ counted as free to
# go up (no lower heart glued), and the Q♥ after it.
BURIED = "YU1-C kcqsksqcJHQH/KH/-/-/-/-/- JTKJ - - 0 0 0"
# The same with the Q♣ face up in a column of its own: the J♥ goes onto it with the Q♥, the Q♥
# onto the K♠ then turned up, and all goes up.
NOT_BURIED = "YU1-C kcqsksJHQH/KH/QC/-/-/-/- JTKJ - - 0 0 0"


@pytest.mark.pure_only
@pytest.mark.parametrize("text", [FACE_DOWN_STUCK, BURIED], ids=["face-down-never-leaves", "buried"])
def test_a_hand_built_dead_end_is_seen_at_once_and_a_search_without_the_test_agrees(text):
    position = Position.from_text(text)
    assert state_for(position).dead() and stuck_by_passes(state_for(position))
    # the complete search without the test agrees: nothing reachable is won
    assert best_first(without_the_test(position), max_nodes=10_000, deadline=None, max_table=10**6).end == "exhausted"
    result = solve(position, budget_seconds=None, max_nodes=10_000)
    assert result.status == UNWINNABLE and result.positions == 1


@pytest.mark.parametrize("text", [FACE_DOWN_FREE, NOT_BURIED], ids=["face-down-with-a-way-out", "not-buried"])
def test_its_winnable_twin_is_won_and_never_flagged_on_the_winning_line(text):
    position = Position.from_text(text)
    assert not state_for(position).dead() and not stuck_by_passes(state_for(position))
    result = solve(position, budget_seconds=None, max_nodes=10_000)
    assert result.status == WINNABLE
    game = Game.from_position(text)
    for action in result.actions:
        game.push_text(action)
        assert game.is_won or not state_for(game.position).dead(), action
    assert game.is_won


# classic deals of bench/corpora no estimate style wins: the first two were proved lost by the
# complete search alone (391,280 and 450,889 positions examined), the last two were undecided
# within 10 s with two sets; the test sees at the root that they are lost
@pytest.mark.parametrize("code", ["YU1-C-6BUMQS6", "YU1-C-IVDHFSW", "YU1-C-WY2RCND", "YU1-C-UP6WYTJ"])
def test_corpus_deals_the_searches_decided_slowly_or_never_are_stuck_from_the_start(code):
    position = Game.from_code(code).position
    assert state_for(position).dead() and stuck_by_passes(state_for(position))
    result = solve(position, budget_seconds=None, max_nodes=10_000)
    assert result.status == UNWINNABLE and result.positions == 1


def test_an_unwinnable_yukon_answer_names_the_stuck_card_test():
    yukon, forty = coverage_for("YU")["reductions"], coverage_for("FT")["reductions"]
    assert any("stuck cards" in line for line in yukon) and any("buried cards" in line for line in yukon)
    assert not any("stuck" in line or "buried" in line for line in forty)
