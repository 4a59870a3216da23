"""Functions longer than a limit (default 80 lines, ``def`` to last line), per folder.

    python tools/function_lengths.py engine verifier api    # prints offenders; exit 1 if any
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

LIMIT = 80


def long_functions(folder: Path, limit: int = LIMIT) -> Iterator[tuple[str, str, int]]:
    """(file, function, lines) of every function or method in ``folder`` longer than ``limit`` lines."""
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > limit:
                    yield str(path), node.name, lines


def main(argv: list[str]) -> int:
    found = [hit for folder in argv or ["engine", "verifier", "api"] for hit in long_functions(Path(folder))]
    for path, name, lines in found:
        print(f"{path}: {name} has {lines} lines (limit {LIMIT})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
