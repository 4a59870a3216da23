"""What the command line reads: log files and documents, and the exit statuses.

Exit status: 0 success, 1 an illegal log (or a claim that does not match; for
``engine --expect``, another build of the engine), 2 unusable input (bad code,
unreadable file, bad JSON), 3 a search undecided within its budget (``solve``,
``hint``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from engine import GameCode, InvalidCodeError

EXIT_OK, EXIT_ILLEGAL, EXIT_UNUSABLE, EXIT_UNDECIDED = 0, 1, 2, 3


class UnusableInput(Exception):
    """Input the command cannot work with at all (exit status 2)."""


def log_and_claims(doc: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
    """``moves`` and ``claimed`` of a log given as a JSON object (CLI files, batch
    lines), checked for shape; :class:`ValueError` says what is wrong."""
    if "moves" not in doc:
        raise ValueError("missing 'moves': a JSON object log needs 'moves'")
    moves, claimed = doc["moves"], doc.get("claimed")
    if not isinstance(moves, (str, list)):
        raise ValueError("'moves' must be a string or an array")
    if claimed is not None and not isinstance(claimed, dict):
        raise ValueError("'claimed' must be an object with score, moves and/or won")
    return moves, claimed


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


def parse_log_document(
    content: str, name: str = "input", code: GameCode | None = None
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
        raise UnusableInput(
            f"{name}: unexpected key {sorted(unknown)[0]!r}; expected 'moves', and optionally 'claimed' and 'code'"
        )
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
