"""Game codes such as ``YU1-C-AAAAAAB``: parse and format.

>>> code = GameCode.from_text(" yu1-r-aaaaab7 ")
>>> str(code), code.number
('YU1-R-AAAAAB7', 63)
>>> str(GameCode("FT", "N", 1))
'FT1-N-AAAAAAB'
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, final

from .cards import ascii_upper
from .errors import InvalidCodeError
from .rules.registry import GAMES, rule_letters, rule_set

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
DEAL_LENGTH = 7
MAX_DEAL = 32**DEAL_LENGTH - 1  # 34359738367
VERSION = 1

#: the rule letters each game accepts, and their names (from the registry)
RULES: dict[str, dict[str, str]] = {letters: rule_letters(letters) for letters in GAMES}
GAME_NAMES = {letters: game.name for letters, game in GAMES.items()}
_EXPECTED_GAMES = " or ".join(GAMES)

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@final
class GameCode:
    """A deal (``number``) of a game (``YU``/``FT``) under a rule set (``C``/``R``/``N``): an
    immutable value, equal to the codes of the same fields. (A plain class rather than a
    dataclass: a dataclass costs every process about a millisecond to define.)"""

    __slots__ = ("game", "rules", "number", "version", "text")

    def __init__(self, game: str, rules: str, number: int, version: int = VERSION) -> None:
        if game not in RULES:
            raise InvalidCodeError(f"unknown game {game!r}: expected {_EXPECTED_GAMES}", part="game")
        if rules not in RULES[game]:
            raise InvalidCodeError(
                f"rule letter {rules} is not valid for {game}: expected " + " or ".join(RULES[game]), part="rules"
            )
        if not isinstance(number, int) or not 0 <= number <= MAX_DEAL:
            raise InvalidCodeError(f"deal number {number!r} is outside 0 … {MAX_DEAL}", part="deal")
        if version != VERSION:
            raise InvalidCodeError(f"unsupported version {version}", part="version")
        self.game: Final = game
        self.rules: Final = rules
        self.number: Final = number
        self.version: Final = version
        digits = []
        n = number
        for _ in range(DEAL_LENGTH):
            digits.append(BASE32[n % 32])
            n //= 32
        #: the code's text form, made once (a code is shown in every verdict and record)
        self.text: Final = f"{game}{version}-{rules}-{''.join(reversed(digits))}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameCode):
            return NotImplemented
        return self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"GameCode(game={self.game!r}, rules={self.rules!r}, number={self.number!r}, version={self.version!r})"

    @classmethod
    def from_text(cls, text: object) -> GameCode:
        """Parse a code, case-insensitively, with surrounding white space removed.

        Errors name the wrong part and the 1-based position of the wrong
        character in the trimmed code. Codes are remembered: the same few deals
        come again and again.
        """
        if not isinstance(text, str):
            raise InvalidCodeError("a game code must be text", part="format")
        return _parse_code(text) if cls is GameCode else cls._parse(text)

    @classmethod
    def _parse(cls, text: str) -> GameCode:
        code = ascii_upper(text.strip())
        if not code:
            raise InvalidCodeError("the game code is empty: expected e.g. YU1-C-AAAAAAB", part="format")
        parts = code.split("-")
        if len(parts) != 3:
            raise InvalidCodeError(
                f"a game code has three parts separated by '-' (GAME+VERSION-RULES-DEAL, e.g. YU1-C-AAAAAAB), "
                f"found {len(parts)}",
                part="format",
            )
        head, rules, deal = parts
        letters = len(head) - len(head.lstrip(_LETTERS))  # the game: the leading letters
        game, version = head[:letters], head[letters:]
        if game not in RULES:
            raise InvalidCodeError(
                f"unknown game {game!r} at position 1: expected {_EXPECTED_GAMES}", part="game", position=1
            )
        if not version:
            raise InvalidCodeError(
                f"missing version after {game} at position {len(game) + 1}: expected 1",
                part="version",
                position=len(game) + 1,
            )
        if not version.isdigit() or not version.isascii():
            bad = next(i for i, ch in enumerate(version) if not (ch.isascii() and ch.isdigit()))
            raise InvalidCodeError(
                f"character {len(game) + bad + 1} {version[bad]!r} of the version is not a digit",
                part="version",
                position=len(game) + bad + 1,
            )
        if version != str(VERSION):
            raise InvalidCodeError(
                f"unsupported version {version} at position {len(game) + 1}: only version {VERSION} exists",
                part="version",
                position=len(game) + 1,
            )
        rules_at = len(head) + 2
        if rules not in RULES[game]:
            shown = rules if rules else "(none)"
            raise InvalidCodeError(
                f"rule letter {shown} is not valid for {game} at position {rules_at}: expected "
                + " or ".join(RULES[game]),
                part="rules",
                position=rules_at,
            )
        deal_at = rules_at + len(rules) + 1
        if len(deal) != DEAL_LENGTH:
            raise InvalidCodeError(
                f"the deal number has {DEAL_LENGTH} characters, found {len(deal)} at position {deal_at}",
                part="deal",
                position=deal_at,
            )
        number = 0
        for i, ch in enumerate(deal):
            value = BASE32.find(ch)
            if value < 0:
                raise InvalidCodeError(
                    f"deal number: character {i + 1} {ch!r} is not base32 (A-Z, 2-7), at position {deal_at + i} "
                    f"of the code",
                    part="deal",
                    position=deal_at + i,
                )
            number = number * 32 + value
        return cls(game, rules, number)

    def __str__(self) -> str:
        return self.text

    @property
    def deal(self) -> str:
        """The 7-character base32 deal part."""
        return str(self)[-DEAL_LENGTH:]

    @property
    def game_name(self) -> str:
        """``yukon`` or ``forty-thieves``."""
        return GAME_NAMES[self.game]

    @property
    def rules_name(self) -> str:
        """``classic``, ``relaxed`` or ``normal``."""
        return RULES[self.game][self.rules]

    @property
    def variant(self) -> str:
        """``yukon-classic``, ``yukon-relaxed`` or ``forty-thieves``."""
        return rule_set(self.game, self.rules).variant


_parse_code = lru_cache(maxsize=4096)(GameCode._parse)
