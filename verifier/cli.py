"""The command line: ``python -m verifier deal|replay …``.

Exit status: 0 success (a legal, verified log), 1 an illegal log or a claim
that does not match, 2 unusable input (bad code, unreadable file, bad JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence, TextIO

from engine import EngineError, GameCode, InvalidCodeError

from .replay import log_and_claims, replay
from .verdict import deal_json

EXIT_OK, EXIT_ILLEGAL, EXIT_UNUSABLE = 0, 1, 2


class UnusableInput(Exception):
    """Input the command cannot work with at all (exit status 2)."""


def _print_json(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")


def read_log_file(path: str, code: GameCode | None = None) -> tuple[Any, dict[str, Any] | None]:
    """Read a log from ``path`` (``-``: standard input): text form, a JSON array,
    or a JSON object ``{"moves": …, "claimed": {…}}``. Returns (log, claimed)."""
    try:
        if path == "-":
            content = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                content = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UnusableInput(f"cannot read {path}: {exc}") from None
    return parse_log_document(content, path, code)


def parse_log_document(content: str, name: str = "input", code: GameCode | None = None
                       ) -> tuple[Any, dict[str, Any] | None]:
    """A log document's content → (log, claimed). Text logs never start with ``[`` or ``{``.
    A JSON object may repeat the game ``code``; it must then name the same deal as ``code``."""
    stripped = content.lstrip("\ufeff").strip()
    if not stripped.startswith(("[", "{")):
        return stripped, None
    try:
        doc = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise UnusableInput(f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if isinstance(doc, list):
        return doc, None
    unknown = set(doc) - {"moves", "claimed", "code"}
    if unknown:
        raise UnusableInput(f"{name}: unexpected key {sorted(unknown)[0]!r}; expected 'moves', and optionally "
                            f"'claimed' and 'code'")
    if "code" in doc and code is not None:
        try:
            same = GameCode.from_text(doc["code"]) == code
        except (InvalidCodeError, AttributeError):
            same = False
        if not same:
            raise UnusableInput(f"{name}: its 'code' {doc['code']!r} is not the game code given, {code}")
    try:
        return log_and_claims(doc)
    except ValueError as exc:
        raise UnusableInput(f"{name}: {exc}") from None


def cmd_deal(args: argparse.Namespace, out: TextIO) -> int:
    deal = deal_json(args.code, reveal=args.reveal)
    if args.json:
        _print_json(deal, out)
        return EXIT_OK
    from engine import Game

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
        out.write(f"  won {'yes' if verdict.won else 'no'}, score {verdict.score}, moves {verdict.moves}, "
                  f"actions {verdict.actions}, undos {verdict.undos}, take-backs {verdict.takebacks}, "
                  f"cards on foundations {verdict.foundation_cards}\n")
        for name, claim in (verdict.claims or {}).items():
            mark = "ok" if claim["match"] else "MISMATCH"
            out.write(f"  claimed {name} {json.dumps(claim['claimed'])}, recomputed {json.dumps(claim['actual'])}: "
                      f"{mark}\n")
        out.write(f"  canonical: {verdict.canonical_text}\n")
    return EXIT_OK if verdict.verified else EXIT_ILLEGAL


def cmd_batch(args: argparse.Namespace, out: TextIO) -> int:
    from .batch import run_batch

    if args.workers < 1:
        raise UnusableInput("--workers must be at least 1")
    try:
        handle = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    except OSError as exc:
        raise UnusableInput(f"cannot read {args.file}: {exc}") from None
    try:
        total, failed = run_batch(handle, out, workers=args.workers)
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"cannot read {args.file}: {exc}") from None
    finally:
        if handle is not sys.stdin:
            handle.close()
    print(f"verifier: {total} lines, {total - failed} verified, {failed} not", file=sys.stderr)
    return EXIT_OK if failed == 0 else EXIT_ILLEGAL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verifier", description="Deals and move-log verification for Yukon and "
                                     "Forty Thieves game codes.")
    sub = parser.add_subparsers(dest="command", required=True)
    deal = sub.add_parser("deal", help="print the deal of a game code")
    deal.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    deal.add_argument("--reveal", action="store_true", help="show face-down cards and the stock")
    deal.add_argument("--json", action="store_true", help="print one JSON object")
    deal.set_defaults(func=cmd_deal)
    rep = sub.add_parser("replay", help="replay a move log and judge it")
    rep.add_argument("code", help="game code, e.g. YU1-C-AAAAAAB")
    rep.add_argument("file", help="the log: text form, a JSON array, or {\"moves\", \"claimed\"}; - for stdin")
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    rep.set_defaults(func=cmd_replay)
    bat = sub.add_parser("batch", help="verify JSON Lines of {code, moves, claimed?}, one result a line, in order")
    bat.add_argument("file", help="JSON Lines file; - for stdin")
    bat.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    bat.set_defaults(func=cmd_batch)
    from .solving import register

    register(sub)  # solve, hint
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    try:
        return args.func(args, out)
    except InvalidCodeError as exc:
        print(f"verifier: invalid game code: {exc}", file=sys.stderr)
    except (UnusableInput, EngineError) as exc:
        print(f"verifier: {exc}", file=sys.stderr)
    return EXIT_UNUSABLE
