"""The engine tests import their helpers as ``engine_helpers`` (this folder is on the path)."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
