"""One exception class per failure kind.

``InvalidCodeError``     a game code that does not parse (syntax);
``InvalidActionError``   an action that does not parse (syntax), independent of any position;
``IllegalActionError``   an action that parses but breaks a rule in this position;
``InvalidPositionError`` a position text that does not parse or is inconsistent.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on bad input."""


class InvalidCodeError(EngineError, ValueError):
    """A game code is malformed; ``part`` and ``position`` say where."""

    def __init__(self, message: str, *, part: str, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: which part of the code is wrong: ``format``, ``game``, ``version``, ``rules`` or ``deal``
        self.part = part
        #: 1-based character position in the trimmed code, when one character is to blame
        self.position = position


class InvalidCardError(EngineError, ValueError):
    """A card text such as ``1X`` that names no card."""


class InvalidActionError(EngineError, ValueError):
    """An action that is not valid notation (a syntax error)."""

    def __init__(self, message: str, *, text: str, index: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: the action as written (for JSON actions, its compact JSON text)
        self.text = text
        #: 0-based index of the action in its log, when parsed as part of a log
        self.index = index


class IllegalActionError(EngineError):
    """A well-formed action that breaks a rule in the current position."""

    def __init__(
        self,
        rule: str,
        message: str,
        action: object = None,
        *,
        key: str | None = None,
        params: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{rule}: {message}")
        #: stable rule identifier such as ``tableau.build``
        self.rule = rule
        #: a sentence explaining the rule the way the app's interactive rules do
        self.message = message
        self.action = action
        #: the message template's key in :data:`engine.messages.MESSAGES`, and its parameters
        self.key = key or rule
        self.params = params or {}


class InvalidPositionError(EngineError, ValueError):
    """A position text that cannot be read back."""
