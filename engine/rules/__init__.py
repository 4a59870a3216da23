"""The rule sets: the interpreter (:mod:`.base`), each game's rule logic, and the
registry that declares them (:mod:`.registry`)."""

from __future__ import annotations

from .base import UNDO_DEPTH, Op, OpKind, Rules, UndoRecord, UndoStack
from .forty_thieves import FortyThieves
from .registry import RULE_SETS, GameFamily, RuleSet, by_prefix, by_variant
from .yukon import Yukon

#: the rules of each variant id
BY_VARIANT: dict[str, Rules] = {s.variant: s.rules for s in RULE_SETS}


def rules_for_tag(tag: str) -> Rules:
    """``YU1-C`` → the classic Yukon rules; ``KeyError`` if unknown."""
    return by_prefix(tag).rules


__all__ = [
    "BY_VARIANT",
    "RULE_SETS",
    "UNDO_DEPTH",
    "FortyThieves",
    "GameFamily",
    "Op",
    "OpKind",
    "RuleSet",
    "Rules",
    "UndoRecord",
    "UndoStack",
    "Yukon",
    "by_variant",
    "rules_for_tag",
]
