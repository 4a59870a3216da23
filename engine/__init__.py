"""The game engine: codes, deals, rules, scoring and undo for Yukon and Forty Thieves.

Standard library only, and no I/O: text and values in, values out.
"""

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
from .rules import BY_VARIANT, REGISTRY, Rules, rules_for

#: version of this engine's code
__version__ = "1.0.0"
#: version of the normative rules it implements (game codes ``YU1``/``FT1``)
RULES_VERSION = 1

__all__ = [
    "BY_VARIANT",
    "DECK",
    "DRAW",
    "REGISTRY",
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
    "rules_for",
    "__version__",
]
