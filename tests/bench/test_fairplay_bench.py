"""The fair-play bench (``python -m bench.fairplay``) on a tiny corpus, so that it keeps working:
its honest players play legal games of every rule set, its attacks are the logs they claim to be,
and its figures come from real submissions. Only what holds under any evidence model is asserted
about flags: an exact copy of a ranked record is a ``copy``, and of ten submissions of one new
log the nine later ones are copies."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bench.fairplay import attacks
from bench.fairplay.measure import KNOWN_FLAGS, RULE_SETS, generate, plan, run, wilson
from bench.fairplay.policies import POLICIES, layout
from bench.fairplay.report import honest_rows, markdown, summary
from engine import Game
from tests.play import play_greedy
from verifier import replay

SEED, GAMES = 7, 30
CODES = {"YU1-C": "YU1-C-AAAAAAB", "YU1-R": "YU1-R-AAAAAAB", "FT1-N": "FT1-N-AAAAAAB"}


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """The bench on 30 honest games; every attack once, on Yukon relaxed (where the budget wins every deal)."""
    return run(GAMES, SEED, nodes=20_000, workers=1, attack_rule_sets=(("YU", "R"),), say=lambda _: None)


def final_layout(code: str, log: Any) -> str:
    verdict = replay(code, log)
    assert verdict.legal, verdict.error
    return " ".join(verdict.position.split()[1:5])


def test_the_honest_players_play_legal_games_of_every_policy_and_rule_set(report):
    planned, _ = plan(GAMES, SEED)
    games = generate(planned, SEED)
    assert {(g.policy, g.code[:5]) for g in games} == {(p, "{}1-{}".format(*r)) for p in POLICIES for r in RULE_SETS}
    for game in games:
        verdict = replay(game.code, game.moves)
        assert verdict.legal, (game.code, verdict.error)
        assert verdict.canonical == game.moves and verdict.won == game.won
        if game.times is not None:
            assert len(game.times) == len(game.moves) and game.times == sorted(game.times)
            assert game.elapsed_ms is not None and game.elapsed_ms >= game.times[-1]
    assert any("U" in g.moves for g in games)  # people undo
    assert any(g.won for g in games) and not all(g.won for g in games)
    # the same seed plays the same games, in this process as in the bench's worker
    assert [len(g.moves) for g in games] == [h["actions"] for h in report["honest"]]
    # several players on a deal: the challenge-like deals most of all
    players = Counter(g.code for g in games)
    assert max(players.values()) >= 3 and len(players) < GAMES


@pytest.mark.parametrize("rules", sorted(CODES))
def test_the_attacks_change_the_log_and_not_the_game(rules):
    code = CODES[rules]
    line = play_greedy(code, 60)
    end = final_layout(code, line)
    padded = attacks.padded_with_undos(line)
    assert len(padded) == len(line) + 24 and padded.count("U") == 12 and final_layout(code, padded) == end
    looped = attacks.padded_with_takebacks(code, line)
    assert len(looped) > len(line) and (len(looped) - len(line)) % 2 == 0 and final_layout(code, looped) == end
    assert any(action.startswith("F") for action in looped)
    swapped = attacks.swapped_pair(code, line)
    assert swapped is not None and swapped != line and sorted(swapped) == sorted(line)
    assert final_layout(code, swapped) == end
    assert attacks.inserted_undo(line).count("U") == 1
    assert replay(code, attacks.other_notation(line)).canonical == line


def test_faked_clocks():
    assert attacks.faked_times("times-none", 5) == (None, None)
    assert attacks.faked_times("times-elapsed-1", 5) == (None, 1)
    times, elapsed = attacks.faked_times("times-half-gaps-0", 6, 1000)
    gaps = [b - a for a, b in zip([0, *times], times)]
    assert gaps.count(0) == 3 and elapsed == times[-1] == 3000
    with pytest.raises(ValueError):
        attacks.faked_times("times-late", 3)


def test_the_figures_come_from_the_records_submitted(report):
    honest = report["honest"]
    assert len(honest) == report["games"] == GAMES
    ids = [h["final"]["id"] for h in honest]
    assert len(set(ids)) == GAMES and ids == [h["at_submission"]["id"] for h in honest]
    rows = honest_rows(report)
    assert [r["rule set"] for r in rows] == ["Yukon classic", "Yukon relaxed", "Forty Thieves", "all"]
    *per_rule_set, total = rows
    for column in ["games", "wins", "unranked", "review", *KNOWN_FLAGS]:
        assert sum(r[column] for r in per_rule_set) == total[column]
    assert total["wins"] == sum(h["won"] for h in honest)
    assert total["unranked"] == sum(not h["final"]["ranked"] for h in honest)
    assert sum(report["solvability"].values()) == report["deals"]


def test_every_attack_is_sent_and_the_plain_copies_are_caught(report):
    sent = {a["attack"]: a for a in report["attacks"]}
    assert sorted(sent) == sorted(attacks.ATTACKS) and len(report["attacks"]) == len(attacks.ATTACKS)
    for attack in report["attacks"]:
        assert attack["records"], attack  # each one reached the service
        assert [r["id"] for r in attack["final"]] == [r["id"] for r in attack["records"]]
    for kind in ("exact-copy", "copy-other-notation"):
        [record] = sent[kind]["final"]
        assert "copy" in record["flags"] and record["ranked"] is False
    race = sent["race-10-players"]["final"]
    assert len(race) == 10 and all("copy" in r["flags"] and not r["ranked"] for r in race[1:])
    assert "after_service_solved" in sent["offline-solver-line"]
    table = markdown(report)
    assert all(f"| {kind} |" in table for kind in attacks.ATTACKS)
    assert "time (wall clock" in summary(report)


def test_wilson_intervals():
    low, high = wilson(0, 600)
    assert low == 0 and 0.006 < high < 0.0065
    for hits, total in ((1, 10), (5, 2000), (300, 300)):
        low, high = wilson(hits, total)
        assert low <= hits / total <= high and low >= 0 and high <= 1


def test_layout_leaves_out_score_and_counters():
    game = Game.from_code("FT1-N-AAAAAAB")
    before = layout(game.position)
    game.push_text("S")
    game.push_text("U")
    assert layout(game.position) == before and str(game.position) != before
