"""The result of a replay and the JSON shapes shared by the CLI, the API and the docs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import engine
from engine import EngineError, Game, GameCode

#: the claims a client may make, compared field by field
CLAIM_FIELDS = ("score", "moves", "won")


@dataclass(frozen=True, slots=True)
class ActionError:
    """The first action that could not be played."""

    index: int  # 0-based place in the log
    action: str  # the action as written
    rule: str  # stable rule id, or "syntax" for notation errors
    message: str  # what was expected / the rule, in a sentence
    kind: str  # "syntax" or "rule"
    position: str  # the position just before the action
    key: str = "syntax"  # message key in engine.messages.MESSAGES (for translations)
    params: dict[str, str] = field(default_factory=dict)  # the message's parameters

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "action": self.action,
            "rule": self.rule,
            "message": self.message,
            "kind": self.kind,
            "position": self.position,
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """Everything a replay recomputes; nothing here is taken from the client."""

    code: GameCode
    legal: bool
    won: bool
    score: int
    moves: int
    actions: int
    undos: int
    takebacks: int
    foundation_cards: int
    canonical: list[str]
    position: str
    error: ActionError | None = None
    claims: dict[str, dict[str, Any]] | None = field(default=None)

    @property
    def claims_match(self) -> bool | None:
        """``None`` when nothing was claimed."""
        if not self.claims:
            return None
        return all(item["match"] for item in self.claims.values())

    @property
    def verified(self) -> bool:
        """Legal, and every claimed value equals the recomputed one."""
        return self.legal and self.claims_match is not False

    @property
    def canonical_text(self) -> str:
        return " ".join(self.canonical)

    def to_json(self) -> dict[str, Any]:
        """The object ``verifier replay --json`` prints and ``POST /verify`` answers."""
        return {
            "code": str(self.code),
            "game": self.code.game_name,
            "rules": self.code.rules_name,
            "variant": self.code.variant,
            "legal": self.legal,
            "verified": self.verified,
            "won": self.won,
            "score": self.score,
            "moves": self.moves,
            "actions": self.actions,
            "undos": self.undos,
            "takebacks": self.takebacks,
            "foundation_cards": self.foundation_cards,
            "error": None if self.error is None else self.error.to_json(),
            "claims": self.claims,
            "claims_match": self.claims_match,
            "canonical": self.canonical_text,
            "position": self.position,
            "engine_version": engine.__version__,
            "rules_version": engine.RULES_VERSION,
        }


class InvalidClaimsError(EngineError, ValueError):
    """Claims that are not an object of ``score``, ``moves`` and ``won``."""


def compare_claims(claimed: dict[str, Any] | None, actual: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """Field by field: ``{"score": {"claimed": 10, "actual": 15, "match": False}}``."""
    if claimed is None:
        return None
    if not isinstance(claimed, dict):
        raise InvalidClaimsError("claims are an object with score, moves and/or won")
    if not claimed:
        return None
    unknown = set(claimed) - set(CLAIM_FIELDS)
    if unknown:
        raise InvalidClaimsError(f"unknown claimed field {sorted(unknown)[0]!r}: claims are {', '.join(CLAIM_FIELDS)}")
    out = {}
    for name in CLAIM_FIELDS:
        if name in claimed and claimed[name] is not None:
            value = claimed[name]
            match = value is actual[name] if name == "won" else (type(value) is int and value == actual[name])
            out[name] = {"claimed": value, "actual": actual[name], "match": match}
    return out or None


def deal_json(code: GameCode | str, reveal: bool = False) -> dict[str, Any]:
    """The object ``verifier deal --json`` prints and ``GET /deals/{code}`` answers."""
    game = Game.from_code(code)
    canonical = game.code
    assert canonical is not None
    return {
        "code": str(canonical),
        "game": canonical.game_name,
        "rules": canonical.rules_name,
        "variant": canonical.variant,
        "number": canonical.number,
        "revealed": reveal,
        **game.position.to_json(reveal=reveal),
        "position": str(game.position) if reveal else None,
    }
