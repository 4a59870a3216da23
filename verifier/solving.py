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
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from engine import Game, GameCode, IllegalActionError, InvalidActionError, Position
from engine.solver import DEFAULT_SECONDS, SHORTEN_STEPS, UNKNOWN, UNWINNABLE, WINNABLE, coverage_for, solve

from .inputs import EXIT_ILLEGAL, EXIT_OK, EXIT_UNDECIDED, EXIT_UNUSABLE, read_log_file
from .replay import Played, play
from .verdict import ActionError

__all__ = [
    "EXIT_ILLEGAL",
    "EXIT_OK",
    "EXIT_UNDECIDED",
    "EXIT_UNUSABLE",
    "Hint",
    "IllegalLogError",
    "SolveAnswer",
    "continue_line",
    "continue_played",
    "hint_code",
    "hint_played",
    "position_key",
    "register",
    "solve_code",
    "solve_played",
    "start",
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


def start(code: GameCode | str, log: Any, path: list[Position] | None = None) -> Played:
    """Replay ``log`` with the verifier, once: the game after it and its canonical prefix
    (:class:`verifier.replay.Played`); :class:`IllegalLogError` for an illegal log. ``path``,
    when given, gets every position before the last: the start, then the position after each
    action but the last."""
    if not isinstance(code, GameCode):
        code = GameCode.from_text(code)
    played = play(code, [] if log is None or log == "" else log, path=path)
    if not played.verdict.legal:
        assert played.verdict.error is not None
        raise IllegalLogError(played.verdict.error)
    return played


def _line_after(game: Game, line: Sequence[str]) -> tuple[bool, list[str], str]:
    """Whether ``line`` played after ``game`` (on a copy: the log is not replayed) is legal and
    wins; its canonical texts; and, when it does not win, why (the action refused and its rule)."""
    trial, canonical = game.copy(), list[str]()
    try:
        trial.push_items(line, canonical, True)
    except IllegalActionError as error:
        return False, canonical, f"action {game.actions + len(canonical)} {line[len(canonical)]}: {error.rule}"
    except InvalidActionError:
        return False, canonical, f"action {game.actions + len(canonical)} {line[len(canonical)]}: syntax"
    return trial.is_won, canonical, "" if trial.is_won else "the line does not end in a won game"


def position_key(position: Position) -> str:
    """The key under which a winning line from ``position`` is kept for the hints that continue
    it: the SHA-256 of its layout (:meth:`engine.Position.layout`: where every card lies, without
    score and counters), hex. Any log that reaches the same cards has the same key.

    >>> from engine import Game
    >>> len(position_key(Game.from_code("YU1-C-AAAAAAB").position))
    64
    """
    return hashlib.sha256(position.layout().encode("utf-8")).hexdigest()


def solve_code(
    code: GameCode | str,
    log: Any = None,
    *,
    budget_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    max_table: int | None = None,
    shorten_steps: int = SHORTEN_STEPS,
    forward: bool = False,
) -> SolveAnswer:
    """Solve the deal of ``code`` from the position after ``log`` (text or JSON list; None: the start).
    A winning line is shortened within ``shorten_steps`` steps (:func:`engine.solver.shorten`;
    0: as found, e.g. when only the verdict matters, as in screening). ``forward``: the line
    never goes back to a position the log went through, unless no line avoids them all
    (``avoid`` of :func:`engine.solver.solve`): a hint's search.

    Raises :class:`engine.InvalidCodeError`, :class:`engine.InvalidActionError`
    (a log that is neither text nor a list) or :class:`IllegalLogError`.
    """
    path: list[Position] = []
    played = start(code, log, path if forward else None)
    budget = {"seconds": budget_seconds, "nodes": max_nodes, "table": max_table}
    return solve_played(played, budget, shorten_steps, path)


def solve_played(played: Played, budget: dict[str, Any], shorten_steps: int = SHORTEN_STEPS,
                 avoid: Sequence[Position] = ()) -> SolveAnswer:
    """:func:`solve_code` from a log played already (:func:`start`; ``budget``: its seconds, nodes
    and table): the line found is checked by playing it after the game, not by replaying the log."""
    game, prefix = played.game, tuple(played.verdict.canonical)
    result = solve(game.position, budget_seconds=budget["seconds"], max_nodes=budget["nodes"],
                   max_table=budget["table"], shorten_steps=shorten_steps, avoid=list(avoid))
    coverage = dict(result.coverage)
    if game.can_undo:
        coverage["left_out"] = list(coverage.get("left_out", [])) + [UNDO_LEFT_OUT]
    search = {
        "nodes": result.nodes,
        "positions": result.positions,
        "seconds": round(result.seconds, 3),
        "table_bytes": result.table_bytes,
    }
    status, reason, actions, verified = result.status, result.reason, result.actions, False
    if status == WINNABLE:
        won, _, detail = _line_after(game, actions)
        if won:
            verified = True
        else:  # a solver bug: never hand out a line the verifier rejects
            status, actions = UNKNOWN, ()
            reason = f"solver error: the line found did not replay as a legal, won game ({detail})"
    found = result.found_length if status == WINNABLE else 0
    return SolveAnswer(played.verdict.code, status, reason, prefix, tuple(actions), verified, search, coverage, budget,
                       found)


@dataclass(frozen=True)
class Hint:
    """The next action of a winning line, or why there is none."""

    answer: SolveAnswer
    action: str | None
    reason: str
    #: the line continues one an earlier answer found (no search)
    continued: bool = False
    #: the :func:`position_key` of the position the action reaches: the rest of the line is kept under it
    next_key: str | None = None

    @property
    def status(self) -> str:
        """The status of the search behind the hint."""
        return self.answer.status

    @property
    def line(self) -> tuple[str, ...]:
        """The winning line the hint begins (empty without a hint)."""
        return self.answer.actions if self.action else ()

    def to_json(self) -> dict[str, Any]:
        return {
            "code": str(self.answer.code),
            "status": self.status,
            "hint": self.action,
            "reason": self.reason,
            "line_length": len(self.answer.actions) if self.action else None,
            "after_actions": len(self.answer.prefix),
            "continued": self.continued,
            "search": self.answer.search,
            "coverage": self.answer.coverage,
        }


def _first(answer: SolveAnswer, game: Game, continued: bool) -> Hint:
    """The hint of a winnable ``answer`` from ``game``'s position: its line's first action."""
    if not answer.actions:
        return Hint(answer, None, "the game is already won: there is nothing left to play")
    game.push_text(answer.actions[0])
    reached = position_key(game.position)
    game.undo()
    whose = "the winning line an earlier answer found" if continued else "a winning line"
    return Hint(
        answer,
        answer.actions[0],
        f"the first of {len(answer.actions)} actions of {whose} (verified by replay)",
        continued,
        reached,
    )


def continue_line(code: GameCode | str, log: Any, line: Sequence[str]) -> Hint | None:
    """The hint that continues ``line``, a winning line an earlier answer found from the position
    after ``log`` (kept under its :func:`position_key`), without a search; None when the log and
    the line do not replay as a legal, won game (the line belongs elsewhere)."""
    return continue_played(start(code, log), line)


def continue_played(played: Played, line: Sequence[str]) -> Hint | None:
    """:func:`continue_line` after a log played already (:func:`start`): the line is played on a
    copy of the game, so that trying several lines replays the log none the more."""
    game, prefix = played.game, tuple(played.verdict.canonical)
    won, canonical, _ = _line_after(game, line)
    if not won or (game.is_won and line):
        return None
    code = played.verdict.code
    coverage = coverage_for(code.game)
    if game.can_undo:
        coverage["left_out"] = [UNDO_LEFT_OUT]
    search = {"nodes": 0, "positions": 0, "seconds": 0.0, "table_bytes": 0}
    reason = f"a winning line of {len(line)} actions, found earlier"
    answer = SolveAnswer(code, WINNABLE, reason, prefix, tuple(canonical), True, search,
                         coverage, {"seconds": None, "nodes": None, "table": None}, len(line))
    return _first(answer, game, True)


def hint_code(
    code: GameCode | str,
    log: Any,
    *,
    budget_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    max_table: int | None = None,
    known: Callable[[str], Sequence[str] | None] | None = None,
) -> Hint:
    """The first action of a verified winning line from the position after ``log``: the line
    ``known(key)`` gives for the position's :func:`position_key` (an earlier answer's, continued
    when it replays as a win), else a new search whose line never goes back to a position the
    log went through, unless none avoids them (``forward`` of :func:`solve_code`). The log is
    replayed once, keeping the positions the search avoids."""
    path: list[Position] = []
    played = start(code, log, path)
    return hint_played(played, path, budget_seconds=budget_seconds, max_nodes=max_nodes, max_table=max_table,
                       known=known)


def hint_played(
    played: Played,
    path: Sequence[Position],
    *,
    budget_seconds: float | None = DEFAULT_SECONDS,
    max_nodes: int | None = None,
    max_table: int | None = None,
    known: Callable[[str], Sequence[str] | None] | None = None,
) -> Hint:
    """:func:`hint_code` after a log played already (:func:`start`, with ``path``: the positions it went through)."""
    if known is not None:
        line = known(position_key(played.game.position))
        hint = continue_played(played, line) if line is not None else None
        if hint is not None:
            return hint
    answer = solve_played(played, {"seconds": budget_seconds, "nodes": max_nodes, "table": max_table}, avoid=path)
    if answer.status == WINNABLE:
        return _first(answer, played.game, False)
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


#: the lines a :class:`LineFile` keeps at most (the oldest go first): a few long games' worth
LINES_KEPT = 1000


def default_lines_path() -> Path:
    """Where ``verifier hint`` keeps its lines: ``solitaire-verifier/hint-lines.json`` in
    ``$XDG_CACHE_HOME``, else in ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "solitaire-verifier" / "hint-lines.json"


class LineFile:
    """The winning lines ``verifier hint`` keeps between runs, in a JSON file: after each hint,
    the rest of its line under the :func:`position_key` of the position the hint reaches, so
    that the next hint, once the player has played this one, continues the same line. At most
    :data:`LINES_KEPT` lines; a file that cannot be read starts empty, one that cannot be
    written is left as it was (the hints are the same, only not continued)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: dict[str, str] = {}
        try:
            stored = json.loads(path.read_text(encoding="utf-8")).get("lines", {})
            self.lines = {k: v for k, v in stored.items() if isinstance(k, str) and isinstance(v, str)}
        except (OSError, ValueError, AttributeError):
            pass

    def get(self, key: str) -> list[str] | None:
        line = self.lines.get(key)
        return None if line is None else line.split()

    def put(self, key: str, line: Sequence[str]) -> None:
        self.lines.pop(key, None)
        self.lines[key] = " ".join(line)  # (the newest last: the first ones go when there are too many)
        for old in list(self.lines)[: max(0, len(self.lines) - LINES_KEPT)]:
            del self.lines[old]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(self.path.name + ".tmp")
            temporary.write_text(json.dumps({"lines": self.lines}), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError:
            pass


def cmd_hint(args: argparse.Namespace, out: TextIO) -> int:
    lines = None if args.no_lines else LineFile(args.lines or default_lines_path())

    def ask(code: str, log: Any, **budgets: Any) -> Hint:
        hint = hint_code(code, log, known=None if lines is None else lines.get, **budgets)
        if lines is not None and hint.next_key is not None:
            lines.put(hint.next_key, hint.line[1:])
        return hint

    return _ask(args, out, ask, _describe_hint)


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
        "reason there is none; exit codes as for solve. A hint played continues its line: the next hint is the "
        "line's next action (see --lines); a new search never leads back to a position the log went through, "
        "unless no line avoids them.",
    )
    hint_parser.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    hint_parser.add_argument("file", help='the log so far (text form, JSON array or {"moves"}); - for stdin')
    hint_parser.add_argument(
        "--lines",
        type=Path,
        default=None,
        metavar="FILE",
        help="keep the rest of each hint's winning line in FILE, so that the next hint continues it once the "
        "hint is played (default: hint-lines.json in $XDG_CACHE_HOME/solitaire-verifier or "
        "~/.cache/solitaire-verifier)",
    )
    hint_parser.add_argument("--no-lines", action="store_true", help="keep no lines: every hint is a new search")
    _budget_options(hint_parser)
    hint_parser.set_defaults(func=cmd_hint)
