"""Re-verification: replay every stored record with the engine installed now
(``flask --app api records reverify``).

A record whose replay gives what is stored (legal, the same counters, the same
canonical log, the same earned points, its claims still matching) is stamped with the current engine
and rules version and the time. A record whose result changed is reported and
left exactly as it is, still stamped with the engine that produced its numbers:
what to do about it (hide it, keep it) is an operator's decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

import engine
from api.platform.models import Record
from engine import EngineError
from verifier import Verdict, replay
from verifier.earned import earned

BATCH = 500
#: the stored fields a replay recomputes
RECOMPUTED = ("won", "score", "moves", "actions", "undos", "takebacks", "foundation_cards")


@dataclass(frozen=True)
class Change:
    """A record whose replay no longer gives what is stored."""

    record_id: int
    player: str
    code: str
    differences: tuple[str, ...]

    def __str__(self) -> str:
        return f"record {self.record_id} ({self.player}, {self.code}): {'; '.join(self.differences)}"


def differences(record: Record, verdict: Verdict) -> list[str]:
    """What the replay gives that the record does not say, in words; empty when nothing changed."""
    if verdict.error is not None:
        e = verdict.error
        return [f"now illegal: action {e.index} {e.action!r}: {e.rule}: {e.message}"]
    out = [f"{name} {getattr(record, name)!r} -> {getattr(verdict, name)!r}"
           for name in RECOMPUTED if getattr(record, name) != getattr(verdict, name)]
    points = earned(record.code, verdict.canonical_text.split(), verdict.score, verdict.takebacks)
    if points != record.earned:
        out.append(f"earned {record.earned!r} -> {points!r}")
    if verdict.canonical_text != record.canonical:
        out.append("the canonical log is written differently now")
    if verdict.claims_match is False:
        wrong = [f"{name} claimed {c['claimed']!r}, replay gives {c['actual']!r}"
                 for name, c in (verdict.claims or {}).items() if not c["match"]]
        out.append("claims no longer match: " + ", ".join(wrong))
    return out


def reverify_records(session: Session, *, update: bool = True, progress: Callable[[int], None] = lambda n: None,
                     first_id: int | None = None, last_id: int | None = None) -> Iterator[Change]:
    """Replay every record in id order (those with ids ``first_id`` … ``last_id`` when
    given: one task's range on the worker tier), a batch at a time; yield each one
    that changed. With ``update``, each unchanged record gets the current engine
    version and ``verified_at``."""
    done_id = None if first_id is None else first_id - 1
    while True:
        query = select(Record)
        if done_id is not None:
            query = query.where(Record.id > done_id)
        if last_id is not None:
            query = query.where(Record.id <= last_id)
        batch = session.scalars(query.order_by(Record.id).limit(BATCH)).all()
        if not batch:
            return
        now = datetime.now(UTC)
        for record in batch:
            try:
                changed = differences(record, replay(record.code, record.canonical, record.claimed))
            except EngineError as error:  # a stored code the engine no longer reads
                changed = [f"cannot be replayed: {error}"]
            if changed:
                yield Change(record.id, record.player, record.code, tuple(changed))
            elif update:
                record.engine_version = engine.__version__
                record.rules_version = engine.RULES_VERSION
                record.verified_at = now
        done_id = batch[-1].id
        if update:
            session.commit()
        progress(len(batch))
