"""Hints: the next action of a winning line after a log (:class:`HintSearch`), and how a hint
continues the line of the hint that led to its position, or the deal's, without a search."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import engine
from api.platform.models import HintAnswer, Solvability
from api.records.store import log_hash
from api.solver.searches import (
    PENDING,
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    Budget,
    Query,
    SearchKind,
    now,
    queued_reason,
    timed_out_reason,
)
from engine import Game, Position
from verifier import Played
from verifier.solving import Hint, continue_played, hint_played, position_key, start

#: kept lines tried at most for continuing one to a position (each is replayed before it is used)
LINES_TRIED = 3


class HintSearch(SearchKind):
    """The next action of a winning line after a log (``POST /hint``)."""

    name, model = "hint", HintAnswer
    #: answers this process stored by continuing a line (no task ran, so no clean-up after one)
    made = 0

    def identity(self, query: Query) -> list[ColumnElement[bool]]:
        return [*super().identity(query), HintAnswer.log_hash == log_hash(query.log)]

    def expired(self, row: HintAnswer) -> bool:
        return row.solved_at is not None and now() - row.solved_at > self.kept

    def new_row(self, query: Query, moment: datetime) -> HintAnswer:
        return HintAnswer(code=str(query.code), log_hash=log_hash(query.log), log=query.log,
                          after_actions=query.actions, budget=self.budget.key, engine_version=engine.__version__,
                          rules_version=engine.RULES_VERSION, status=PENDING, reason=queued_reason(1), attempts=1,
                          requested_at=moment, queued_at=moment)

    def restart(self) -> dict[str, Any]:
        return {"solved_at": None, "answer": None}

    def search(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        """The hint as ``verifier.solving`` gives it, with its line and where it leads (for :meth:`stored`),
        and the log as played (``played``: :meth:`joined` tries a line after it; never stored)."""
        path: list[Position] = []
        played = start(code, log_text, path)  # (the log's one replay here: :meth:`joined` plays after its game)
        hint = hint_played(played, path, budget_seconds=budget.seconds, max_nodes=budget.nodes)
        return {**with_line(hint), "played": played}

    def timed_out(self, code: str, log_text: str, budget: Budget) -> dict[str, Any]:
        return {"code": code, "status": UNKNOWN, "hint": None, "line_length": None,
                "after_actions": len(log_text.split()), "continued": False, "search": None, "coverage": None,
                "reason": timed_out_reason(budget)}

    def stored(self, answer: dict[str, Any]) -> dict[str, Any]:
        status = answer["status"]
        if status not in (WINNABLE, UNWINNABLE, UNKNOWN):
            raise ValueError(f"not a storable hint: status {status!r}")
        shown = {name: value for name, value in answer.items() if name not in ("line", "next_key", "played")}
        return {"status": status, "reason": answer["reason"], "answer": shown, "line": answer.get("line"),
                "next_key": answer.get("next_key"), "solved_at": now()}

    def continued(self, session: Session, query: Query, played: Played) -> HintAnswer | None:
        """The hint for ``query`` (its log ``played`` already) without a search, when a line goes
        on from its position: the line of a kept answer whose hint reaches it (the player's own
        previous hint first: the answer for the log without its last action), else, at the
        start, the deal's stored line. Each line is tried after the game played, not by
        replaying the log. Stored as the answer for ``query`` (a new row, or one pending,
        unknown or expired) and returned; None when no line goes on from here."""
        key = position_key(played.game.position)
        hint = None
        for line in self._lines_to(session, query, key):
            hint = continue_played(played, line.split())
            if hint is not None:
                break
        if hint is None:
            return None
        values = self.stored(with_line(hint))
        row = self.find(session, query)
        if row is None:
            row = self.new_row(query, now())
            for name, value in {**values, "queued_at": None, "attempts": 0}.items():
                setattr(row, name, value)
            session.add(row)
            try:
                session.commit()
            except IntegrityError:  # a racing request stored it a moment ago
                session.rollback()
                return self.find(session, query)
            self.made += 1
            return row
        session.execute(update(HintAnswer).where(HintAnswer.id == row.id, HintAnswer.status == row.status)
                        .values(**values, queued_at=None))
        session.commit()
        session.refresh(row)
        return row

    def _lines_to(self, session: Session, query: Query, key: str) -> Iterator[str]:
        """Winning lines from the position of ``key``: the rest of each kept hint's line that
        reaches it (the answer for the log without its last action first, then the newest), then
        the deal's stored line (any budget), which every hint from the start may follow."""
        previous = " ".join(query.log.split()[:-1])
        fresh = now() - self.kept
        leading = (select(HintAnswer.line).where(*self.identity_of_deal(query), HintAnswer.next_key == key,
                                                 HintAnswer.status == WINNABLE, HintAnswer.line.is_not(None),
                                                 HintAnswer.solved_at >= fresh)
                   .order_by((HintAnswer.log_hash == log_hash(previous)).desc(), HintAnswer.solved_at.desc())
                   .limit(LINES_TRIED))
        for line in session.scalars(leading):
            yield " ".join((line or "").split()[1:])
        if key == position_key(Game.from_code(query.code).position):
            deal = session.scalar(select(Solvability.solution).where(
                Solvability.code == str(query.code), Solvability.status == WINNABLE, Solvability.verified.is_(True),
                Solvability.engine_version == engine.__version__, Solvability.rules_version == engine.RULES_VERSION)
                .order_by(Solvability.solved_at.desc()).limit(1))
            if deal:
                yield deal

    def joined(self, session: Session, query: Query, answer: dict[str, Any]) -> dict[str, Any]:
        """``answer`` (a new search's, with its line) joined to the line kept for the log with
        its hint played, when there is one: the player who plays the hint then gets that
        answer, one action shorter, as if it continued this one."""
        line = str(answer["line"]).split()
        after = " ".join([*query.log.split(), line[0]])
        kept = session.scalar(select(HintAnswer.line).where(
            *self.identity_of_deal(query), HintAnswer.log_hash == log_hash(after), HintAnswer.status == WINNABLE,
            HintAnswer.line.is_not(None), HintAnswer.solved_at >= now() - self.kept))
        joined = [line[0], *(kept or "").split()]
        played = answer.get("played") or start(query.code, query.log)
        if not kept or joined == line or continue_played(played, joined) is None:
            return answer
        return {**answer, "line": " ".join(joined), "line_length": len(joined),
                "reason": f"the first of {len(joined)} actions of a winning line (verified by replay)"}

    def identity_of_deal(self, query: Query) -> list[ColumnElement[bool]]:
        """The answers of the same deal, budget, engine and rules as ``query``'s (any log)."""
        return super().identity(query)


def with_line(hint: Hint) -> dict[str, Any]:
    """A hint's JSON with, for :meth:`HintSearch.stored`, its whole line and the key of the position it reaches."""
    return {**hint.to_json(), "line": " ".join(hint.line) if hint.action else None, "next_key": hint.next_key}
