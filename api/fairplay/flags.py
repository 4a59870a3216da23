"""The fair-play flags, declared once (:data:`FLAGS`): the evidence raises them by these
declarations, and the review set, the pages' texts, the docs' table and the contract's enum
derive from them. A record is *ranked* (counts on the boards) when it carries no flag; a
flag that sends it to review gives it the status ``review`` (:func:`judgement`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from api.platform.marks import N_


@dataclass(frozen=True)
class FlagKind:
    """A fair-play flag: its name, whether it sends the record to review, the line the
    record and player pages show (translated; ``{id}`` is the original of a copy), and
    when it is raised, as ``docs/fair-play.md`` says it."""

    name: str
    review: bool
    page: str
    docs: str


ASSISTED = FlagKind(
    "assisted", False, N_("assisted: a hint was taken on this deal before submitting"),
    "the player took a hint on the deal before submitting, or the game's positions lie mostly on "
    "positions hints reached, whoever was handed them")
COPY = FlagKind(
    "copy", False, N_("copy: the game goes through {share} of the positions of record {id}, stored "
                      "earlier by another player"),
    "the game's effective line shares a long part with the line of one earlier record of another player, "
    "in positions no third player's earlier line reached (at least `min_positions` of them, making "
    "`copy_overlap` of the longer line), or equals it")
SOLVER_LIKE = FlagKind(
    "solver-like", True, N_("solver-like: the log follows the service's solver line"),
    "the game's positions lie mostly on a solver line the service stored for the deal")
TIMING = FlagKind(
    "timing", True, N_("timing: faster than people play, or the times disagree"),
    "the per-action times are faster than people play, or the game's time disagrees with them")
UNTIMED = FlagKind(
    "untimed", False, N_("untimed: the game has no per-action times"),
    "the record has no per-action times (`FAIRPLAY_TIMES_REQUIRED`)")
#: the flag of a record whose line the worker tier has not judged yet (``FAIRPLAY_JUDGE=worker``)
PENDING_FLAG = FlagKind(
    "pending", False, N_("pending: this game is still being judged"),
    "the record waits for the worker tier to judge it (`FAIRPLAY_JUDGE=worker`), within seconds of its "
    "submission; the judgement then replaces this flag")
EMPTY_LOG = FlagKind(
    "empty-log", False, N_("empty log: the game has no action"),
    "only on records stored before 0005 with no action; new empty logs are refused")

#: every fair-play flag, once
FLAGS: tuple[FlagKind, ...] = (ASSISTED, COPY, SOLVER_LIKE, TIMING, UNTIMED, PENDING_FLAG, EMPTY_LOG)
FLAG_KINDS = {kind.name: kind for kind in FLAGS}
#: what a flag does when present: every flag unranks; these also send the record to review
REVIEW_FLAGS = frozenset(kind.name for kind in FLAGS if kind.review)
PENDING = PENDING_FLAG.name
PENDING_REASON = "stored before its judgement: the worker tier judges its line within seconds"


@dataclass(frozen=True)
class Finding:
    """One piece of evidence (:mod:`api.fairplay.evidence`): a flag's name, its reason and what it rests on."""

    flag: str
    reason: str
    evidence: dict[str, Any]
    copy_of: int | None = None


def page_values(stored: dict[str, Any], copy_of: int | None) -> dict[str, Any]:
    """The values a flag's page text names (:attr:`FlagKind.page`) from a stored flag: ``id``, the
    original of a copy, and ``share``, the share of the original's positions the game goes through
    (``?`` where a stored flag does not say)."""
    share = (stored.get("evidence") or {}).get("share_of_original")
    return {"id": copy_of or "?", "share": "?" if share is None else f"{round(100 * share)} %"}


def flag(name: str, reason: str, **evidence: Any) -> dict[str, Any]:
    """One flag as records store and show it."""
    return {"flag": name, "reason": reason, "review": FLAG_KINDS[name].review, "evidence": evidence}


def is_pending(flags: Iterable[dict[str, Any]] | None) -> bool:
    """Whether stored ``flags`` say the record waits for its judgement (:data:`PENDING`)."""
    return any(found.get("flag") == PENDING for found in flags or [])


def flags_of(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """The stored flags of the evidence's findings."""
    return [flag(found.flag, found.reason, **found.evidence) for found in findings]


def judgement(flags: Sequence[dict[str, Any]], findings: Iterable[Finding], status: str,
              copy_of: int | None = None) -> dict[str, Any]:
    """The one rule from flags to a record's judged columns: ``flags`` (all it carries),
    ``ranked`` (none), ``status`` (``review`` if one of the new ``findings`` sends it there,
    else ``status``) and ``copy_of`` (``copy_of`` if known, else the original a finding names)."""
    findings = list(findings)
    if copy_of is None:
        copy_of = next((found.copy_of for found in findings if found.copy_of is not None), None)
    return {"flags": list(flags), "ranked": not flags,
            "status": "review" if any(FLAG_KINDS[found.flag].review for found in findings) else status,
            "copy_of": copy_of}
