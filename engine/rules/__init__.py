"""The rule sets, and the registry from a code's game and rule letter to its rules."""

from __future__ import annotations

from .base import UNDO_DEPTH, Rules, UndoRecord, UndoStack
from .forty_thieves import FortyThieves
from .yukon import Yukon, YukonClassic, YukonRelaxed

#: one shared instance per rule set, by (game, rule letter)
REGISTRY: dict[tuple[str, str], Rules] = {
    ("YU", "C"): YukonClassic(),
    ("YU", "R"): YukonRelaxed(),
    ("FT", "N"): FortyThieves(),
}
_BY_TAG = {rules.tag: rules for rules in REGISTRY.values()}
BY_VARIANT = {rules.variant: rules for rules in REGISTRY.values()}


def rules_for(game: str, letter: str) -> Rules:
    return REGISTRY[(game, letter)]


def rules_for_tag(tag: str) -> Rules:
    """``YU1-C`` → the classic Yukon rules; ``KeyError`` if unknown."""
    return _BY_TAG[tag]


__all__ = ["BY_VARIANT", "REGISTRY", "UNDO_DEPTH", "FortyThieves", "Rules", "UndoRecord", "UndoStack", "Yukon", "YukonClassic",
           "YukonRelaxed", "rules_for", "rules_for_tag"]
