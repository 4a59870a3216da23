"""Depth-first search's node-saving reductions (docs/winnability.md, "Reductions, and why each loses nothing"):
take-backs that would go straight back up are not generated, and a card is not taken back across
one move on other columns. Each skips only positions the search reaches anyway, so no answer
changes: a plain search with every move and no pruning checks that, on both builds."""

from __future__ import annotations

import random

import pytest

from engine import Game, Position
from engine.solver import UNWINNABLE, WINNABLE, solve, state_for
from engine.solver.search import depth_first
from engine.solver.yukon import BACK, YukonState
from verifier import replay

# tests/solver/test_solver.py's yukon_with: foundations 4434 (SHDC), 5S alone in T7, the kings
# alone in T1-T4. The only take-back, 4H onto 5S, would go straight back up (hearts at 3 is safe).
STRAIGHT_BACK = "YU1-C KS/KH/KD/KC/{}/{}/5S 4434 - - 0 0 0"


def straight_back_position() -> str:
    from engine.cards import DECK

    up = dict(zip("SHDC", (4, 4, 3, 4)))
    rest = sorted(
        (c for c in DECK if c.rank > up["SHDC"[c.suit]] and str(c) not in ("KS", "KH", "KD", "KC", "5S")),
        key=lambda c: c.rank,
    )
    half = len(rest) // 2
    return STRAIGHT_BACK.format("".join(map(str, rest[:half])), "".join(map(str, rest[half:])))


def close(state: YukonState, game: Game | None = None) -> None:
    """Make the safe foundation moves (in the game too)."""
    m = state.auto_move()
    while m is not None:
        if game is not None:
            game.push_text(state.action_text(m))
        state.do(m)
        m = state.auto_move()


def take_backs(state: YukonState) -> list[tuple[int, ...]]:
    """Every take-back the solver's rules allow (kings: onto the first empty column), none left out."""
    out = []
    empty = next((j for j in range(7) if not state.cols[j]), -1)
    for s in range(4):
        level = state.found[s]
        if not level:
            continue
        f = s * 13 + level - 1
        for j in range(7):
            dst = state.cols[j]
            if (dst and state.fits[f * 52 + dst[-1]]) or (j == empty and level == 13):
                out.append((BACK, s, level - 1, j, f, -1000))
    return out


def every_move(state: YukonState) -> list[tuple[int, ...]]:
    return [m for m in state.moves() if m[0] != BACK] + take_backs(state)


def random_move(state: YukonState, game: Game, rng: random.Random) -> bool:
    """The safe foundation moves, then one of every move at random (in the game too); False if there is none."""
    close(state, game)
    moves = every_move(state)
    if not moves:
        return False
    m = rng.choice(moves)
    game.push_text(state.action_text(m))
    state.do(m)
    return True


def plain_search(state: YukonState, max_nodes: int) -> str:
    """Depth-first with a table and the safe foundation moves, every move, no other pruning."""
    seen: set[bytes] = set()
    nodes = 0

    def visit() -> str:
        nonlocal nodes
        nodes += 1
        done = []
        m = state.auto_move()
        while m is not None:
            done.append((m, state.do(m)))
            m = state.auto_move()
        try:
            if state.won():
                return "won"
            k = state.key()
            if k in seen or state.dead():
                return "exhausted"
            seen.add(k)
            for m in every_move(state):
                if nodes >= max_nodes:
                    return "nodes"
                flip = state.do(m)
                end = visit()
                state.undo(m, flip)
                if end != "exhausted":
                    return end
            return "exhausted"
        finally:
            for m, f in reversed(done):
                state.undo(m, f)

    return visit()


def test_a_take_back_that_would_go_straight_back_up_is_not_generated():
    text = straight_back_position()
    game = Game.from_position(text)
    assert [str(a) for a in game.legal_actions() if str(a).startswith("F")] == ["F2:4H>T7"]
    state = state_for(Position.from_text(text))
    assert state.auto_move() is None
    assert not any(m[0] == BACK for m in state.moves())
    (m,) = take_backs(state)
    key = state.key()
    state.do(m)
    close(state)
    assert state.key() == key  # the position after it is the one before


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-C-2KU2AKA", "YU1-R-AAAAAAB", "YU1-C-KDURELR"])
def test_take_backs_left_out_are_exactly_those_whose_position_is_the_one_before(code):
    rng = random.Random(25)
    checked = left_out = 0
    for _ in range(6):
        game = Game.from_code(code)
        state = state_for(game.position)
        for _ in range(80):
            close(state, game)
            kept = {state.action_text(m) for m in state.moves() if m[0] == BACK}
            legal = {str(a) for a in game.legal_actions() if str(a).startswith("F")}
            for m in take_backs(state):
                text = state.action_text(m)
                assert text in legal  # the engine's rules allow it
                key = state.key()
                flips = [state.do(m)]
                done = [m]
                a = state.auto_move()
                while a is not None:
                    flips.append(state.do(a))
                    done.append(a)
                    a = state.auto_move()
                assert (state.key() == key) == (text not in kept), text
                for d, f in zip(reversed(done), reversed(flips)):
                    state.undo(d, f)
                checked += 1
                left_out += text not in kept
            if not random_move(state, game, rng):
                break
    assert checked > 0
    if code.startswith("YU1-C"):
        assert left_out > 0


def late_positions() -> list[str]:
    """Positions late in won games, each a few random moves (take-backs included) off the line."""
    rng = random.Random(4)
    out = []
    for code in ("YU1-C-AAAAAAB", "YU1-C-AAAAAAC", "YU1-R-AAAAAAB", "YU1-C-BM547F3", "YU1-C-FIRYE6U"):
        line = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=100_000, shorten_steps=0).actions
        for at in range(35, len(line) - 8, 6):
            game = Game.from_code(code)
            for action in line[:at]:
                game.push_text(action)
            state = state_for(game.position)
            for _ in range(rng.randrange(2, 7)):
                close(state, game)
                if game.is_won or not random_move(state, game, rng):
                    break
            if not game.is_won:
                out.append(str(game.position))
    return out


def lost_positions() -> list[str]:
    """Classic deals of the corpus proved lost with small searches, and positions a few random moves on."""
    rng = random.Random(5)
    out = []
    for code in ("YU1-C-UPVAU2X", "YU1-C-MLMKJNA", "YU1-C-SNRDRTO", "YU1-C-2KU2AKA"):
        for walk in (0, 3, 6, 10, 15, 20):
            game = Game.from_code(code)
            state = state_for(game.position)
            for _ in range(walk):
                if not random_move(state, game, rng):
                    break
            out.append(str(game.position))
    return out


def test_depth_first_answers_as_a_search_with_every_move_and_no_pruning():
    answers = {"won": 0, "exhausted": 0}
    for text in late_positions() + lost_positions():
        plain = plain_search(state_for(Position.from_text(text)), 30_000)
        state = state_for(Position.from_text(text))
        out = depth_first(state, max_nodes=60_000, deadline=None, max_table=10**6)
        if plain == "nodes":
            continue
        assert out.end == plain, text
        answers[plain] += 1
        if out.end == "won":
            game = Game.from_position(text)
            for m in out.moves:
                game.push_text(state.action_text(m))
            assert game.is_won
    assert answers["won"] >= 30 and answers["exhausted"] >= 20, answers


@pytest.mark.parametrize(
    "code, end, nodes, positions",
    [
        # before this round: 18,435 positions examined (the same 7,475 distinct ones)
        ("YU1-C-2KU2AKA", "exhausted", 16_910, 7_475),
        # before: 156 (the same line)
        ("YU1-C-AAAAAAC", "won", 146, 117),
    ],
)
def test_depth_first_reaches_the_same_positions_with_fewer_nodes(code, end, nodes, positions):
    """Pinned node counts: both builds must give them (the reductions skip only revisits)."""
    state = state_for(Game.from_code(code).position)
    out = depth_first(state, max_nodes=100_000, deadline=None, max_table=10**6)
    assert (out.end, out.nodes, out.positions) == (end, nodes, positions)
    if end == "won":
        assert replay(code, [state.action_text(m) for m in out.moves]).won


@pytest.mark.parametrize("code, status", [("YU1-C-2KU2AKA", UNWINNABLE), ("YU1-C-AAAAAAB", WINNABLE)])
def test_solve_by_depth_first_answers_as_before(code, status):
    result = solve(Game.from_code(code).position, budget_seconds=None, max_nodes=100_000, method="depth")
    assert result.status == status


def child_keys(state: YukonState) -> set[bytes]:
    keys = set()
    for m in state.moves():
        flip = state.do(m)
        done = [(m, flip)]
        a = state.auto_move()
        while a is not None:
            done.append((a, state.do(a)))
            a = state.auto_move()
        keys.add(state.key())
        for d, f in reversed(done):
            state.undo(d, f)
    return keys


@pytest.mark.parametrize("code", ["YU1-C-KDURELR", "YU1-C-HOBOQKB", "YU1-R-AAAAAAB", "YU1-C-2KU2AKA"])
def test_a_card_taken_back_across_one_move_reaches_a_child_of_the_position_two_up(code):
    """Every move depth-first search skips for this reason leads to a child of the position before the
    two moves (checked by making it), on random lines of moves without automatic moves between."""
    from engine.solver.search import _pruned

    rng = random.Random(11)
    fired = touching = 0
    for _ in range(100):
        state = state_for(Game.from_code(code).position)
        close(state)
        line: list[tuple[int, int, int, bool, bool]] = []  # the moves made, none followed by an automatic one
        before: list[bytes] = [state.encode()]
        for _ in range(30):
            if len(line) >= 2:
                frames = [[None, 0, 0, line[-2]], [None, 0, 0, line[-1]]]
                for m in state.moves():
                    card, src, dst = state.places(m)
                    if not _pruned(frames, line[-1], card, src, dst) or line[-1][0] == card:
                        continue
                    text = state.action_text(m)
                    state.do(m)
                    close(state)
                    key = state.key()
                    state.decode(before[-3])
                    assert key in child_keys(state), text
                    state.decode(before[-1])
                    fired += 1
                    touching += src in line[-1][1:3]  # prev took cards off, or put cards on, its group
            moves = state.moves()
            if not moves:
                break
            m = rng.choice(moves)
            card, src, dst = state.places(m)
            flip = state.do(m)
            if state.auto_move() is not None:
                break  # an automatic move would follow: the search keeps no move to prune against
            line.append((card, src, dst, flip, state.between_columns(m)))
            before.append(state.encode())
    assert fired >= 20 and touching >= 5, (fired, touching)
