"""Evidence on the game, not on the text of its log (``docs/fair-play.md``).

A log is a path through positions. Its *effective line* is the path the finished game
actually went through: replayed with the engine, an undone action leaves the path
(what remains is the path on the undo stack) and a position reached again cuts the
loop in between (take-back loops, a card moved away and back). Each position is a
stable 64-bit hash of its layout *settled* (:func:`engine.layouts.settled_hash`: every
card that can go to a foundation put there, then the columns, the waste and the stock's
size; not score or counters, which padding changes), so that a move to a foundation
played later or earlier changes no position. Two logs that reach the same positions in
another order of independent moves differ by a position or two; padding changes nothing.

Everything here is pure (code and logs in, values out), so that the fair-play bench
computes exactly what the service does. The service feeds it what the database
knows about a deal (:class:`Known`); :mod:`api.fairplay.judging` stores and re-evaluates.

The thresholds are declared once, in :data:`THRESHOLDS`.
"""

from __future__ import annotations

import statistics
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from api.fairplay.flags import ASSISTED, COPY, SOLVER_LIKE, TIMING, UNTIMED, Finding
from engine import Position

# the layout hashes and the effective line are the engine's, so that their loop is compiled
from engine.layouts import effective_line, settled_hash
from engine.layouts import hash64 as hash64

#: a position as fair play hashes it (hints' ``reached``): settled, so that foundation moves change nothing
position_hash = settled_hash


@dataclass(frozen=True)
class Thresholds:
    """Every number fair play judges by, in one place (tuned from the corpus bench's measurements)."""

    #: overlap of two effective lines (:func:`overlap`: the positions they share, of the longer line)
    #: at and above which the later one copies the earlier
    copy_overlap: float = 0.35
    #: share of a record's positions on the service's solver lines that makes it ``solver-like``
    solver_share: float = 0.8
    #: share of a record's positions reached by hints handed to anyone that makes it ``assisted``
    hint_share: float = 0.5
    #: share on solver lines and hint positions together that makes it ``solver-like`` or ``assisted``
    known_share: float = 0.8
    #: lines sharing fewer positions than this are copies only when equal; shorter lines are never solver-like
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

#: a position is one of its line's index keys when its hash is a multiple of this (:func:`index_keys`)
KEY_EVERY = 4

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


def index_keys(positions: Iterable[int]) -> list[int]:
    """The index keys of a line (``line_bands``): its positions whose hash is a multiple of
    :data:`KEY_EVERY` (about one in four, the same ones in every line that reaches them), and
    its smallest position (so that two equal lines, however short, share a key). Two lines
    sharing n positions share about n / 4 keys: a copy of 20 positions misses every key
    with probability 0.3 %, of 40 positions 0.001 %.

    >>> index_keys([5, 8, 3, -4, 7])
    [-4, 8]
    """
    values = set(positions)
    if not values:
        return []
    return sorted({value for value in values if value % KEY_EVERY == 0} | {min(values)})


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def overlap(a: frozenset[int], b: frozenset[int]) -> float:
    """The positions two lines share, of the longer line: |a ∩ b| / max(|a|, |b|) (0 for two
    empty sets). A line that keeps a share of another's positions and is finished otherwise
    (a copy of an opening, of any long part) overlaps it by about that share, however it was
    finished, as long as it is not longer; near-equal lines overlap at least by their Jaccard
    similarity.

    >>> overlap(frozenset({1, 2, 3, 4}), frozenset({1, 2, 9}))
    0.5
    """
    longer = max(len(a), len(b))
    return len(a & b) / longer if longer else 0.0


def share(line: frozenset[int], known: frozenset[int] | set[int]) -> float:
    """The share of ``line``'s positions that lie in ``known``."""
    return len(line & known) / len(line) if line else 0.0


# -- the evidence ------------------------------------------------------------------

@dataclass(frozen=True)
class EarlierRecord:
    """A record stored before the one judged: its id, player, positions, what it copies and its
    log's hash (:func:`api.records.store.log_hash`)."""

    id: int
    player_id: int | None
    positions: frozenset[int]
    copy_of: int | None = None
    log_hash: str | None = None


@dataclass
class Known:
    """What the service knows about a deal when it judges a record of it.

    ``solver_lines``: the canonical texts of its solver lines (solvability answers, a
    challenge's par line); ``hints``: the positions hints handed out reached, each with
    the ids of the players they went to; ``own_hint_at``: when the record's own player
    first took a hint on the deal (ISO text), if they did; ``earlier``: the earlier
    records near this one (the index's candidates; records of the same player left out);
    ``log_hash``: the judged record's log's hash (the same log as an earlier record's is a copy
    of it, however short)."""

    solver_lines: Sequence[str] = ()
    hints: dict[int, set[int]] = field(default_factory=dict)
    own_hint_at: str | None = None
    earlier: Sequence[EarlierRecord] = ()
    log_hash: str | None = None


def judge_line(code: str, positions: frozenset[int], known: Known,
               limits: Thresholds = THRESHOLDS) -> list[Finding]:
    """The evidence on a record's effective line (``positions``) against what is known of its deal."""
    found: list[Finding] = []
    copied = _copy(positions, known.earlier, limits, known.log_hash)
    if copied is not None:
        found.append(copied)
    if known.own_hint_at is not None:
        found.append(Finding(ASSISTED.name, "the player took a hint on this deal before submitting",
                             {"first_hint_at": known.own_hint_at}))
    if len(positions) >= limits.min_positions:
        line = _known_line(code, positions, known, limits)
        if line is not None and not (line.flag == ASSISTED.name and known.own_hint_at is not None):
            found.append(line)
    return found


def _copy(positions: frozenset[int], earlier: Sequence[EarlierRecord], limits: Thresholds,
          log_hash: str | None = None) -> Finding | None:
    """The first earlier record this game copies: its very log (``log_hash``, however short),
    or its line (:func:`copies`), the positions other players' earlier lines also reached left
    out of the evidence (:func:`reached_by`; the lines of copies do not count: copying a game
    does not make its positions common)."""
    holders = reached_by(positions, [(_who(other), other.positions) for other in earlier if other.copy_of is None])
    for other in sorted(earlier, key=lambda record: record.id):
        common = common_with_others(holders, _who(other))
        if (log_hash is not None and other.log_hash == log_hash) or copies(positions, other.positions, common,
                                                                           limits):
            return copy_finding(other.copy_of or other.id, len((positions & other.positions) - common),
                                len(positions), len(other.positions), limits)
    return None


def _who(record: EarlierRecord) -> int:
    """Whose record it is (a record without a player stands for a player of its own)."""
    return record.player_id if record.player_id is not None else -record.id


def reached_by(positions: frozenset[int], lines: Iterable[tuple[int, frozenset[int]]]) -> dict[int, set[int]]:
    """For each of ``positions`` that one of ``lines`` (``(player, positions)``) reached, the players who did."""
    holders: dict[int, set[int]] = {}
    for player, line in lines:
        for position in positions & line:
            holders.setdefault(position, set()).add(player)
    return holders


def common_with_others(holders: dict[int, set[int]], player: int) -> frozenset[int]:
    """The positions someone other than ``player`` reached too (:func:`reached_by`): what the
    deal forces or what several players found, not evidence of copying from ``player``."""
    return frozenset(position for position, players in holders.items() if players - {player})


def copies(mine: frozenset[int], theirs: frozenset[int], common: frozenset[int] = frozenset(),
           limits: Thresholds = THRESHOLDS) -> bool:
    """Whether a line copies an earlier one: leaving out the ``common`` positions (those other
    players reached too, :func:`common_with_others`), the two share at least
    :attr:`Thresholds.min_positions` positions that make at least :attr:`Thresholds.copy_overlap`
    of the longer line (:func:`overlap`: a copied opening or any long part, however the rest
    was finished). Shorter lines are no evidence: two short games alike are common.

    >>> copies(frozenset(range(30)), frozenset(range(10, 60))), copies(frozenset({1}), frozenset({1}))
    (True, False)
    >>> copies(frozenset(range(30)), frozenset(range(25, 80))), copies(frozenset(range(30)), frozenset(range(30)),
    ...                                                               frozenset(range(15)))
    (False, False)
    """
    shared = len((mine & theirs) - common)
    return shared >= limits.min_positions and shared / max(len(mine), len(theirs)) >= limits.copy_overlap


def copy_finding(original: int, shared: int, mine: int, theirs: int, limits: Thresholds = THRESHOLDS) -> Finding:
    """The ``copy`` finding on a line of ``mine`` positions that shares ``shared`` with the
    ``theirs`` positions of record ``original`` (and with no other player's earlier line): the
    evidence names the original, the positions shared, their share of the original's line and
    of this one's, and the overlap judged."""
    of_original = shared / theirs if theirs else 0.0
    return Finding(COPY.name, f"the game goes through {of_original:.0%} of the positions of record {original} of "
                           f"another player ({shared} positions, {shared / mine if mine else 0:.0%} of this game's)",
                   {"original": original, "shared_positions": shared, "share_of_original": round(of_original, 4),
                    "share_of_game": round(shared / mine, 4) if mine else 0.0,
                    "overlap": round(shared / max(mine, theirs), 4) if shared else 0.0,
                    "threshold": limits.copy_overlap}, copy_of=original)


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
        return Finding(SOLVER_LIKE.name, f"{on_solver:.0%} of the game's positions lie on the service's solver line "
                                      f"for this deal ({on_known:.0%} on lines the service knows)",
                       {**evidence, "threshold": limits.solver_share})
    if on_hints >= limits.hint_share or on_known >= limits.known_share:
        return Finding(ASSISTED.name, f"{on_hints:.0%} of the game's positions were reached by hints the service "
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
            found.append(Finding(UNTIMED.name, "the game has no per-action times: it cannot be judged on time", {}))
        if elapsed_ms is not None and elapsed_ms < limits.min_ms_per_action * actions:
            found.append(_too_quick(elapsed_ms, actions, limits))
        return found
    found = []
    gaps = [times[0]] + [b - a for a, b in zip(times, times[1:])]
    median = statistics.median(gaps)
    instant = sum(1 for gap in gaps if gap < limits.instant_gap_ms) / len(gaps)
    if median < limits.min_median_gap_ms:
        found.append(Finding(TIMING.name, f"the median gap between actions is {median:g} ms, under the "
                                       f"{limits.min_median_gap_ms} ms people need",
                             {"median_gap_ms": median, "threshold_ms": limits.min_median_gap_ms}))
    elif instant > limits.instant_share:
        found.append(Finding(TIMING.name, f"{instant:.0%} of the gaps between actions are under "
                                       f"{limits.instant_gap_ms} ms: more than people play that fast",
                             {"instant_share": round(instant, 4), "instant_gap_ms": limits.instant_gap_ms,
                              "threshold": limits.instant_share}))
    total = times[-1] if elapsed_ms is None else max(elapsed_ms, times[-1])
    if elapsed_ms is not None and not times[-1] <= elapsed_ms <= times[-1] + limits.elapsed_slack_ms:
        found.append(Finding(TIMING.name, f"elapsed_ms ({elapsed_ms} ms) disagrees with the last action's time "
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
    return [Finding(TIMING.name, f"the client claims {claimed} ms of play, more than the {server_elapsed_ms} ms the "
                              f"server measured from the attempt's start to the record's arrival",
                    {"claimed_ms": claimed, "server_elapsed_ms": server_elapsed_ms})]


def _too_quick(total: int, actions: int, limits: Thresholds) -> Finding:
    return Finding(TIMING.name, f"{actions} actions in {total} ms: under the {limits.min_ms_per_action} ms an action "
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
