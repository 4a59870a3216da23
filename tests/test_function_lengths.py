"""No function longer than 80 lines in engine/, verifier/ or api/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.function_lengths import LIMIT, long_functions

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("folder", ["engine", "verifier", "api"])
def test_functions_are_at_most_80_lines(folder):
    found = list(long_functions(ROOT / folder))
    assert found == [], f"functions longer than {LIMIT} lines: {found}"
