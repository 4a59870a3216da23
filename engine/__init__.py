"""The game engine: codes, deals, rules, scoring and undo for the games of :mod:`engine.rules.registry`.

Standard library only, and no I/O: text and values in, values out. The same files
also run compiled by mypyc where ``pip install`` found a C compiler (:mod:`engine.build`).
"""

from . import build as _build

_WHY_PURE = _build.prepare()  # (before any other engine module is imported)

from .actions import DRAW, UNDO, Action, Draw, Move, Undo, action_from_json, format_log, parse_action, parse_log
from .cards import DECK, Card
from .codes import GameCode
from .errors import (
    EngineError,
    IllegalActionError,
    InvalidActionError,
    InvalidCardError,
    InvalidCodeError,
    InvalidPositionError,
)
from .game import Game
from .position import Position
from .rules import BY_VARIANT, Rules

#: version of this engine's code
__version__ = "1.0.0"
#: version of the normative rules it implements (game codes ``YU1``/``FT1``)
RULES_VERSION = 1
#: which build runs: ``compiled`` (mypyc) or ``pure`` (Python), and why it is pure
BUILD = _build.loaded()
BUILD_NOTE = "compiled with mypyc" if BUILD == _build.COMPILED else f"pure Python: {_WHY_PURE}"

__all__ = [
    "BUILD",
    "BUILD_NOTE",
    "BY_VARIANT",
    "DECK",
    "DRAW",
    "RULES_VERSION",
    "UNDO",
    "Action",
    "Card",
    "Draw",
    "EngineError",
    "Game",
    "GameCode",
    "IllegalActionError",
    "InvalidActionError",
    "InvalidCardError",
    "InvalidCodeError",
    "InvalidPositionError",
    "Move",
    "Position",
    "Rules",
    "Undo",
    "action_from_json",
    "format_log",
    "parse_action",
    "parse_log",
    "__version__",
]
