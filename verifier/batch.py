"""Batch verification: JSON Lines in, JSON Lines out, in the same order.

Each input line is an object ``{"code": …, "moves": …, "claimed"?: …}``; other
keys (an ``id``, say) are passed through to the output line. Each output line
is the ``replay --json`` object plus the pass-through keys and ``line`` (the
1-based input line number). A line that cannot be used (bad JSON, a missing
key, a bad code) gives ``{"line": n, "legal": false, "input_error": "…"}``
and the run goes on. Blank lines are skipped.

By default (``workers=None``) an input of at least :data:`PARALLEL_FROM` lines
is shared by one process per usable CPU, and a shorter one is verified in this
process, where forking would cost more than it saves (the first lines are read
before any is verified, to tell which). With ``workers`` processes, this process
is one of them: it reads a block of lines, forks the others (after the imports,
so they start at once), verifies the first share of the block itself and writes
it, then copies each other process's results from its pipe, in order.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from typing import Any, TextIO

from engine import EngineError

from .inputs import log_and_claims
from .replay import replay

RESERVED = ("code", "moves", "claimed")
#: with ``workers=None``, inputs of at least this many lines are shared by several processes
PARALLEL_FROM = 256
#: lines read at a time when several processes share the work (each block is split among them)
BLOCK = 8192

Numbered = tuple[int, str]
#: stand-ins for a verdict's two long texts, the canonical log and the final position, in the
#: dict given to the JSON encoder: the engine writes both in letters, digits and `` :>/-`` only,
#: which JSON leaves as they are, so they go into the line as they are (the encoder would scan
#: them character by character, most of its work)
_STAND_INS = {"canonical": "\x00canonical", "position": "\x00position"}
_STAND_INS_JSON = [json.dumps(stand_in) for stand_in in _STAND_INS.values()]
#: lines written at a time (one call of ``out.write``: an unbuffered output makes each a system call)
WRITE_EVERY = 64


def verify_line(numbered: Numbered) -> tuple[bool, str]:
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
    except (ValueError, EngineError) as exc:
        result = {**passthrough, "line": number, "legal": False, "verified": False, "input_error": str(exc)}
        return False, json.dumps(result, ensure_ascii=False)
    fields = verdict.to_json()
    result = {**passthrough, "line": number, **fields, **_STAND_INS}
    text = _with_texts(json.dumps(result, ensure_ascii=False), [fields[key] for key in _STAND_INS])
    if text is None:  # (a pass-through value spelled like a stand-in: the plain way)
        text = json.dumps({**passthrough, "line": number, **fields}, ensure_ascii=False)
    return verdict.verified, text


def _with_texts(line: str, texts: list[str]) -> str | None:
    """``line`` with each stand-in (as JSON) replaced by its text (quoted: nothing in it to escape);
    None if a stand-in is not there exactly once."""
    for stand_in, text in zip(_STAND_INS_JSON, texts):
        if line.count(stand_in) != 1:
            return None
        line = line.replace(stand_in, f'"{text}"')
    return line


def _numbered(lines: Iterable[str]) -> Iterator[Numbered]:
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
    ``workers=None``: one process per usable CPU once the input reaches :data:`PARALLEL_FROM` lines.
    (``chunksize``: lines a task where no ``fork`` exists and a pool of workers runs them.)"""
    numbered: Iterator[Numbered] = _numbered(lines)
    if workers is None:
        head = list(islice(numbered, PARALLEL_FROM))
        workers = usable_cpus() if len(head) == PARALLEL_FROM else 1
        numbered = chain(head, numbered)
    if workers <= 1:
        return _write(map(verify_line, numbered), out)
    if not hasattr(os, "fork"):
        from multiprocessing import get_context  # (Windows: no fork; a pool of spawned workers)

        with get_context("spawn").Pool(workers) as pool:
            return _write(pool.imap(verify_line, numbered, chunksize), out)
    return _shared(numbered, out, workers)


def _write(results: Iterable[tuple[bool, str]], out: TextIO) -> tuple[int, int]:
    total = failed = 0
    lines: list[str] = []
    for verified, text in results:
        total += 1
        failed += not verified
        lines.append(text)
        if len(lines) == WRITE_EVERY:
            lines.append("")
            out.write("\n".join(lines))
            lines.clear()
    if lines:
        lines.append("")
        out.write("\n".join(lines))
    return total, failed


def _shared(numbered: Iterator[Numbered], out: TextIO, workers: int) -> tuple[int, int]:
    """:func:`run_batch` over ``workers`` processes, this one included, block by block."""
    total = failed = 0
    gc.freeze()  # (no collector scans what is there before a fork: it stays shared, not copied, on both sides)
    try:
        while block := list(islice(numbered, BLOCK)):
            done, not_verified = _shared_block(block, out, workers)
            total, failed = total + done, failed + not_verified
    finally:
        gc.unfreeze()
    return total, failed


def _shared_block(block: list[Numbered], out: TextIO, workers: int) -> tuple[int, int]:
    shares = _split(block, workers)
    out.flush()  # (a child leaves with os._exit, but its copy of a buffer must be empty anyway)
    others = [share for share in shares[1:] if share]
    children = [_fork(share) for share in others]
    done, not_verified = _write(map(verify_line, shares[0]), out)
    for share, (pid, pipe) in zip(others, children):
        counts, text = _collect(pid, pipe)
        if counts is None:  # the child failed (killed, out of memory): its share is done here
            counts = _write(map(verify_line, share), out)
        else:
            out.write(text)
        done, not_verified = done + counts[0], not_verified + counts[1]
    return done, not_verified


def _split(block: list[Numbered], parts: int) -> list[list[Numbered]]:
    """``block`` in ``parts`` runs of consecutive lines of about the same size in characters (a
    line's cost follows its length: its actions); each line goes to the run its middle falls in."""
    size = 2 * sum(len(line) for _, line in block)
    shares: list[list[Numbered]] = [[] for _ in range(parts)]
    seen = 0
    for numbered in block:
        length = len(numbered[1])
        shares[min(parts - 1, (seen + length) * parts // size)].append(numbered)  # (twice the middle)
        seen += 2 * length
    return shares


def _fork(share: list[Numbered]) -> tuple[int, int]:
    """A child process that verifies ``share`` and sends its results down a pipe: the
    counts on the first line, then the output lines. Returns (its pid, the pipe's end)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        return pid, read_end
    status = 1
    try:  # (the child: it never returns into the caller's code)
        os.close(read_end)
        texts: list[str] = []
        total = failed = 0
        for verified, text in map(verify_line, share):
            total += 1
            failed += not verified
            texts.append(text)
        texts.append("")
        data = f"{total} {failed}\n{chr(10).join(texts)}".encode("utf-8", "surrogatepass")
        with open(write_end, "wb", closefd=True) as pipe:
            pipe.write(data)
        status = 0
    finally:
        os._exit(status)


def _collect(pid: int, pipe: int) -> tuple[tuple[int, int] | None, str]:
    """What a child sent: its counts and output; (None, "") if it did not finish."""
    with open(pipe, "rb", closefd=True) as handle:
        data = handle.read()
    _, status = os.waitpid(pid, 0)
    head, newline, text = data.partition(b"\n")
    if status != 0 or not newline:
        return None, ""
    total, failed = head.split()
    return (int(total), int(failed)), text.decode("utf-8", "surrogatepass")
