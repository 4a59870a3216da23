"""The search kinds of the solver (:class:`SearchKind`): what a search is asked (:class:`Query`),
what it may spend (:class:`Budget`), its table, how its row is made, searched and answered; a
deal's solvability (:class:`DealSearch`). Hints are :mod:`api.solver.hints`; the queue that runs
both is :mod:`api.solver.queue`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.orm import Session

import engine
from api.platform.models import HintAnswer, Solvability
from engine import GameCode
from verifier.solving import solve_code

PENDING, WINNABLE, UNWINNABLE, UNKNOWN = "pending", "winnable", "unwinnable", "unknown"
#: a search handed out this many times without an answer is stored ``unknown``
MAX_ATTEMPTS = 3


# -- budgets and search kinds ---------------------------------------------------------

@dataclass(frozen=True)
class Budget:
    """What one search may spend: wall time, and optionally a cap on positions examined."""

    seconds: float
    nodes: int | None = None

    @property
    def key(self) -> str:
        """The budget's identity in the ``solvability`` and ``hint_answers`` tables: ``10s``, ``2s+5000n``."""
        return f"{self.seconds:g}s" + (f"+{self.nodes}n" if self.nodes else "")

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "nodes": self.nodes}


@dataclass(frozen=True)
class Query:
    """What a search is asked about: a deal, and for a hint the canonical log played so far."""

    code: GameCode
    log: str = ""
    actions: int = 0


def now() -> datetime:
    return datetime.now(UTC)


def changed_rows(result: Any) -> int:
    """The rows an UPDATE changed (its result is a ``CursorResult``)."""
    return int(result.rowcount)


SearchRow = Solvability | HintAnswer


class SearchKind:
    """One kind of search: its table, its budget, how long an answer is served, how a row
    is made, searched and answered. :class:`Solver` runs every kind the same way."""

    name: ClassVar[str]                          # the jobs' ``kind`` and the task (queue) of its tickets
    model: ClassVar[type[Solvability] | type[HintAnswer]]

    def __init__(self, budget: Budget, kept: timedelta = timedelta(days=1)) -> None:
        self.budget, self.kept = budget, kept

    @property
    def retry_after(self) -> int:
        """Seconds a client should wait before asking again about a pending search."""
        return max(1, min(5, math.ceil(self.budget.seconds / 2)))

    def identity(self, query: Query) -> list[ColumnElement[bool]]:
        model = self.model
        return [model.code == str(query.code), model.budget == self.budget.key,
                model.engine_version == engine.__version__, model.rules_version == engine.RULES_VERSION]

    def find(self, session: Session, query: Query) -> Any:
        return session.scalar(select(self.model).where(*self.identity(query)))

    def expired(self, row: Any) -> bool:
        raise NotImplementedError

    def new_row(self, query: Query, moment: datetime) -> Any:
        raise NotImplementedError

    def restart(self) -> dict[str, Any]:
        """The values that turn an expired answer into a pending row again."""
        raise NotImplementedError

    def search(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        """The answer of a search, as ``verifier.solving`` gives it (JSON)."""
        raise NotImplementedError

    def timed_out(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        """The answer of a search stopped by the worker's soft time limit."""
        raise NotImplementedError

    def stored(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The row's values for ``answer``; ``ValueError`` when it is not an answer to store."""
        raise NotImplementedError

    def run_here(self, session: Session, query: Query) -> Any:
        """The answer for ``query``: the stored one, or a search run in this process (a
        worker's task: challenges and the winnable pool) and stored like every other
        answer; a request's pending row for the same budget is answered too. Commits."""
        row = self.find(session, query)
        if row is not None and row.status != PENDING:
            return row
        values = self.stored(self.search(str(query.code), query.log, self.budget))
        if row is None:
            row = self.new_row(query, now())
            for name, value in {**values, "queued_at": None}.items():
                setattr(row, name, value)
            session.add(row)
        else:
            model = self.model
            session.execute(update(model).where(model.id == row.id, model.status == PENDING).values(**values))
        session.commit()
        session.refresh(row)
        return row


class DealSearch(SearchKind):
    """Can the deal be won (``GET /deals/{code}/solvability``; challenges and the winnable pool)."""

    name, model = "deal", Solvability
    #: steps of the pass that shortens a found line (``engine.solver.shorten``); 0: the verdict only
    shorten_steps: int | None = None

    def expired(self, row: Solvability) -> bool:
        return row.status == UNKNOWN and row.solved_at is not None and now() - row.solved_at > self.kept

    def new_row(self, query: Query, moment: datetime) -> Solvability:
        code = query.code
        return Solvability(code=str(code), variant=code.variant, budget=self.budget.key,
                           budget_seconds=self.budget.seconds, budget_nodes=self.budget.nodes,
                           engine_version=engine.__version__, rules_version=engine.RULES_VERSION, status=PENDING,
                           reason=queued_reason(1), verified=False, attempts=1, requested_at=moment, queued_at=moment)

    def restart(self) -> dict[str, Any]:
        return {"solved_at": None, "statistics": None, "coverage": None}

    def search(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        steps: dict[str, Any] = {} if self.shorten_steps is None else {"shorten_steps": self.shorten_steps}
        answer = solve_code(code, budget_seconds=budget.seconds, max_nodes=budget.nodes, **steps).to_json()
        if answer["status"] == WINNABLE and not answer["verified"]:  # never store a line that did not replay
            answer = {**answer, "status": UNKNOWN, "reason": f"a line was found but did not replay as a win: "
                                                             f"{answer['reason']}"}
        return answer

    def timed_out(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        return {"status": UNKNOWN, "verified": False, "solution": None, "solution_actions": None, "search": None,
                "coverage": None, "reason": timed_out_reason(budget)}

    def stored(self, answer: dict[str, Any]) -> dict[str, Any]:
        status = answer["status"]
        if status not in (WINNABLE, UNWINNABLE, UNKNOWN) or (status == WINNABLE and not answer["verified"]):
            raise ValueError(f"not a storable answer: status {status!r}, verified {answer.get('verified')!r}")
        won = status == WINNABLE
        return {"status": status, "reason": answer["reason"], "verified": bool(answer["verified"]),
                "solution": answer["solution"] if won else None,
                "solution_actions": answer["solution_actions"] if won else None,
                "statistics": answer["search"], "coverage": answer["coverage"], "solved_at": now()}


def queued_reason(attempt: int) -> str:
    return f"the search is queued or running (attempt {attempt} of at most {MAX_ATTEMPTS})"


def timed_out_reason(budget: Budget) -> str:
    return f"the search went past its time limit on the worker (budget {budget.seconds:g} s)"
