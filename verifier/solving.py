"""``solve`` and ``hint``: can a deal (or a game after a partial log) be won, and what next?

The engine's solver (:mod:`engine.solver`) searches from a position; this
module turns a code and a log into that position with :func:`verifier.replay`,
and replays every line the solver finds before giving it out: an answer
``winnable`` always comes with a log the verifier judged legal and won.

Exit statuses (:mod:`verifier.inputs`): 0 an answer (winnable or unwinnable;
for ``hint`` also "already won"), 1 an illegal log, 2 unusable input, 3 undecided.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any, TextIO

from engine import Game, GameCode
from engine.solver import DEFAULT_SECONDS, SHORTEN_STEPS, UNKNOWN, UNWINNABLE, WINNABLE, solve

from .inputs import EXIT_ILLEGAL, EXIT_OK, EXIT_UNDECIDED, EXIT_UNUSABLE, read_log_file
from .replay import replay
from .verdict import ActionError

__all__ = [
    "EXIT_ILLEGAL",
    "EXIT_OK",
    "EXIT_UNDECIDED",
    "EXIT_UNUSABLE",
    "Hint",
    "IllegalLogError",
    "SolveAnswer",
    "hint_code",
    "register",
    "solve_code",
]


UNDO_LEFT_OUT = (
    "undo back into the given log: undo can return to up to 100 earlier positions of the log, "
    "which this answer does not examine (ask about a shorter log for those)"
)


class IllegalLogError(ValueError):
    """The partial log given to ``solve``/``hint`` is not a legal game."""

    def __init__(self, error: ActionError) -> None:
        super().__init__(f"the log is not legal: action {error.index} {error.action!r}: {error.rule}: {error.message}")
        self.error = error


@dataclass(frozen=True)
class SolveAnswer:
    """A verified answer for a code and a partial log."""

    code: GameCode
    status: str
    reason: str
    prefix: tuple[str, ...]  # the given log, canonical
    actions: tuple[str, ...]  # the winning line from the position after the prefix
    verified: bool  # the prefix plus the line replayed as a legal, won game
    search: dict[str, Any] = field(default_factory=dict)
    coverage: dict[str, Any] = field(default_factory=dict)
    budget: dict[str, Any] = field(default_factory=dict)
    #: the length of the line the search found, before shortening (winnable only)
    found_length: int = 0

    @property
    def log(self) -> tuple[str, ...]:
        """The whole winning log: the given prefix, then the line."""
        return self.prefix + self.actions

    def to_json(self) -> dict[str, Any]:
        winnable = self.status == WINNABLE
        return {
            "code": str(self.code),
            "variant": self.code.variant,
            "status": self.status,
            "reason": self.reason,
            "prefix": " ".join(self.prefix),
            "prefix_actions": len(self.prefix),
            "solution": " ".join(self.actions) if winnable else None,
            "solution_actions": len(self.actions) if winnable else None,
            "log": " ".join(self.log) if winnable else None,
            "verified": self.verified,
            "search": self.search,
            "coverage": self.coverage,
            "budget": self.budget,
        }


def _start(code: GameCode | str, log: Any) -> tuple[GameCode, Game, tuple[str, ...]]:
    """Replay ``log`` with the verifier; return the code, the game after it and the canonical prefix."""
    if not isinstance(code, GameCode):
        code = GameCode.from_text(code)
    game = Game.from_code(code)
    if log is None or log == "" or log == []:
        return code, game, ()
    verdict = replay(code, log)
    if not verdict.legal:
        assert verdict.error is not None
        raise IllegalLogError(verdict.error)
    for text in verdict.canonical:  # the same actions again, for the undo stack the position has
        game.push_text(text)
    return code, game, tuple(verdict.canonical)


def solve_code(
    code: GameCode | str,
    log: Any = None,
    *,
    budget_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    max_table: int | None = None,
    shorten_steps: int = SHORTEN_STEPS,
) -> SolveAnswer:
    """Solve the deal of ``code`` from the position after ``log`` (text or JSON list; None: the start).
    A winning line is shortened within ``shorten_steps`` steps (:func:`engine.solver.shorten`;
    0: as found, e.g. when only the verdict matters, as in screening).

    Raises :class:`engine.InvalidCodeError`, :class:`engine.InvalidActionError`
    (a log that is neither text nor a list) or :class:`IllegalLogError`.
    """
    code, game, prefix = _start(code, log)
    result = solve(
        game.position,
        budget_seconds=budget_seconds,
        max_nodes=max_nodes,
        max_table=max_table,
        shorten_steps=shorten_steps,
    )
    coverage = dict(result.coverage)
    if game.can_undo:
        coverage["left_out"] = list(coverage.get("left_out", [])) + [UNDO_LEFT_OUT]
    search = {
        "nodes": result.nodes,
        "positions": result.positions,
        "seconds": round(result.seconds, 3),
        "table_bytes": result.table_bytes,
    }
    budget = {"seconds": budget_seconds, "nodes": max_nodes, "table": max_table}
    status, reason, actions, verified = result.status, result.reason, result.actions, False
    if status == WINNABLE:
        verdict = replay(code, list(prefix + actions))
        if verdict.legal and verdict.won:
            verified = True
        else:  # a solver bug: never hand out a line the verifier rejects
            detail = (
                f"action {verdict.error.index} {verdict.error.action}: {verdict.error.rule}"
                if verdict.error
                else "the line does not end in a won game"
            )
            status, actions = UNKNOWN, ()
            reason = f"solver error: the line found did not replay as a legal, won game ({detail})"
    found = result.found_length if status == WINNABLE else 0
    return SolveAnswer(code, status, reason, prefix, tuple(actions), verified, search, coverage, budget, found)


@dataclass(frozen=True)
class Hint:
    """The next action of a winning line, or why there is none."""

    answer: SolveAnswer
    action: str | None
    reason: str

    @property
    def status(self) -> str:
        """The status of the search behind the hint."""
        return self.answer.status

    def to_json(self) -> dict[str, Any]:
        return {
            "code": str(self.answer.code),
            "status": self.status,
            "hint": self.action,
            "reason": self.reason,
            "line_length": len(self.answer.actions) if self.action else None,
            "after_actions": len(self.answer.prefix),
            "search": self.answer.search,
            "coverage": self.answer.coverage,
        }


def hint_code(
    code: GameCode | str,
    log: Any,
    *,
    budget_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    max_table: int | None = None,
) -> Hint:
    """The first action of a verified winning line from the position after ``log``."""
    answer = solve_code(code, log, budget_seconds=budget_seconds, max_nodes=max_nodes, max_table=max_table)
    if answer.status == WINNABLE:
        if not answer.actions:
            return Hint(answer, None, "the game is already won: there is nothing left to play")
        return Hint(
            answer,
            answer.actions[0],
            f"the first of {len(answer.actions)} actions of a winning line (verified by replay)",
        )
    if answer.status == UNWINNABLE:
        why = "no winning line from here: every position the moves reach was examined and none is won"
        if answer.coverage.get("left_out"):
            why += "; undo back into the log was not examined"
        return Hint(answer, None, why)
    return Hint(answer, None, f"no hint: {answer.reason}")


# -- command line ---------------------------------------------------------


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"the budget must be a positive number of seconds, not {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, not {text}")
    return value


def _read_log(path: str | None) -> Any:
    if path is None:
        return None
    log, _claimed = read_log_file(path)
    return log


def _illegal(exc: IllegalLogError, out: TextIO, as_json: bool) -> int:
    if as_json:
        out.write(json.dumps({"error": exc.error.to_json(), "message": str(exc)}, ensure_ascii=False) + "\n")
    else:
        out.write(f"{exc}\n")
    return EXIT_ILLEGAL


def _ask(args: argparse.Namespace, out: TextIO, ask: Any, describe: Any) -> int:
    """Read the log, ask ``ask`` (:func:`solve_code` or :func:`hint_code`) within the
    command's budgets and print the answer: its JSON, or the text ``describe`` makes of it."""
    log = _read_log(args.file)
    try:
        result = ask(args.code, log, budget_seconds=args.budget_seconds, max_nodes=args.max_nodes)
    except IllegalLogError as exc:
        return _illegal(exc, out, args.json)
    out.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n" if args.json else describe(result))
    return EXIT_UNDECIDED if result.status == UNKNOWN else EXIT_OK


def _describe_answer(answer: SolveAnswer) -> str:
    s = answer.search
    lines = [
        f"{answer.code}: {answer.status}",
        f"  {answer.reason}",
        f"  searched {s['positions']} positions ({s['nodes']} nodes) in {s['seconds']} s",
    ]
    if answer.status == WINNABLE:
        lines.append(f"  winning line ({len(answer.actions)} actions, verified): {' '.join(answer.actions)}")
    if answer.status == UNWINNABLE:
        lines.append("  moves covered: " + "; ".join(answer.coverage["moves"]))
        lines.extend(f"  left out: {item}" for item in answer.coverage.get("left_out", []))
    return "\n".join(lines) + "\n"


def _describe_hint(hint: Hint) -> str:
    return f"{hint.action}\n  {hint.reason}\n" if hint.action else f"no hint\n  {hint.reason}\n"


def cmd_solve(args: argparse.Namespace, out: TextIO) -> int:
    return _ask(args, out, solve_code, _describe_answer)


def cmd_hint(args: argparse.Namespace, out: TextIO) -> int:
    return _ask(args, out, hint_code, _describe_hint)


def _budget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--budget-seconds",
        type=_positive_seconds,
        default=DEFAULT_SECONDS,
        metavar="N",
        help=f"wall-time budget of the search (default {DEFAULT_SECONDS:g})",
    )
    parser.add_argument(
        "--max-nodes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="cap on positions examined (deterministic; default: no cap but the time)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers: Any) -> None:
    """Add ``solve`` and ``hint`` to an argparse sub-parser set."""
    solve_parser = subparsers.add_parser(
        "solve",
        help="can the deal (or the game after a partial log) be won?",
        description="Search for a winning line; exit 0 winnable or unwinnable, 1 illegal log, 2 unusable input, "
        "3 undecided within the budget.",
    )
    solve_parser.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    solve_parser.add_argument(
        "file", nargs="?", default=None, help='optional partial log (text form, JSON array or {"moves"}); - for stdin'
    )
    _budget_options(solve_parser)
    solve_parser.set_defaults(func=cmd_solve)
    hint_parser = subparsers.add_parser(
        "hint",
        help="the next action of a winning line after a partial log",
        description="Print the first action of a verified winning line from the position after the log, or the "
        "reason there is none; exit codes as for solve.",
    )
    hint_parser.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    hint_parser.add_argument("file", help='the log so far (text form, JSON array or {"moves"}); - for stdin')
    _budget_options(hint_parser)
    hint_parser.set_defaults(func=cmd_hint)
