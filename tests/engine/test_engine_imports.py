"""No import cycle among the modules of engine/, verifier/ and api/ (imports for type checking aside)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, name: str) -> set[str]:
    """The first-party modules ``path`` imports when it runs (not under ``if TYPE_CHECKING:``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_import_cycle_in_engine_verifier_and_api():
    # an AST walk: api/ is read, not imported, so this runs without the service's packages too
    paths = {_module(p): p for folder in ("engine", "verifier", "api") for p in (ROOT / folder).rglob("*.py")}
    graph = {name: sorted(_runtime_imports(path, name) & set(paths) - {name}) for name, path in paths.items()}
    # a package imports its submodules; a submodule reaching its own package is the parent's doing, not a cycle
    for name in graph:
        graph[name] = [t for t in graph[name] if not name.startswith(t + ".")]
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in graph[name]:
            assert state.get(target) != 1, "import cycle: " + " -> ".join(trail[trail.index(target) :] + [target])
            if target not in state:
                visit(target, trail + [target])
        state[name] = 2

    for name in graph:
        if name not in state:
            visit(name, [name])
