"""Batch verification: JSON Lines in, JSON Lines out, in the same order.

Each input line is an object ``{"code": …, "moves": …, "claimed"?: …}``; other
keys (an ``id``, say) are passed through to the output line. Each output line
is the ``replay --json`` object plus the pass-through keys and ``line`` (the
1-based input line number). A line that cannot be used (bad JSON, a missing
key, a bad code) gives ``{"line": n, "legal": false, "input_error": "…"}``
and the run goes on. Blank lines are skipped.

By default (``workers=None``) an input of at least :data:`PARALLEL_FROM` lines
is verified by one worker process per usable CPU, and a shorter one in this
process, where starting workers would cost more than they save (the first
lines are read before any is verified, to tell which).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from typing import Any, TextIO

from engine import EngineError

from .inputs import log_and_claims
from .replay import replay

RESERVED = ("code", "moves", "claimed")
#: with ``workers=None``, inputs of at least this many lines get worker processes
PARALLEL_FROM = 256


def verify_line(numbered: tuple[int, str]) -> tuple[bool, str]:
    """One input line → (verified?, output line without the newline)."""
    number, line = numbered
    passthrough: dict[str, Any] = {}
    try:
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(item, dict):
            raise ValueError("a line must be a JSON object with 'code' and 'moves'")
        passthrough = {k: v for k, v in item.items() if k not in RESERVED}
        if "code" not in item:
            raise ValueError("missing 'code'")
        moves, claimed = log_and_claims(item)
        verdict = replay(item["code"], moves, claimed)
        result = {**passthrough, "line": number, **verdict.to_json()}
        verified = verdict.verified
    except (ValueError, EngineError) as exc:
        result = {**passthrough, "line": number, "legal": False, "verified": False, "input_error": str(exc)}
        verified = False
    return verified, json.dumps(result, ensure_ascii=False)


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, 1):
        if line.strip():
            yield number, line


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_batch(lines: Iterable[str], out: TextIO, workers: int | None = 1, chunksize: int = 64) -> tuple[int, int]:
    """Verify every line, writing results in input order. Returns (lines, lines not verified).
    ``workers=None``: one process per usable CPU once the input reaches :data:`PARALLEL_FROM` lines."""
    numbered: Iterator[tuple[int, str]] = _numbered(lines)
    if workers is None:
        head = list(islice(numbered, PARALLEL_FROM))
        workers = usable_cpus() if len(head) == PARALLEL_FROM else 1
        numbered = chain(head, numbered)
    if workers <= 1:
        return _write(map(verify_line, numbered), out)
    from multiprocessing import get_context  # (only with workers: it takes a while to import)

    with get_context("spawn" if os.name == "nt" else "fork").Pool(workers) as pool:
        return _write(pool.imap(verify_line, numbered, chunksize), out)


def _write(results: Iterable[tuple[bool, str]], out: TextIO) -> tuple[int, int]:
    total = failed = 0
    for verified, text in results:
        total += 1
        failed += not verified
        out.write(text)
        out.write("\n")
    return total, failed
