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
from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from types import ModuleType

# (os.path rather than pathlib, and no importlib.abc: this runs in every process's start)
HERE = os.path.dirname(os.path.abspath(__file__))
#: the modules setup.py leaves as Python in either build: this one, the package, the solver's
#: interface, and the exceptions (mypyc 1.20 compiles a class derived from Exception with
#: attributes into one whose attributes are never freed, python/mypy#21716: every illegal action
#: a replay or a shortening met stayed; fixed by python/mypy#21719, after 1.20.2)
NOT_COMPILED = ("__init__.py", "build.py", "errors.py", "solver/state.py")
#: compiled modules this much older than their source are stale (an install writes both at once)
STALE_AFTER_SECONDS = 2.0

COMPILED, PURE = "compiled", "pure"
#: the reasons for pure Python that are a choice, not a stale or broken install (no warning)
FORCED = "SOLITAIRE_PURE is set"
NONE_INSTALLED = "no compiled modules are installed (no C compiler at install time, or SOLITAIRE_PURE=1 then)"


def _compiled_twin(source: str) -> str | None:
    """The compiled module beside ``source``, if there is one."""
    for suffix in EXTENSION_SUFFIXES:
        twin = source[:-3] + suffix
        if os.path.exists(twin):
            return twin
    return None


def sources() -> list[str]:
    """Every engine module the compiled build compiles (absolute paths)."""
    skip = {os.path.join(HERE, *name.split("/")) for name in NOT_COMPILED}
    found = [os.path.join(folder, name) for folder, _, names in os.walk(HERE) for name in names if name.endswith(".py")]
    return sorted(path for path in found if path not in skip)


def pure_asked(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``environ`` forces pure Python (``SOLITAIRE_PURE`` set, and not to 0)."""
    return environ.get("SOLITAIRE_PURE", "") not in ("", "0")


def why_pure(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why the engine must run as pure Python, or None when the compiled modules may load
    (``environ``: the environment that decides, for asking about another process)."""
    if pure_asked(environ):
        return FORCED
    twins = [(source, _compiled_twin(source)) for source in sources()]
    if all(twin is None for _, twin in twins):
        return NONE_INSTALLED
    missing = [source for source, twin in twins if twin is None]
    if missing:
        return f"{os.path.relpath(missing[0], HERE)} has no compiled module: reinstall (pip install -e .)"
    for source, twin in twins:
        assert twin is not None
        if os.stat(source).st_mtime > os.stat(twin).st_mtime + STALE_AFTER_SECONDS:
            shown = os.path.relpath(source, os.path.dirname(HERE))
            return f"{shown} is newer than its compiled module: reinstall (pip install -e .)"
    return None


class SourceFirst:
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
        if reason not in (FORCED, NONE_INSTALLED):
            warnings.warn(f"the engine runs as pure Python: {reason}", RuntimeWarning, stacklevel=3)
        if not any(isinstance(finder, SourceFirst) for finder in sys.meta_path):
            sys.meta_path.insert(0, SourceFirst())
    return reason


def loaded() -> str:
    """What actually runs: ``compiled`` if the interpreter's module was loaded compiled."""
    module = sys.modules["engine.rules.base"]
    return COMPILED if str(module.__file__).endswith(tuple(EXTENSION_SUFFIXES)) else PURE
