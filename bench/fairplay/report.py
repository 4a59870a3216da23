"""The measurement as Markdown tables (to paste into ``docs/fair-play.md``), and its figures."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .attacks import ATTACKS, SHOULD_RANK
from .measure import KNOWN_FLAGS, RULE_SETS, prefix, title, wilson


def rate(hits: int, total: int) -> str:
    """``hits`` of ``total`` with the rate and its Wilson 95 % interval, in percent.

    >>> rate(3, 600)
    '3 (0.50 %, 0.17–1.46)'
    """
    low, high = wilson(hits, total)
    share = hits / total if total else 0.0
    return f"{hits} ({100 * share:.2f} %, {100 * low:.2f}–{100 * high:.2f})"


def flag_names(records: Iterable[dict[str, Any]]) -> list[str]:
    """The known flags, then any other flag a record carries (the evidence may grow new ones)."""
    seen = {name for record in records for name in record["flags"]}
    return [*KNOWN_FLAGS, *sorted(seen - set(KNOWN_FLAGS))]


def honest_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per rule set and in total: games, wins, and per flag how many honest records carry it (in the end)."""
    games = report["honest"]
    names = flag_names(g["final"] for g in games)
    groups = [(title(r), [g for g in games if g["code"].startswith(prefix(r) + "-")]) for r in RULE_SETS]
    rows = []
    for label, mine in [*groups, ("all", games)]:
        row = {"rule set": label, "games": len(mine), "wins": sum(g["won"] for g in mine),
               "unranked": sum(not g["final"]["ranked"] for g in mine),
               "review": sum(g["final"]["status"] == "review" for g in mine)}
        row.update({name: sum(name in g["final"]["flags"] for g in mine) for name in names})
        rows.append(row)
    return rows


def count(games: list[dict[str, Any]], name: str) -> int:
    """Honest games whose record, in the end, is unranked (``name`` "unranked") or carries the flag ``name``."""
    return sum((not g["final"]["ranked"]) if name == "unranked" else name in g["final"]["flags"] for g in games)


def caught(records: list[dict[str, Any]], race: bool) -> bool:
    """An attack is caught when its record is unranked (a race: when at most one of its records ranks)."""
    if not records:
        return False
    ranked = sum(r["ranked"] for r in records)
    return ranked <= 1 if race else ranked == 0


def attack_cell(attack: dict[str, Any]) -> str:
    race = attack["attack"].startswith("race")
    records = attack["final"]
    if not records:
        return f"not run ({attack['note']})"
    flags = sorted({name for r in records for name in r["flags"]})
    verdict = "caught" if caught(records, race) else "**NOT caught**"
    if attack["attack"] in SHOULD_RANK:  # (not an attack: a control that should rank)
        verdict = "**unranked**" if caught(records, race) else "ranks, as it should"
    detail = f"{sum(r['ranked'] for r in records)} of {len(records)} ranked" if race else ", ".join(flags) or "ranked"
    if "after_service_solved" in attack:
        first = "unranked" if not attack["records"][0]["ranked"] else "ranked"
        detail += f"; at submission {first}"
    return f"{verdict} ({detail})"


def markdown(report: dict[str, Any]) -> str:
    rows = honest_rows(report)
    names = [k for k in rows[0] if k not in ("rule set", "games", "wins")]
    lines = ["Honest games: records with each flag, of all games (rate, Wilson 95 % interval in %).", "",
             "| rule set | games | wins | " + " | ".join(n if n in ("unranked", "review") else f"`{n}`"
                                                     for n in names) + " |",
             "|---|---:|---:|" + "---:|" * len(names)]
    for row in rows:
        lines.append(f"| {row['rule set']} | {row['games']} | {row['wins']} | "
                     + " | ".join(rate(row[n], row["games"]) for n in names) + " |")
    lines.append("")
    names = ["unranked", *flag_names(g["final"] for g in report["honest"])]
    for label, key in (("Won honest games only", "won"), ("Honest games with per-action times", "timed"),
                       ("Games on challenge-like deals", "challenge")):
        subset = [g for g in report["honest"] if g[key]]
        lines.append(f"- {label} ({len(subset)}): " + ", ".join(f"{n if n == 'unranked' else f'`{n}`'} "
                                                              f"{rate(count(subset, n), len(subset))}"
                                                              for n in names) + ".")
    changed = sum(g["final"] != g["at_submission"] for g in report["honest"])
    lines += [f"- Honest records whose evidence changed after submission: {changed}.", ""]
    sets = [prefix(r) for r in RULE_SETS]
    lines += ["| attack | " + " | ".join(title(r) for r in RULE_SETS) + " |", "|---|" + "---|" * len(sets)]
    for kind in ATTACKS:
        cells = {a["rule_set"]: attack_cell(a) for a in report["attacks"] if a["attack"] == kind}
        if cells:
            lines.append(f"| {kind} | " + " | ".join(cells.get(s, "–") for s in sets) + " |")
    return "\n".join(lines)


def summary(report: dict[str, Any]) -> str:
    seconds = report["seconds"]
    head = (f"{report['games']} honest games on {report['deals']} deals by {report['people']} players, seed "
            f"{report['seed']}, solver budget {report['nodes']} nodes (deals: {report['solvability']})")
    timing = ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
    return f"{head}\n\n{markdown(report)}\n\ntime (wall clock; cpu: processor time of every process): {timing}"
