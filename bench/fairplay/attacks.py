"""The attacks of issue 21, as logs and times a cheater would send.

Each function turns a line (canonical text actions) into the log of one attack; the
service side (which line, which accounts, in which order) is :mod:`bench.fairplay.measure`.
Engine and verifier only, deterministic.

- :func:`padded_with_undos`: "undo, then the same move again", ``pairs`` times;
- :func:`padded_with_takebacks`: a card down from a foundation and up again, ``loops`` times;
- :func:`swapped_pair`: one pair of independent adjacent moves played the other way round;
- :func:`inserted_undo`: one undo pair in the middle;
- :func:`faked_times`: no times, ``elapsed_ms`` 1, or half of the gaps 0 ms (every other attack
  sends :func:`plausible_times`);
- :func:`offline_line`: the line of the solver that ships with the project, run locally;
- :func:`lazy_foundations`: each move to a foundation put off until its pile is used again,
  the suit's next card goes home, or the log ends (issue 43: the same moves, the same score);
- :func:`copied_share`: the first part of a line, finished by the shipped solver (issue 42).
"""

from __future__ import annotations

import math
import random
from typing import Any

from engine import Game, Move
from engine.actions import parse_text
from verifier import replay
from verifier.solving import solve_code

#: every attack the bench runs, in the order of issue 21's list (the first three: what fair play already caught)
ATTACKS = (
    "exact-copy", "copy-other-notation", "service-line",
    "service-line+12-undo-pairs", "service-line+12-takeback-loops",
    "near-copy-swapped-pair", "near-copy-inserted-undo", "race-10-players",
    "second-account-hint-line", "offline-solver-line",
    "times-none", "times-elapsed-1", "times-half-gaps-0",
    "lazy-copy", "lazy-service-line",
    "copy-10%+solver", "copy-50%+solver", "copy-70%+solver", "copy-85%+solver",
)
#: the attacks whose record should rank (a game sharing only its first tenth with another is not a copy)
SHOULD_RANK = ("copy-10%+solver",)
#: the copy attacks: the share of the copied record's actions kept before a solver finishes the game
COPY_SHARES = {f"copy-{round(share * 100)}%+solver": share for share in (0.1, 0.5, 0.7, 0.85)}


def spread(count: int, length: int) -> list[int]:
    """``count`` indices spread evenly over ``range(length)`` (fewer when the range is short).

    >>> spread(3, 10)
    [2, 5, 7]
    """
    count = min(count, length)
    return sorted({(k + 1) * length // (count + 1) for k in range(count)})


def padded_with_undos(line: list[str], pairs: int = 12) -> list[str]:
    """After ``pairs`` actions spread over the line: ``U`` and the same action again.

    >>> padded_with_undos(["a", "b", "c"], 1)
    ['a', 'b', 'U', 'b', 'c']
    """
    marks, out = set(spread(pairs, len(line))), []
    for index, action in enumerate(line):
        out.append(action)
        if index in marks:
            out += ["U", action]
    return out


def padded_with_takebacks(code: str, line: list[str], loops: int = 12) -> list[str]:
    """Before ``loops`` actions spread over the places where a take-back is legal: a card
    from a foundation down onto a column, and the same card up again. The game goes on from
    the same cards' places (Yukon's score rises by 10 a loop: take-backs cost nothing there)."""
    game, options = Game.from_code(code), []
    for index, action in enumerate(line):
        takebacks = [a for a in game.legal_actions() if isinstance(a, Move) and a.source == "F"]
        if takebacks:
            options.append((index, takebacks[0]))
        game.push_text(action)
    chosen = {options[k][0]: options[k][1] for k in spread(loops, len(options))}
    game, out = Game.from_code(code), []
    for index, action in enumerate(line):
        if index in chosen:
            down = game.push(chosen[index])
            assert isinstance(down, Move) and down.card is not None
            up = game.push(Move("T", down.target_index or 0, "F", down.source_index, down.card))  # the same slot
            out += [str(down), str(up)]
        out.append(str(game.push_text(action)))
    return out


def swapped_pair(code: str, log: list[str]) -> list[str] | None:
    """The log with one pair of adjacent moves swapped that lead to the same place either way
    (the pair nearest the middle), or None when there is none. The result replays legal to the
    same final position."""
    final = replay(code, log).position
    middle = len(log) // 2
    for index in sorted(range(len(log) - 1), key=lambda i: abs(i - middle)):
        a, b = log[index], log[index + 1]
        if "U" in (a, b) or a == b:
            continue
        swapped = log[:index] + [b, a] + log[index + 2:]
        verdict = replay(code, swapped)
        if verdict.legal and verdict.position == final:
            return verdict.canonical
    return None


def inserted_undo(log: list[str]) -> list[str]:
    """One undo pair ("undo, then the same move again") in the middle of the log.

    >>> inserted_undo(["a", "b", "c", "d"])
    ['a', 'b', 'c', 'U', 'c', 'd']
    """
    return padded_with_undos(log, 1)


def faked_times(kind: str, actions: int, gap_ms: int = 1_500) -> tuple[list[int] | None, int | None]:
    """``(times, elapsed_ms)`` of a faked clock: ``times-none`` (neither), ``times-elapsed-1``
    (only ``elapsed_ms: 1``), ``times-half-gaps-0`` (every other gap 0 ms, the rest ``gap_ms``).

    >>> faked_times("times-half-gaps-0", 4, 1000)
    ([1000, 1000, 2000, 2000], 2000)
    """
    if kind == "times-none":
        return None, None
    if kind == "times-elapsed-1":
        return None, 1
    if kind == "times-half-gaps-0":
        times, now = [], 0
        for index in range(actions):
            now += gap_ms if index % 2 == 0 else 0
            times.append(now)
        return times, now
    raise ValueError(f"no faked clock {kind!r}")


def plausible_times(actions: int, rng: random.Random, gap_ms: float = 1_800) -> tuple[list[int], int]:
    """``(times, elapsed_ms)`` such as a person's client sends: log-normal gaps around ``gap_ms``, so
    that an attack is judged on its game, not caught for want of times."""
    times, now = [], 0.0
    for _ in range(actions):
        now += math.exp(rng.gauss(math.log(gap_ms), 0.5))
        times.append(int(now))
    return times, int(now + rng.uniform(0, 3_000))


def offline_line(code: str, nodes: int) -> list[str] | None:
    """The winning line the project's own solver finds locally (``verifier solve``), or None."""
    answer = solve_code(code, budget_seconds=None, max_nodes=nodes)
    return list(answer.actions) if answer.status == "winnable" else None


def _piles(action: Move) -> set[str]:
    """The piles an action takes from or puts on (the waste as ``W``, a foundation as ``F``)."""
    return {action.source_name, "F" if action.target == "F" else action.target_name}


def lazy_foundations(code: str, line: list[str]) -> list[str]:
    """``line`` with each move to a foundation put off until the pile it leaves is used again
    (taken from, built on, drawn onto), the suit's next card goes home, a card comes down from a
    foundation, or the log's end: the same actions in effect and the same score, in another
    order (issue 43; the undone actions are left out first, as a copier would). The result
    replays legal to the same final position.

    >>> lazy_foundations("YU1-C-AAAAAAB", []) == []
    True
    """
    game, out, waiting = Game.from_code(code), [], []  # waiting: the moves put off, in order
    in_effect: list[str] = []
    for text in line:
        if text == "U":
            in_effect.pop()
        else:
            in_effect.append(text)

    def flush(keep: Any) -> None:
        for action in [a for a in waiting if not keep(a)]:
            out.append(str(game.push(action)))
            waiting.remove(action)

    for text in in_effect:
        action = parse_text(text)
        if isinstance(action, Move) and action.target == "F":
            assert action.card is not None
            suit, pile = action.card.suit, action.source_name
            # (the suit's earlier card goes home first, and so does a card on top of this one)
            flush(lambda w, suit=suit, pile=pile: w.card.suit != suit and w.source_name != pile)
            waiting.append(action)
            continue
        if isinstance(action, Move) and action.source != "F":
            used = _piles(action)
            flush(lambda w, used=used: w.source_name not in used)
        elif text == "S":
            flush(lambda w: w.source_name != "W")
        else:  # a card down from a foundation
            flush(lambda w: False)
        out.append(str(game.push_text(text)))
    flush(lambda w: False)
    return out


def copied_share(code: str, line: list[str], share: float, nodes: int) -> list[str] | None:
    """The first ``share`` of ``line``'s actions, then a winning line the shipped solver finds
    from there within ``nodes`` (None when it finds none): a copy of part of a game, finished
    by a solver (issue 42)."""
    kept = line[:round(len(line) * share)]
    answer = solve_code(code, kept, budget_seconds=None, max_nodes=nodes)
    return [*kept, *answer.actions] if answer.status == "winnable" else None


def other_notation(log: list[str]) -> list[object]:
    """The same log in another spelling: JSON objects in lower case.

    >>> other_notation(["T7:AS>F1", "S", "U"])
    [{'from': 't7', 'card': 'as', 'to': 'f1'}, {'action': 'draw'}, {'action': 'undo'}]
    """
    out: list[object] = []
    for action in log:
        if action == "S":
            out.append({"action": "draw"})
        elif action == "U":
            out.append({"action": "undo"})
        else:
            source, target = action.split(">")
            pile, _, card = source.partition(":")
            out.append({"from": pile.lower(), "card": card.lower(), "to": target.lower()})
    return out
