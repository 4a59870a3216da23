"""The move-log notation: ``Move``, ``Draw`` and ``Undo``, in text and JSON form.

Parsing is strict and independent of any position (stage one: syntax);
whether an action is allowed is the rules' business (stage two).

>>> str(Move.from_text("t2:10♦>t5"))
'T2:TD>T5'
>>> parse_action("S>W")
Draw()
>>> [str(a) for a in parse_log("T7>F  # to its foundation\\nS, U")]
['T7>F', 'S', 'U']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, ClassVar, Final, final

from .cards import Card, ascii_upper
from .errors import InvalidActionError, InvalidCardError

_NUMBER = re.compile(r"[1-9][0-9]{0,2}\Z")
_SEPARATORS = re.compile(r"[\s,;]+")

EXAMPLES = "a move like T2:TD>T5, T7>F or W>T4, S to draw, or U to undo"


@final
class Move:
    """Move the card (Yukon: the group) named by ``source``/``card`` onto ``target``.

    ``source`` is ``"T"`` (column), ``"W"`` (waste) or ``"F"`` (foundation) with a
    1-based ``source_index`` (0 for the waste); ``target`` is ``"T"`` or ``"F"``,
    ``target_index`` ``None`` for a foundation left to the app's choice.
    ``card``, when given, asserts which card the action picks up. An immutable value,
    equal to the moves of the same fields. (The actions are plain classes rather than
    dataclasses: a dataclass costs every process about a millisecond to define.)
    """

    __slots__ = ("source", "source_index", "target", "target_index", "card", "text")

    def __init__(
        self, source: str, source_index: int, target: str, target_index: int | None, card: Card | None = None
    ) -> None:
        self.source: Final = source
        self.source_index: Final = source_index
        self.target: Final = target
        self.target_index: Final = target_index
        self.card: Final = card
        named = "" if card is None else f":{card}"
        self.text: Final = f"{self.source_name}{named}>{self.target_name}"

    def _fields(self) -> tuple[str, int, str, int | None, Card | None]:
        return (self.source, self.source_index, self.target, self.target_index, self.card)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Move(source={self.source!r}, source_index={self.source_index!r}, target={self.target!r}, "
            f"target_index={self.target_index!r}, card={self.card!r})"
        )

    @classmethod
    def from_text(cls, text: object) -> Move:
        action = parse_action(text)
        if not isinstance(action, Move):
            raise InvalidActionError(f"{text!r} is not a move", text=str(text))
        return action

    @property
    def source_name(self) -> str:
        return "W" if self.source == "W" else f"{self.source}{self.source_index}"

    @property
    def target_name(self) -> str:
        return "F" if self.target_index is None else f"{self.target}{self.target_index}"

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, str]:
        out = {"from": self.source_name}
        if self.card is not None:
            out["card"] = str(self.card)
        out["to"] = self.target_name
        return out


class _Word:
    """An action that is one word (``S``, ``U``): all of its kind are equal; ``text`` and
    ``name`` (its JSON form) are the subclass's."""

    __slots__ = ()
    text: ClassVar[str] = ""
    name: ClassVar[str] = ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Word):
            return NotImplemented
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, str]:
        return {"action": self.name}


@final
class Draw(_Word):
    """Turn the next stock card onto the waste (Forty Thieves)."""

    __slots__ = ()
    text: ClassVar[str] = "S"
    name: ClassVar[str] = "draw"


@final
class Undo(_Word):
    """Undo the last action that can still be undone."""

    __slots__ = ()
    text: ClassVar[str] = "U"
    name: ClassVar[str] = "undo"


Action = Move | Draw | Undo
DRAW = Draw()
UNDO = Undo()


def _pile_number(text: str, what: str, whole: str) -> int:
    if not _NUMBER.match(text):
        raise InvalidActionError(
            f"{whole!r}: {what} number {text!r} is not a number from 1 (columns T1…, foundations F1…)", text=whole
        )
    return int(text)


def _parse_source(text: str, whole: str) -> tuple[str, int]:
    if text == "W":
        return "W", 0
    if text[:1] in ("T", "F") and len(text) > 1:
        return text[0], _pile_number(text[1:], "column" if text[0] == "T" else "foundation", whole)
    if text == "S":
        raise InvalidActionError(f"{whole!r}: the stock only turns cards onto the waste: write S", text=whole)
    if text == "F":
        raise InvalidActionError(f"{whole!r}: a foundation as source needs its number, e.g. F2>T4", text=whole)
    shown = text or "nothing"
    raise InvalidActionError(
        f"{whole!r}: source {shown!r} is not a pile: expected a column T1…, the waste W or a foundation F1…", text=whole
    )


def _parse_target(text: str, whole: str) -> tuple[str, int | None]:
    if text == "F":
        return "F", None
    if text[:1] in ("T", "F") and len(text) > 1:
        return text[0], _pile_number(text[1:], "column" if text[0] == "T" else "foundation", whole)
    shown = text or "nothing"
    raise InvalidActionError(f"{whole!r}: target {shown!r} is not a column T1… or a foundation F or F1…", text=whole)


def parse_action(text: object) -> Action:
    """Parse one action in text form; raise :class:`InvalidActionError` on bad syntax."""
    if not isinstance(text, str):
        raise InvalidActionError(f"an action in text form must be a string, not {type(text).__name__}", text=repr(text))
    return parse_text(text)


@lru_cache(maxsize=8192)
def parse_text(text: str) -> Action:
    """:func:`parse_action` for a value known to be a string (the replay loop's
    fast path), cached: logs repeat the same few hundred actions."""
    upper = ascii_upper(text.strip())
    if upper == "S" or upper == "S>W":
        return DRAW
    if upper == "U":
        return UNDO
    if not upper:
        raise InvalidActionError(f"empty action: expected {EXAMPLES}", text=text)
    if ">" not in upper:
        raise InvalidActionError(f"{text!r} is not an action: expected {EXAMPLES}", text=text)
    left, _, right = upper.partition(">")
    if ">" in right:
        raise InvalidActionError(f"{text!r}: an action has one '>', between source and target", text=text)
    card = None
    if ":" in left:
        left, _, card_text = left.partition(":")
        try:
            card = Card.from_text(card_text)
        except InvalidCardError:
            raise InvalidActionError(
                f"{text!r}: {card_text!r} is not a card: expected rank A 2-9 T J Q K (or 10) "
                f"then suit S H D C (or ♠ ♥ ♦ ♣)",
                text=text,
            ) from None
    source, source_index = _parse_source(left, text)
    target, target_index = _parse_target(right, text)
    return Move(source, source_index, target, target_index, card)


_JSON_MOVE_KEYS = {"from", "card", "to"}


def action_from_json(item: Any) -> Action:
    """Parse one item of a JSON log: a text action or an action object."""
    if isinstance(item, str):
        return parse_action(item)
    if not isinstance(item, dict):
        raise InvalidActionError(f"an action is a string or an object, not {_json_type(item)}", text=_compact(item))
    if "action" in item:
        if len(item) > 1:
            extra = sorted(set(item) - {"action"})[0]
            raise _bad_object(item, f"unexpected key {extra!r} beside 'action'")
        kind = item["action"]
        if kind == "draw":
            return DRAW
        if kind == "undo":
            return UNDO
        raise _bad_object(item, '\'action\' must be "draw" or "undo"')
    if not _JSON_MOVE_KEYS.issuperset(item):
        extra = sorted(set(item) - _JSON_MOVE_KEYS)[0]
        raise _bad_object(item, f"unexpected key {extra!r}: a move has 'from', 'to' and optionally 'card'")
    for key in ("from", "to"):
        if key not in item:
            raise _bad_object(item, f"a move needs {key!r}")
        if not isinstance(item[key], str):
            raise _bad_object(item, f"{key!r} must be a string")
    card = item.get("card")
    if card is not None and not isinstance(card, str):
        raise _bad_object(item, "'card' must be a string such as \"TD\"")
    source, target = item["from"].strip(), item["to"].strip()
    if ascii_upper(source) == "S" and ascii_upper(target) == "W" and card is None:
        return DRAW
    for key, value in (("from", source), ("to", target)):
        if not value or any(ch in value for ch in ":> \t\n,;#"):
            raise _bad_object(item, f"{key!r} value {value!r} is not a pile")
    if card is not None and (not card.strip() or any(ch in card for ch in ":> \t\n,;#")):
        raise _bad_object(item, f"{card!r} is not a card")
    middle = "" if card is None else f":{card.strip()}"
    try:
        return parse_action(f"{source}{middle}>{target}")
    except InvalidActionError as exc:
        text = _compact(item)
        raise InvalidActionError(exc.message.replace(repr(f"{source}{middle}>{target}"), text, 1), text=text) from None


def _bad_object(item: dict[str, Any], reason: str) -> InvalidActionError:
    text = _compact(item)  # (only for an error: a valid object is never dumped)
    return InvalidActionError(f"{text}: {reason}", text=text)


def json_key(item: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """What an action object is made of, as a key for the compiled actions (its keys and
    values, in order); :class:`TypeError` when a value is not hashable (then it is no action)."""
    key = tuple(item.items())
    hash(key)
    return key


def split_text_log(text: str) -> list[str]:
    """Split a text log into action tokens: separators are white space, ``,`` and ``;``;
    ``#`` starts a comment running to the end of the line."""
    if "#" not in text:  # the usual case, at C speed: line breaks are white space too
        if "," in text or ";" in text:
            text = text.replace(",", " ").replace(";", " ")
        return text.split()
    tokens: list[str] = []
    for line in text.splitlines():
        hash_at = line.find("#")
        if hash_at >= 0:
            line = line[:hash_at]
        tokens.extend(t for t in _SEPARATORS.split(line) if t)
    return tokens


def log_items(log: str | Iterable[Any]) -> list[Any]:
    """The items of a log: text tokens for the text form, the array's items for JSON."""
    if isinstance(log, str):
        return split_text_log(log)
    if isinstance(log, (bytes, dict)) or not hasattr(log, "__iter__"):
        raise InvalidActionError(
            f"a log is a string (text form) or an array of actions, not {_json_type(log)}", text=_compact(log)
        )
    return list(log)


def item_text(item: Any) -> str:
    """How an item of a log is shown in errors: text as written, objects as compact JSON."""
    return item if isinstance(item, str) else _compact(item)


def parse_item(item: Any) -> Action:
    """One item of a log in either form."""
    return parse_text(item) if type(item) is str else action_from_json(item)


def parse_log(log: str | Iterable[Any]) -> list[Action]:
    """Parse a whole log; a syntax error carries the 0-based ``index`` of the bad action."""
    actions: list[Action] = []
    for index, item in enumerate(log_items(log)):
        try:
            actions.append(parse_item(item))
        except InvalidActionError as exc:
            exc.index = index
            exc.text = item_text(item)
            raise
    return actions


def format_log(actions: Iterable[Action]) -> str:
    """The text form of a log, one space between actions."""
    return " ".join(str(action) for action in actions)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    except RecursionError:
        kind = _json_type(value)[2:] if isinstance(value, (list, dict)) else "value"
        return f"(a JSON {kind} nested too deeply to show)"
    except (TypeError, ValueError):
        return repr(value)
