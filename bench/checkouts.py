"""Running another checkout's code beside this one's (``--against``), and this checkout's root."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a process that runs the code of the checkout at ``root`` (first on the path)."""
    return dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)
