"""The optional compiled engine: ``pip install .`` and ``pip install -e .`` compile
``engine/`` with mypyc (which ships with mypy, a build requirement in pyproject.toml)
where a C compiler works, and install pure Python with a note where it does not.
The ``.py`` files stay the only source; ``engine/build.py`` says which build runs.

``SOLITAIRE_PURE=1`` at install time skips the compiler. The project's metadata is in
pyproject.toml; this file only adds the extension modules.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def note(message: str) -> None:
    print(f"solitaire-verifier: {message}", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """Build the compiled modules, or leave none at all (never half a build) if the compiler fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # any failure of the C toolchain means pure Python
            note(f"the compiled engine could not be built ({type(error).__name__}: {str(error)[:160]}); "
                 "installing pure Python, which gives the same results, only slower")
            for output in self.get_outputs():
                Path(output).unlink(missing_ok=True)
            self.extensions = []

    def get_outputs(self) -> list[str]:
        return super().get_outputs() if self.extensions else []


def not_compiled() -> set[Path]:
    """The engine's modules ``engine/build.py`` leaves as Python (its ``NOT_COMPILED``)."""
    engine = HERE / "engine"
    tree = ast.parse((engine / "build.py").read_text(encoding="utf-8"))
    [declared] = [node.value for node in tree.body
                  if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "NOT_COMPILED"]
    return {engine / name for name in ast.literal_eval(declared)}


def engine_sources() -> list[str]:
    """The engine's modules but those left as Python."""
    skip = not_compiled()
    return sorted(str(path.relative_to(HERE)) for path in (HERE / "engine").rglob("*.py") if path not in skip)


def remove_left_over_twins() -> None:
    """The compiled modules an earlier in-place build (``pip install -e .``) left beside modules
    that are now kept as Python: Python would load them before the source."""
    for source in not_compiled():
        for twin in source.parent.glob(f"{source.stem}.*.so"):
            note(f"removing {twin.relative_to(HERE)}: {source.name} is no longer compiled")
            twin.unlink()


def extensions() -> list[object]:
    remove_left_over_twins()
    if os.environ.get("SOLITAIRE_PURE", "") not in ("", "0"):
        note("SOLITAIRE_PURE is set: installing the pure-Python engine")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        note("mypyc (part of mypy) is not available: installing the pure-Python engine")
        return []
    try:
        os.chdir(HERE)  # mypycify takes paths relative to the project
        return list(mypycify(engine_sources(), opt_level="3"))
    except (Exception, SystemExit) as error:  # mypyc refusing the code must not stop the install
        note(f"mypyc could not compile the engine ({error}); installing the pure-Python engine")
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
