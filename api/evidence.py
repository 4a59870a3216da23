"""Evidence on the game, not on the text of its log (``docs/fair-play.md``).

A log is a path through positions. Its *effective line* is the path the finished game
actually went through: replayed with the engine, an undone action leaves the path
(what remains is the path on the undo stack) and a position reached again cuts the
loop in between (take-back loops, a card moved away and back). Each position is a
stable 64-bit hash of its layout (columns with their face-down cards, foundations,
stock, waste; not score or counters, which padding changes). Two logs that reach
the same positions in another order of independent moves differ by a position or
two; padding changes nothing.

Everything here is pure (code and logs in, values out), so that the fair-play bench
computes exactly what the service does. The service feeds it what the database
knows about a deal (:class:`Known`); :mod:`api.fairplay` stores and re-evaluates.

The thresholds are declared once, in :data:`THRESHOLDS`.
"""

from __future__ import annotations

import statistics
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from engine import Position

# the layout hashes and the effective line are the engine's, so that their loop is compiled
from engine.layouts import effective_line, hash64
from engine.layouts import position_hash as position_hash


@dataclass(frozen=True)
class Thresholds:
    """Every number fair play judges by, in one place (tuned from the corpus bench's measurements)."""

    #: Jaccard similarity of two effective lines (their position sets) at and above which they are near-equal
    copy_jaccard: float = 0.8
    #: share of a record's positions on the service's solver lines that makes it ``solver-like``
    solver_share: float = 0.8
    #: share of a record's positions reached by hints handed to anyone that makes it ``assisted``
    hint_share: float = 0.5
    #: share on solver lines and hint positions together that makes it ``solver-like`` or ``assisted``
    known_share: float = 0.8
    #: effective lines shorter than this are never near-equal unless equal, nor called solver-like
    min_positions: int = 20
    #: a median gap between actions under this many ms is faster than people play
    min_median_gap_ms: int = 150
    #: gaps under this many ms count as instant …
    instant_gap_ms: int = 40
    #: … and more than this share of them is not a person's play (an app's auto-complete stays under it)
    instant_share: float = 0.3
    #: a game that took less than this many ms per effective action (the whole game's time) is too fast
    min_ms_per_action: int = 100
    #: ``elapsed_ms`` may run this long after the last action's time (the game's end screen)
    elapsed_slack_ms: int = 60_000


THRESHOLDS = Thresholds()

#: MinHash of a line: one-permutation hashing into this many bins, grouped into bands for the index
MINHASH_BINS, BAND_ROWS = 64, 4
BANDS = MINHASH_BINS // BAND_ROWS
_BIN_SHIFT, _VALUE_MASK = 64 - 6, (1 << 58) - 1  # 64 bins: the top 6 bits pick the bin


# -- positions and the effective line ------------------------------------------

def layout(position: Position) -> str:
    """A position without its score and counters, as text: the cards where they lie (for people and tests)."""
    return str(position).rsplit(" ", 3)[0]


@lru_cache(maxsize=1024)
def line_positions(code: str, canonical: str) -> frozenset[int]:
    """The positions of a stored line (a solver line, a record's log), cached: a deal's few
    solver lines are read by every submission of the deal."""
    return frozenset(effective_line(code, canonical.split()))


# -- the compact forms: a sorted set, MinHash bands ------------------------------

def pack(positions: Iterable[int]) -> bytes:
    """A set of positions as sorted big-endian 64-bit integers (8 bytes a position).

    >>> unpack(pack([3, -1, 3]))
    frozenset({3, -1})
    """
    values = sorted(set(positions))
    return struct.pack(f">{len(values)}q", *values)


def unpack(data: bytes | None) -> frozenset[int]:
    if not data:
        return frozenset()
    return frozenset(struct.unpack(f">{len(data) // 8}q", data))


def minhash(positions: Iterable[int]) -> list[int]:
    """One-permutation MinHash: the smallest value in each of :data:`MINHASH_BINS` bins
    (the hashes are uniform already), empty bins filled from the next full one
    (rotation), so that equal bins estimate the Jaccard similarity."""
    bins: list[int | None] = [None] * MINHASH_BINS
    for value in positions:
        unsigned = value & 0xFFFFFFFFFFFFFFFF
        slot, rest = unsigned >> _BIN_SHIFT, unsigned & _VALUE_MASK
        current = bins[slot]
        if current is None or rest < current:
            bins[slot] = rest
    if all(b is None for b in bins):
        return []
    filled = []
    for index in range(MINHASH_BINS):
        distance = 0
        while bins[(index + distance) % MINHASH_BINS] is None:
            distance += 1
        filled.append((bins[(index + distance) % MINHASH_BINS] or 0) + distance * (_VALUE_MASK + 1))
    return filled


def band_keys(code: str, positions: Iterable[int]) -> list[int]:
    """The index keys of a line: one per band of :data:`BAND_ROWS` MinHash bins, with the
    deal in each key. Two lines of Jaccard similarity J share a key with probability
    1 - (1 - J^4)^16: 0.9998 at 0.8, 0.64 at 0.5, 0.12 at 0.3."""
    signature = minhash(positions)
    if not signature:
        return []
    return [hash64(f"{code} {band} " + " ".join(map(str, signature[band * BAND_ROWS:(band + 1) * BAND_ROWS])))
            for band in range(BANDS)]


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def share(line: frozenset[int], known: frozenset[int] | set[int]) -> float:
    """The share of ``line``'s positions that lie in ``known``."""
    return len(line & known) / len(line) if line else 0.0


# -- the evidence ------------------------------------------------------------------

@dataclass(frozen=True)
class EarlierRecord:
    """A record stored before the one judged: its id, player, positions and what it copies."""

    id: int
    player_id: int | None
    positions: frozenset[int]
    copy_of: int | None = None


@dataclass
class Known:
    """What the service knows about a deal when it judges a record of it.

    ``solver_lines``: the canonical texts of its solver lines (solvability answers, a
    challenge's par line); ``hints``: the positions hints handed out reached, each with
    the ids of the players they went to; ``own_hint_at``: when the record's own player
    first took a hint on the deal (ISO text), if they did; ``earlier``: the earlier
    records near this one (the index's candidates; records of the same player left out)."""

    solver_lines: Sequence[str] = ()
    hints: dict[int, set[int]] = field(default_factory=dict)
    own_hint_at: str | None = None
    earlier: Sequence[EarlierRecord] = ()


@dataclass(frozen=True)
class Finding:
    """One piece of evidence: a flag's name, its reason and what it rests on."""

    flag: str
    reason: str
    evidence: dict[str, Any]
    copy_of: int | None = None


def judge_line(code: str, positions: frozenset[int], known: Known,
               limits: Thresholds = THRESHOLDS) -> list[Finding]:
    """The evidence on a record's effective line (``positions``) against what is known of its deal."""
    found: list[Finding] = []
    copied = _copy(positions, known.earlier, limits)
    if copied is not None:
        found.append(copied)
    if known.own_hint_at is not None:
        found.append(Finding("assisted", "the player took a hint on this deal before submitting",
                             {"first_hint_at": known.own_hint_at}))
    if len(positions) >= limits.min_positions:
        line = _known_line(code, positions, known, limits)
        if line is not None and not (line.flag == "assisted" and known.own_hint_at is not None):
            found.append(line)
    return found


def _copy(positions: frozenset[int], earlier: Sequence[EarlierRecord], limits: Thresholds) -> Finding | None:
    """The first earlier record whose line is near-equal to this one (equal, for short lines)."""
    if not positions:
        return None
    for other in sorted(earlier, key=lambda record: record.id):
        similarity = jaccard(positions, other.positions)
        short = min(len(positions), len(other.positions)) < limits.min_positions
        if similarity >= 1.0 or (not short and similarity >= limits.copy_jaccard):
            original = other.copy_of or other.id
            return Finding("copy", f"the game goes through the same positions as record {original} of another "
                                   f"player ({similarity:.0%} alike)",
                           {"original": original, "jaccard": round(similarity, 4), "threshold": limits.copy_jaccard},
                           copy_of=original)
    return None


def _known_line(code: str, positions: frozenset[int], known: Known, limits: Thresholds) -> Finding | None:
    """``solver-like`` or ``assisted`` when the line lies mostly on the deal's solver lines or hints."""
    solver: set[int] = set()
    for line in known.solver_lines:
        solver |= line_positions(code, line)
    hinted = set(known.hints)
    on_solver, on_hints = share(positions, solver), share(positions, hinted)
    on_known = share(positions, solver | hinted)
    evidence = {"solver_share": round(on_solver, 4), "hint_share": round(on_hints, 4),
                "known_share": round(on_known, 4), "positions": len(positions)}
    hinted_to = sorted({player for spot in positions & hinted for player in known.hints[spot]})
    if on_solver >= limits.solver_share or (on_known >= limits.known_share and on_solver >= on_hints):
        return Finding("solver-like", f"{on_solver:.0%} of the game's positions lie on the service's solver line "
                                      f"for this deal ({on_known:.0%} on lines the service knows)",
                       {**evidence, "threshold": limits.solver_share})
    if on_hints >= limits.hint_share or on_known >= limits.known_share:
        return Finding("assisted", f"{on_hints:.0%} of the game's positions were reached by hints the service "
                                   f"handed out on this deal", {**evidence, "hinted_players": hinted_to,
                                                                "threshold": limits.hint_share})
    return None


# -- times ---------------------------------------------------------------------------

def judge_times(times: Sequence[int] | None, elapsed_ms: int | None, actions: int, required: bool = True,
                limits: Thresholds = THRESHOLDS) -> list[Finding]:
    """The evidence in a game's times: none at all (``untimed``, when times are ``required``),
    gaps faster than people play, or a total time that disagrees (``timing``).
    ``actions``: how many actions the log has."""
    if not times:
        found = []
        if required:
            found.append(Finding("untimed", "the game has no per-action times: it cannot be judged on time", {}))
        if elapsed_ms is not None and elapsed_ms < limits.min_ms_per_action * actions:
            found.append(_too_quick(elapsed_ms, actions, limits))
        return found
    found = []
    gaps = [times[0]] + [b - a for a, b in zip(times, times[1:])]
    median = statistics.median(gaps)
    instant = sum(1 for gap in gaps if gap < limits.instant_gap_ms) / len(gaps)
    if median < limits.min_median_gap_ms:
        found.append(Finding("timing", f"the median gap between actions is {median:g} ms, under the "
                                       f"{limits.min_median_gap_ms} ms people need",
                             {"median_gap_ms": median, "threshold_ms": limits.min_median_gap_ms}))
    elif instant > limits.instant_share:
        found.append(Finding("timing", f"{instant:.0%} of the gaps between actions are under "
                                       f"{limits.instant_gap_ms} ms: more than people play that fast",
                             {"instant_share": round(instant, 4), "instant_gap_ms": limits.instant_gap_ms,
                              "threshold": limits.instant_share}))
    total = times[-1] if elapsed_ms is None else max(elapsed_ms, times[-1])
    if elapsed_ms is not None and not times[-1] <= elapsed_ms <= times[-1] + limits.elapsed_slack_ms:
        found.append(Finding("timing", f"elapsed_ms ({elapsed_ms} ms) disagrees with the last action's time "
                                       f"({times[-1]} ms)", {"elapsed_ms": elapsed_ms, "last_action_ms": times[-1],
                                                             "slack_ms": limits.elapsed_slack_ms}))
    elif total < limits.min_ms_per_action * actions and not found:
        found.append(_too_quick(total, actions, limits))
    return found


def judge_server_time(server_elapsed_ms: int | None, elapsed_ms: int | None,
                      times: Sequence[int] | None) -> list[Finding]:
    """``timing`` when a challenge attempt's game claims more time than the server measured from
    the attempt's start to the record's arrival (the client can only have played less: its clock
    starts after the code reached it and stops before the record left it).

    >>> judge_server_time(60_000, 59_000, [1000, 58_000]), judge_server_time(None, 10 ** 9, None)
    ([], [])
    >>> judge_server_time(60_000, 61_000, None)[0].evidence["claimed_ms"]
    61000
    """
    claimed = max([value for value in (elapsed_ms, times[-1] if times else None) if value is not None], default=None)
    if server_elapsed_ms is None or claimed is None or claimed <= server_elapsed_ms:
        return []
    return [Finding("timing", f"the client claims {claimed} ms of play, more than the {server_elapsed_ms} ms the "
                              f"server measured from the attempt's start to the record's arrival",
                    {"claimed_ms": claimed, "server_elapsed_ms": server_elapsed_ms})]


def _too_quick(total: int, actions: int, limits: Thresholds) -> Finding:
    return Finding("timing", f"{actions} actions in {total} ms: under the {limits.min_ms_per_action} ms an action "
                             f"people need", {"total_ms": total, "actions": actions,
                                              "threshold_ms_per_action": limits.min_ms_per_action})


# -- the bench's entry point -----------------------------------------------------------

def evaluate(code: str, actions: Sequence[str], known: Known | None = None, times: Sequence[int] | None = None,
             elapsed_ms: int | None = None, times_required: bool = True,
             limits: Thresholds = THRESHOLDS) -> list[Finding]:
    """All the evidence on one game without a database: its effective line judged against
    ``known`` (nothing known by default) and its times. ``actions``: a verified log's canonical texts."""
    positions = frozenset(effective_line(code, actions))
    return (judge_line(code, positions, known or Known(), limits)
            + judge_times(times, elapsed_ms, len(actions), times_required, limits))
