"""The two builds: each says which it is, and loads what it says (``engine.build``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine import build

ROOT = Path(__file__).resolve().parents[2]

#: what a process reports: its build, and the file every engine module came from
PROBE = """
import json, sys
import engine, engine.solver, verifier
modules = {name: m.__file__ for name, m in sys.modules.items() if name == "engine" or name.startswith("engine.")}
print(json.dumps({"build": engine.BUILD, "note": engine.BUILD_NOTE, "modules": modules}))
"""


def probe(**env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if k != "SOLITAIRE_PURE"} | env
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environ, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def compiled(path: str) -> bool:
    return not path.endswith(".py")


def test_solitaire_pure_loads_every_engine_module_from_source():
    report = probe(SOLITAIRE_PURE="1")
    assert report["build"] == "pure" and "SOLITAIRE_PURE" in report["note"]
    modules = report["modules"]
    assert len(modules) >= len(build.sources()) and not any(compiled(path) for path in modules.values())


@pytest.mark.skipif(build.why_pure() is not None, reason="no up-to-date compiled build here: " + str(build.why_pure()))
def test_the_compiled_build_loads_every_compiled_module_compiled():
    report = probe()
    assert report["build"] == "compiled" and report["note"] == "compiled with mypyc"
    modules = report["modules"]
    not_compiled = {f"engine.{name[:-3].replace('/', '.')}" for name in build.NOT_COMPILED if name != "__init__.py"}
    for name, path in modules.items():
        assert compiled(path) == (name not in not_compiled | {"engine"}), (name, path)


def test_this_process_reports_the_build_it_loaded():
    loaded = "compiled" if compiled(engine.rules.base.__file__) else "pure"
    assert loaded == engine.BUILD
    assert (engine.BUILD == "pure") == (build.why_pure() is not None)

