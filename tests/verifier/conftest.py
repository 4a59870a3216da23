"""The verifier tests share the engine tests' helpers (``engine_helpers``: a search
for won games, position building); put their folder on the path."""

import sys
from pathlib import Path

_ENGINE_TESTS = str(Path(__file__).resolve().parent.parent / "engine")
if _ENGINE_TESTS not in sys.path:
    sys.path.insert(0, _ENGINE_TESTS)
