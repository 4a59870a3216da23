"""Running another checkout's code beside this one's (``--against``), and this checkout's root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a process that runs the code of the checkout at ``root`` (first on the path)."""
    return dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)


def checkout_build(root: Path) -> str:
    """Which engine build the checkout at ``root`` runs (``engine.BUILD_NOTE``): a checkout made
    with ``git worktree`` has no compiled modules until it is built, so it runs pure Python."""
    return subprocess.run([sys.executable, "-c", "import engine; print(engine.BUILD_NOTE)"], cwd=root,
                          env=checkout_env(root), check=True, capture_output=True, text=True).stdout.strip()


def say_builds(roots: list[Path]) -> None:
    """Print each checkout's build, and a warning when they differ: the figures would then
    compare the builds, not the code (build the other checkout, or copy its compiled modules)."""
    builds = {root: checkout_build(root) for root in roots}
    for root, build in builds.items():
        print(f"  {root}: engine {build}")
    if len(set(builds.values())) > 1:
        print("  WARNING: the checkouts run different builds of the engine, so their figures compare the builds; "
              "build the other checkout (pip install -e there, or copy its *.so files) for a comparison of the code")
