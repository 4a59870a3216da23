"""The copy threshold from data: honest games on popular deals against the copy attacks.

``python -m bench.fairplay --sweep`` plays the honest corpus of :mod:`bench.fairplay.policies`
on a few popular deals per rule set (many players on one deal, as on a challenge), takes the
games in a shuffled order as the service would receive them, and measures each game's
*overlap* with every earlier game of another player on its deal
(:func:`api.fairplay.evidence.overlap`: the positions two effective lines share, of the longer line).
Against the same earlier games it measures the attacks of issues 42 and 43: the first 10, 50,
70 or 85 % of a winning line of the deal finished by the shipped solver, and a whole winning
line with its foundation moves put off (the lazy-foundation reorder), alone and on a copy.
It prints, per threshold, the share of honest games that would be flagged ``copy`` and the
share of each attack that would be, each with its Wilson 95 % interval.

Engine, verifier and :mod:`api.fairplay.evidence` only: no service, so that a threshold can be chosen
before it is set (:data:`api.fairplay.evidence.THRESHOLDS`), and the full bench then measures it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from multiprocessing import Pool
from typing import Any

from api.fairplay.evidence import THRESHOLDS, common_with_others, reached_by
from engine import GameCode
from engine.layouts import effective_line

from . import attacks
from .measure import RULE_SETS, Planned, _play, prefix, title, wilson
from .policies import HonestGame

#: the thresholds of the table
THRESHOLDS_SWEPT = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8)
#: the attacks measured, as (name, share of the victim's actions kept, lazy-foundation reorder)
SWEPT_ATTACKS = (("copy-10%+solver", 0.1, False), ("copy-50%+solver", 0.5, False),
                 ("copy-70%+solver", 0.7, False), ("copy-85%+solver", 0.85, False),
                 ("lazy-copy", 1.0, True), ("lazy-copy-50%+solver", 0.5, True))


def popular_plan(deals: int, players: int, seed: int) -> list[Planned]:
    """``deals`` deals per rule set, each played by ``players`` consecutive people."""
    rng = random.Random(f"{seed}:popular")
    planned = []
    for letters, rule in RULE_SETS:
        for _ in range(deals):
            code = str(GameCode(letters, rule, rng.randrange(2 ** 34)))
            start = rng.randrange(10_000)
            planned += [Planned(code, start + k, True) for k in range(players)]
    return planned


def _line(code: str, moves: list[str]) -> frozenset[int]:
    return frozenset(effective_line(code, moves))


def _closest(line: frozenset[int], others: list[tuple[int, frozenset[int]]]) -> float:
    """What :func:`api.fairplay.evidence.copies` judges ``line`` by against ``others`` (``(player, line)``,
    earlier games of other players), for any threshold: the largest overlap of the positions it
    shares with one of them and with no one else, among those sharing at least
    :attr:`~api.fairplay.evidence.Thresholds.min_positions` so (0 if none does)."""
    holders = reached_by(line, others)
    best = 0.0
    for player, other in others:
        shared = len((line & other) - common_with_others(holders, player))
        if shared >= THRESHOLDS.min_positions:
            best = max(best, shared / max(len(line), len(other)))
    return best


def honest_overlaps(planned: list[Planned], games: list[HonestGame], seed: int) -> list[dict[str, Any]]:
    """Each honest game, in a shuffled arrival order, with its closest earlier game of another
    player on its deal (:func:`_closest`), and whether one has the same log."""
    order = list(range(len(games)))
    random.Random(f"{seed}:order").shuffle(order)
    earlier: dict[str, list[tuple[int, frozenset[int], list[str]]]] = {}
    out = []
    for index in order:
        game, who = games[index], planned[index].person
        line = _line(game.code, game.moves)
        others = [(person, other, moves) for person, other, moves in earlier.get(game.code, []) if person != who]
        out.append({"code": game.code, "won": game.won, "positions": len(line),
                    "overlap": _closest(line, [(person, other) for person, other, _ in others]),
                    "equal": any(moves == game.moves for _, _, moves in others)})
        earlier.setdefault(game.code, []).append((who, line, game.moves))
    return out


def _victims(code: str, planned: list[Planned], games: list[HonestGame], nodes: int,
             most: int) -> list[tuple[int, list[str]]]:
    """The winning lines an attacker copies on a deal, with their players: its won honest games
    (the canonical log, undos and all), else the shipped solver's line (a winning line of a
    player of its own, -1)."""
    won = [(p.person, g.moves) for p, g in zip(planned, games) if g.code == code and g.won][:most]
    if won:
        return won
    line = attacks.offline_line(code, nodes)
    return [(-1, line)] if line is not None else []


def _attack(job: tuple[str, int, list[str], list[tuple[int, frozenset[int]]], int]) -> list[dict[str, Any]]:
    """Every swept attack on one victim's line, sent after every honest game of the deal: what it
    shares with the victim and with no other player (:func:`_closest`)."""
    code, player, victim, honest, nodes = job
    victim_line = _line(code, victim)
    others = [(person, line) for person, line in honest if person != player]
    found = []
    for name, share, lazy in SWEPT_ATTACKS:
        moves = victim if share >= 1 else attacks.copied_share(code, victim, share, nodes)
        if moves is None:
            continue
        if lazy:
            moves = attacks.lazy_foundations(code, moves)
        line = _line(code, moves)
        common = frozenset(reached_by(line, others))  # (reached by someone other than the victim)
        shared = len((line & victim_line) - common)
        best = shared / max(len(line), len(victim_line)) if shared >= THRESHOLDS.min_positions else 0.0
        equal = moves == victim
        found.append({"attack": name, "code": code, "overlap": best, "equal": equal})
    return found


def run(deals: int = 2, players: int = 100, victims: int = 5, seed: int = 2026, nodes: int = 50_000,
        workers: int = 1, say: Callable[[str], None] = print) -> dict[str, Any]:
    """The sweep's report (:func:`markdown` prints it)."""
    started = time.perf_counter()
    planned = popular_plan(deals, players, seed)
    with Pool(workers) as pool:
        games = pool.map(_play, [(seed, p) for p in planned], chunksize=4)
        say(f"played {len(games)} honest games on {deals * len(RULE_SETS)} deals in "
            f"{time.perf_counter() - started:.0f} s")
        honest = honest_overlaps(planned, games, seed)
        jobs = []
        for code in sorted({p.code for p in planned}):
            honest_lines = [(p.person, _line(code, g.moves)) for p, g in zip(planned, games) if g.code == code]
            jobs += [(code, player, victim, honest_lines, nodes)
                     for player, victim in _victims(code, planned, games, nodes, victims)]
        found = [row for rows in pool.map(_attack, jobs) for row in rows]
    say(f"ran {len(found)} attacks in {time.perf_counter() - started:.0f} s")
    return {"deals": deals, "players": players, "victims": victims, "seed": seed, "nodes": nodes, "honest": honest,
            "attacks": found,
            "seconds": round(time.perf_counter() - started, 1)}


def _rate(hits: int, total: int) -> str:
    low, high = wilson(hits, total)
    return f"{hits}/{total} ({100 * hits / total if total else 0:.1f} %, {100 * low:.1f}–{100 * high:.1f})"


def markdown(report: dict[str, Any]) -> str:
    """Per threshold: honest games flagged ``copy`` (all, won, per rule set), and each attack's
    runs flagged, with Wilson 95 % intervals (the threshold in force marked)."""
    honest, found = report["honest"], report["attacks"]
    names = [name for name, _, _ in SWEPT_ATTACKS if any(a["attack"] == name for a in found)]
    sets = [(prefix(r) + "-", title(r)) for r in RULE_SETS]
    lines = ["| overlap ≥ | honest games | won honest games | " + " | ".join(label for _, label in sets) + " | "
             + " | ".join(names) + " |", "|---:|" + "---:|" * (2 + len(sets) + len(names))]
    for threshold in THRESHOLDS_SWEPT:
        def flagged(row: dict[str, Any], threshold: float = threshold) -> bool:
            return bool(row["equal"] or row["overlap"] >= threshold)
        groups = [honest, [r for r in honest if r["won"]]] + [[r for r in honest if r["code"].startswith(start)]
                                                             for start, _ in sets]
        groups += [[a for a in found if a["attack"] == name] for name in names]
        mark = " (in force)" if threshold == THRESHOLDS.copy_overlap else ""
        lines.append(f"| {threshold:.2f}{mark} | " + " | ".join(_rate(sum(map(flagged, group)), len(group))
                                                               for group in groups) + " |")
    return "\n".join(lines)
