"""What a cold ``verifier batch`` process spends its CPU on, part by part, in one fresh
process of the engine as installed (``SOLITAIRE_PURE=1`` for pure Python): the imports,
the deals (every shuffle new), the replay of every log with every action text new to the
process, the same replay again with the texts compiled (warm), and JSON in and out.
Prints CPU milliseconds; no pass/fail.

    python -m bench.cold_parts                  # the cold bench's corpus (1,500 games)
    SOLITAIRE_PURE=1 python -m bench.cold_parts
"""

from __future__ import annotations

import time

START = time.process_time()

import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import engine  # noqa: E402
from verifier.batch import run_batch  # noqa: E402

IMPORTS = time.process_time() - START


def parts(lines: list[str]) -> dict[str, float]:
    """CPU seconds of each part of verifying ``lines`` (JSON Lines of {code, moves})."""
    from engine import Game, GameCode
    from engine.rules.base import _shuffled
    from verifier import replay

    items = [json.loads(line) for line in lines]
    spent: dict[str, float] = {}

    def timed(name: str, work: object) -> None:
        start = time.process_time()
        work()  # type: ignore[operator]
        spent[name] = time.process_time() - start

    codes = [GameCode.from_text(item["code"]) for item in items]
    timed("deals (shuffles, every one new)", lambda: [Game.from_code(code) for code in codes])
    timed("replay, every action text new", lambda: [replay(i["code"], i["moves"]) for i in items])
    timed("replay again, texts compiled", lambda: [replay(i["code"], i["moves"]) for i in items])
    _shuffled.cache_clear()
    out = open(Path(tempfile.gettempdir()) / "cold-parts.out", "w", encoding="utf-8")  # noqa: SIM115
    timed("whole batch after that (JSON in and out, deals new, texts compiled)", lambda: run_batch(lines, out))
    out.close()
    return spent


def main() -> None:
    if len(sys.argv) > 1:
        lines = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
    else:
        from .cold_bench import write_corpus

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cold.jsonl"
            write_corpus(path, 500, 1717)
            lines = path.read_text(encoding="utf-8").splitlines()
    spent = parts(lines)
    print(f"cold parts, {len(lines)} games, engine {engine.BUILD_NOTE} (CPU ms, one process):")
    print(f"  {START * 1000:8.1f}  interpreter start (site, this module's own start)")
    print(f"  {IMPORTS * 1000:8.1f}  imports of json, the engine and the verifier")
    for name, seconds in spent.items():
        print(f"  {seconds * 1000:8.1f}  {name}")


if __name__ == "__main__":
    main()
