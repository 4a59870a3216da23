"""The soak's promises, checked at the end of a run on what it saw (pure: no service needed).

- every acknowledged record stored exactly once: each id a ``POST /records`` answered
  ``201``/``200`` is stored, for that player and deal, and no player and deal has more
  stored records than distinct acknowledged ids (a record stored twice);
- each ``record.created`` delivered exactly once with a valid signature: one event per
  stored record, taken by the receiver once, every signature valid, none for a record
  that is not stored;
- nothing left pending after the drain: no record waiting for its judgement, no webhook
  delivery pending, no task queued;
- memory: no process grows by more than ``max_growth`` MB a minute after warm-up (the
  least-squares slope of its RSS samples), judged when it was sampled for at least
  ``min_minutes``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """One invariant: whether it held, and what was seen."""

    name: str
    ok: bool
    detail: str
    judged: bool = True  # False: too little data to judge (it does not fail the run)


@dataclass
class Seen:
    """What a run saw, for :func:`check`."""

    #: record id -> (player, code) of every acknowledged submission (200 or 201)
    acknowledged: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: the stored records of the run's players: (id, player, code)
    stored: list[tuple[int, str, str]] = field(default_factory=list)
    #: the receiver's lines: {"id", "type", "record", "valid"}
    receipts: list[dict[str, object]] = field(default_factory=list)
    #: what is still pending after the drain, by name (records unjudged, deliveries pending, tasks queued)
    pending: dict[str, int] = field(default_factory=dict)
    #: per process, its RSS samples after warm-up: (minutes, MB)
    rss: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def slope(samples: list[tuple[float, float]]) -> float:
    """The least-squares slope of ``samples`` (y per x); 0 with fewer than two distinct x."""
    n = len(samples)
    if n < 2:
        return 0.0
    mean_x = sum(x for x, _ in samples) / n
    mean_y = sum(y for _, y in samples) / n
    var = sum((x - mean_x) ** 2 for x, _ in samples)
    if var == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in samples) / var


def _few(items: Iterable[object], most: int = 5) -> str:
    items = list(items)
    return ", ".join(map(str, items[:most])) + (f" … ({len(items)} in all)" if len(items) > most else "")


def stored_once(seen: Seen) -> Finding:
    name = "every acknowledged record stored exactly once"
    by_id = {row[0]: row for row in seen.stored}
    missing = [i for i in seen.acknowledged if i not in by_id]
    wrong = [i for i, (player, code) in seen.acknowledged.items()
             if i in by_id and by_id[i][1:] != (player, code)]
    acked = Counter(seen.acknowledged.values())
    rows = Counter((player, code) for _, player, code in seen.stored)
    twice = [key for key, count in acked.items() if rows[key] > count]
    unacknowledged = sum(count for key, count in rows.items() if key not in acked)
    problems = []
    if missing:
        problems.append(f"{len(missing)} acknowledged but not stored (ids {_few(sorted(missing))})")
    if wrong:
        problems.append(f"{len(wrong)} stored for another player or deal (ids {_few(sorted(wrong))})")
    if twice:
        problems.append(f"{len(twice)} player-and-deal pairs stored more often than acknowledged ({_few(twice)})")
    note = f"; {unacknowledged} stored for submissions that got no answer" if unacknowledged else ""
    return Finding(name, not problems, "; ".join(problems) if problems else
                   f"{len(seen.acknowledged):,} acknowledged, each stored once{note}")


def delivered_once(seen: Seen) -> Finding:
    name = "each record.created delivered exactly once, signature valid"
    created = [r for r in seen.receipts if r.get("type") == "record.created"]
    invalid = [r.get("id") for r in seen.receipts if not r.get("valid")]
    stored = {row[0] for row in seen.stored}
    taken = Counter(r.get("record") for r in created if r.get("valid"))
    events = defaultdict(set)
    for r in created:
        events[r.get("record")].add(r.get("id"))
    never = sorted(stored - set(taken))
    repeated = sorted(i for i, count in taken.items() if count > 1 and i in stored)
    stranger = sorted(str(i) for i in taken if i not in stored)
    several = sorted(i for i, ids in events.items() if len(ids) > 1 and i in stored)
    problems = []
    if invalid:
        problems.append(f"{len(invalid)} with an invalid signature ({_few(invalid)})")
    if never:
        problems.append(f"{len(never)} stored records never delivered (ids {_few(never)})")
    if repeated:
        problems.append(f"{len(repeated)} delivered more than once (ids {_few(repeated)})")
    if several:
        problems.append(f"{len(several)} records with more than one event (ids {_few(several)})")
    if stranger:
        problems.append(f"{len(stranger)} deliveries for records not stored (ids {_few(stranger)})")
    return Finding(name, not problems, "; ".join(problems) if problems else
                   f"{len(stored):,} records, {len(created):,} deliveries, each once")


def nothing_pending(seen: Seen) -> Finding:
    left = {what: count for what, count in seen.pending.items() if count}
    return Finding("nothing left pending after the drain", not left,
                   ", ".join(f"{what}: {count}" for what, count in left.items()) if left else
                   ", ".join(f"{what}: 0" for what in seen.pending) or "nothing measured")


def memory(seen: Seen, max_growth: float = 1.0, min_minutes: float = 3.0) -> Finding:
    name = f"no process grows by more than {max_growth:g} MB/min after warm-up"
    judged = {who: samples for who, samples in seen.rss.items()
              if samples and samples[-1][0] - samples[0][0] >= min_minutes}
    if not judged:
        return Finding(name, True, f"not judged: no process sampled for {min_minutes:g} min after warm-up",
                       judged=False)
    rates = {who: slope(samples) for who, samples in judged.items()}
    over = {who: rate for who, rate in rates.items() if rate > max_growth}
    worst = max(rates, key=lambda who: rates[who])
    return Finding(name, not over,
                   ("; ".join(f"{who} {rate:+.2f} MB/min" for who, rate in over.items()) if over else
                    f"largest {worst} {rates[worst]:+.2f} MB/min over {len(rates)} processes"))


def check(seen: Seen, max_growth: float = 1.0, min_minutes: float = 3.0) -> list[Finding]:
    """Every invariant of the module, in order."""
    return [stored_once(seen), delivered_once(seen), nothing_pending(seen), memory(seen, max_growth, min_minutes)]


def report(findings: list[Finding]) -> tuple[str, bool]:
    """The findings as lines (``ok``/``BROKEN``/``not judged``), and whether all held."""
    lines = [f"  {'ok' if f.ok and f.judged else 'not judged' if f.ok else 'BROKEN':10s} {f.name}: {f.detail}"
             for f in findings]
    return "\n".join(lines), all(f.ok for f in findings)
