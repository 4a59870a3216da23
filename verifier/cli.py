"""The command line: ``python -m verifier deal|replay …``.

Exit statuses: :mod:`verifier.inputs`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from engine import BUILD, BUILD_NOTE, RULES_VERSION, EngineError, Game, GameCode, InvalidCodeError, __version__
from engine.build import COMPILED, PURE, pure_asked
from engine.rules.registry import games_in_words

from .batch import PARALLEL_FROM, run_batch
from .inputs import EXIT_ILLEGAL, EXIT_OK, EXIT_UNUSABLE, UnusableInput, read_log_file
from .replay import replay
from .verdict import deal_json

#: the commands that never search: their processes start without importing the solver
REPLAY_COMMANDS = ("deal", "replay", "batch", "engine")


def _print_json(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")


def cmd_deal(args: argparse.Namespace, out: TextIO) -> int:
    deal = deal_json(args.code, reveal=args.reveal)
    if args.json:
        _print_json(deal, out)
        return EXIT_OK
    game = Game.from_code(args.code)
    out.write(f"{deal['code']}  {deal['game']} ({deal['rules']} rules), deal number {deal['number']}\n")
    out.write(game.position.board(reveal=args.reveal) + "\n")
    return EXIT_OK


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    code = GameCode.from_text(args.code)
    log, claimed = read_log_file(args.file, code)
    try:
        verdict = replay(code, log, claimed)
    except ValueError as exc:  # an unknown claimed field
        raise UnusableInput(str(exc)) from None
    if args.json:
        _print_json(verdict.to_json(), out)
    else:
        out.write(f"{verdict.code}: {'legal' if verdict.legal else 'ILLEGAL'}\n")
        if verdict.error:
            e = verdict.error
            out.write(f"  action {e.index} {e.action!r}: {e.rule}: {e.message}\n")
        out.write(
            f"  won {'yes' if verdict.won else 'no'}, score {verdict.score}, moves {verdict.moves}, "
            f"actions {verdict.actions}, undos {verdict.undos}, take-backs {verdict.takebacks}, "
            f"cards on foundations {verdict.foundation_cards}\n"
        )
        for name, claim in (verdict.claims or {}).items():
            mark = "ok" if claim["match"] else "MISMATCH"
            out.write(
                f"  claimed {name} {json.dumps(claim['claimed'])}, recomputed {json.dumps(claim['actual'])}: {mark}\n"
            )
        out.write(f"  canonical: {verdict.canonical_text}\n")
    return EXIT_OK if verdict.verified else EXIT_ILLEGAL


def cmd_batch(args: argparse.Namespace, out: TextIO) -> int:
    workers = None if args.workers == "auto" else _positive(args.workers)
    try:
        handle = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise UnusableInput(f"cannot read {args.file}: {exc}") from None
    try:
        total, failed = run_batch(handle, out, workers=workers)
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"cannot read {args.file}: {exc}") from None
    finally:
        if handle is not sys.stdin:
            handle.close()
    print(f"verifier: {total} lines, {total - failed} verified, {failed} not", file=sys.stderr)
    return EXIT_OK if failed == 0 else EXIT_ILLEGAL


def cmd_engine(args: argparse.Namespace, out: TextIO) -> int:
    """Print which build of the engine runs; with ``--expect``, fail unless it is that one
    (``auto``: pure Python where ``SOLITAIRE_PURE`` asks for it, else compiled). The
    Docker image's build and CI check an install with it."""
    out.write(f"engine: {BUILD_NOTE}\n")
    expected = args.expect
    if expected == "auto":
        expected = PURE if pure_asked() else COMPILED
    if expected is not None and expected != BUILD:
        print(f"verifier: the engine is {BUILD}, not {expected}", file=sys.stderr)
        return EXIT_ILLEGAL
    return EXIT_OK


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise UnusableInput(f"--workers must be a number of at least 1, or auto (not {text!r})")
    return number


def version() -> str:
    """``verifier 1.0.0 (rules version 1, engine compiled with mypyc)``: which build runs."""
    return f"verifier {__version__} (rules version {RULES_VERSION}, engine {BUILD_NOTE})"


def build_parser(solver: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; ``solver=False`` leaves out ``solve`` and ``hint`` (and the solver's import)."""
    parser = argparse.ArgumentParser(
        prog="verifier", description=f"Deals and move-log verification for {games_in_words()} game codes."
    )
    parser.add_argument("--version", action="version", version=version())
    sub = parser.add_subparsers(dest="command", required=True)
    deal = sub.add_parser("deal", help="print the deal of a game code")
    deal.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    deal.add_argument("--reveal", action="store_true", help="show face-down cards and the stock")
    deal.add_argument("--json", action="store_true", help="print one JSON object")
    deal.set_defaults(func=cmd_deal)
    rep = sub.add_parser("replay", help="replay a move log and judge it")
    rep.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    rep.add_argument("file", help='the log: text form, a JSON array, or {"moves", "claimed"}; - for stdin')
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    rep.set_defaults(func=cmd_replay)
    bat = sub.add_parser("batch", help="verify JSON Lines of {code, moves, claimed?}, one result a line, in order")
    bat.add_argument("file", help="JSON Lines file; - for stdin")
    bat.add_argument(
        "--workers",
        default="auto",
        help=f"processes sharing the work (this one included), or auto (the default): one per CPU for inputs of "
        f"{PARALLEL_FROM} lines or more",
    )
    bat.set_defaults(func=cmd_batch)
    eng = sub.add_parser("engine", help="print which build of the engine runs (compiled with mypyc, or pure Python)")
    eng.add_argument("--expect", choices=(COMPILED, PURE, "auto"),
                     help="exit with status 1 unless this build runs (auto: pure if SOLITAIRE_PURE is set)")
    eng.set_defaults(func=cmd_engine)
    if solver:  # (imported on first use: a replay's cold start loads no solver; no cycle)
        from .solving import register

        register(sub)  # solve, hint
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in words if not word.startswith("-")), None)
    args = build_parser(solver=command not in REPLAY_COMMANDS).parse_args(words)
    out = out or sys.stdout
    try:
        status: int = args.func(args, out)
        return status
    except InvalidCodeError as exc:
        print(f"verifier: invalid game code: {exc}", file=sys.stderr)
    except (UnusableInput, EngineError) as exc:
        print(f"verifier: {exc}", file=sys.stderr)
    return EXIT_UNUSABLE
