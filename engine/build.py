"""Which build of the engine runs: compiled by mypyc from these same files, or pure Python.

``pip install`` compiles the engine where a C compiler is present (``setup.py``); the
compiled modules sit beside the ``.py`` files and would win on import. Pure Python is
forced by ``SOLITAIRE_PURE=1``, and chosen when the compiled modules are missing or
older than their sources (an edited checkout): then a finder placed before the others
loads every ``engine`` module from source. This module is never compiled itself; it
runs before any other engine module is imported (``engine/__init__.py``).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
#: the modules setup.py leaves as Python in either build (this one, the package, the solver's interface)
NOT_COMPILED = ("__init__.py", "build.py", "solver/state.py")
#: compiled modules this much older than their source are stale (an install writes both at once)
STALE_AFTER_SECONDS = 2.0

COMPILED, PURE = "compiled", "pure"


def _compiled_twin(source: Path) -> Path | None:
    """The compiled module beside ``source``, if there is one."""
    for suffix in EXTENSION_SUFFIXES:
        twin = source.with_name(source.stem + suffix)
        if twin.exists():
            return twin
    return None


def sources() -> list[Path]:
    """Every engine module the compiled build compiles."""
    skip = {HERE / name for name in NOT_COMPILED}
    return sorted(path for path in HERE.rglob("*.py") if path not in skip)


def why_pure(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why the engine must run as pure Python, or None when the compiled modules may load
    (``environ``: the environment that decides, for asking about another process)."""
    if environ.get("SOLITAIRE_PURE", "") not in ("", "0"):
        return "SOLITAIRE_PURE is set"
    twins = [(source, _compiled_twin(source)) for source in sources()]
    if all(twin is None for _, twin in twins):
        return "no compiled modules are installed (no C compiler at install time, or SOLITAIRE_PURE=1 then)"
    missing = [source for source, twin in twins if twin is None]
    if missing:
        return f"{missing[0].relative_to(HERE)} has no compiled module: reinstall (pip install -e .)"
    for source, twin in twins:
        assert twin is not None
        if source.stat().st_mtime > twin.stat().st_mtime + STALE_AFTER_SECONDS:
            return f"engine/{source.relative_to(HERE)} is newer than its compiled module: reinstall (pip install -e .)"
    return None


class SourceFirst(MetaPathFinder):
    """Finds ``engine`` modules as source files only, never as compiled modules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith("engine.") or not path:
            return None
        for entry in path:
            spec = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(fullname, target)
            if spec is not None:
                return spec
        return None


def prepare() -> str | None:
    """Before the engine's modules are imported: load them from source if pure Python is
    needed (warning when compiled modules are there but stale); the reason, or None."""
    reason = why_pure()
    if reason is not None:
        if "newer than" in reason or "has no compiled" in reason:
            warnings.warn(f"the engine runs as pure Python: {reason}", RuntimeWarning, stacklevel=3)
        if not any(isinstance(finder, SourceFirst) for finder in sys.meta_path):
            sys.meta_path.insert(0, SourceFirst())
    return reason


def loaded() -> str:
    """What actually runs: ``compiled`` if the interpreter's module was loaded compiled."""
    module = sys.modules["engine.rules.base"]
    return COMPILED if str(module.__file__).endswith(tuple(EXTENSION_SUFFIXES)) else PURE
