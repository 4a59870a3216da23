"""No function longer than 80 lines: enforced for engine/ and verifier/, reported for api/."""

from __future__ import annotations

import warnings
from pathlib import Path

from tools.function_lengths import LIMIT, long_functions

ROOT = Path(__file__).resolve().parent.parent


def test_engine_and_verifier_functions_are_at_most_80_lines():
    found = [hit for folder in ("engine", "verifier") for hit in long_functions(ROOT / folder)]
    assert found == [], f"functions longer than {LIMIT} lines: {found}"


def test_api_functions_longer_than_80_lines_are_reported():
    found = list(long_functions(ROOT / "api"))
    if found:
        warnings.warn(f"api/ functions longer than {LIMIT} lines: {found}", stacklevel=1)
