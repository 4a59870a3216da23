"""The result of a replay and the JSON shapes shared by the CLI, the API and the docs."""

from __future__ import annotations

from typing import Any

import engine
from engine import EngineError, Game, GameCode

#: the claims a client may make, compared field by field
CLAIM_FIELDS = ("score", "moves", "won")


# (Plain classes of read-only fields rather than dataclasses: defining a dataclass costs every
# process about a millisecond, and the dataclasses module a few more; a replay needs neither.)


class _Value:
    """Equal to a value of the same class and fields; shown with its fields."""

    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Value)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # (mutable fields: lists, dicts)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._fields()))
        return f"{type(self).__name__}({shown})"


class ActionError(_Value):
    """The first action that could not be played."""

    __slots__ = ("index", "action", "rule", "message", "kind", "position", "key", "params")

    def __init__(
        self,
        index: int,
        action: str,
        rule: str,
        message: str,
        kind: str,
        position: str,
        key: str = "syntax",
        params: dict[str, str] | None = None,
    ) -> None:
        self.index = index  # 0-based place in the log
        self.action = action  # the action as written
        self.rule = rule  # stable rule id, or "syntax" for notation errors
        self.message = message  # what was expected / the rule, in a sentence
        self.kind = kind  # "syntax" or "rule"
        self.position = position  # the position just before the action
        self.key = key  # message key in engine.messages.MESSAGES (for translations)
        self.params: dict[str, str] = {} if params is None else params  # the message's parameters

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "action": self.action,
            "rule": self.rule,
            "message": self.message,
            "kind": self.kind,
            "position": self.position,
        }


class Verdict(_Value):
    """Everything a replay recomputes; nothing here is taken from the client."""

    __slots__ = (
        "code", "legal", "won", "score", "moves", "actions", "undos", "takebacks", "foundation_cards", "canonical",
        "position", "error", "claims",
    )

    def __init__(
        self,
        code: GameCode,
        legal: bool,
        won: bool,
        score: int,
        moves: int,
        actions: int,
        undos: int,
        takebacks: int,
        foundation_cards: int,
        canonical: list[str],
        position: str,
        error: ActionError | None = None,
        claims: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.code = code
        self.legal = legal
        self.won = won
        self.score = score
        self.moves = moves
        self.actions = actions
        self.undos = undos
        self.takebacks = takebacks
        self.foundation_cards = foundation_cards
        self.canonical = canonical
        self.position = position
        self.error = error
        self.claims = claims

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
