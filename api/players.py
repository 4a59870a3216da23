"""Players: registration, names and tokens.

A player registers a name and gets a token (``svp_`` and 43 URL-safe characters),
shown once and stored only as its SHA-256, as API keys are (:mod:`api.auth`).

Names are stored in NFC. Two names are the same player when their *skeletons*
are equal: NFKC, casefolding, then Unicode's confusable prototypes (UTS #39,
``api/data/confusables.txt``, Unicode's published data file), so that "René"
composed or decomposed, Cyrillic "аnn", full-width "ａnn" and mathematical-bold
"𝐚𝐧𝐧" all mean "ann". A name must contain a letter or a digit, must hold no
blank-looking character (Hangul fillers, the blank Braille pattern, spaces
other than U+0020) and at most :data:`MAX_MARKS_IN_A_ROW` combining marks
after any one character.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from .auth import hash_token
from .models import Player

TOKEN_PREFIX = "svp_"
CONFUSABLES = Path(__file__).resolve().parent / "data" / "confusables.txt"
#: combining marks allowed after one base character (Vietnamese needs 2, some Indic clusters 3)
MAX_MARKS_IN_A_ROW = 3
#: characters that look blank although Unicode calls some of them letters (Hangul fillers, blank Braille)
BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u2060\ufeff")


class NameError_(ValueError):
    """A name that cannot be a player's name; the message says why (and where)."""


class NameTaken(ValueError):
    """A name whose skeleton is already a player's."""

    def __init__(self, player: Player) -> None:
        super().__init__(f"the name is taken: it reads as {player.name!r}, an existing player")
        self.player = player


@lru_cache(maxsize=1)
def prototypes() -> dict[str, str]:
    """Each confusable character's prototype, from Unicode's ``confusables.txt``."""
    table: dict[str, str] = {}
    with CONFUSABLES.open(encoding="utf-8-sig") as data:
        for line in data:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 3:
                continue
            source = "".join(chr(int(c, 16)) for c in fields[0].split())
            table[source] = "".join(chr(int(c, 16)) for c in fields[1].split())
    return table


def _map(text: str) -> str:
    table = prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(char, char) for char in text))


def skeleton(name: str) -> str:
    """The form two look-alike names share: NFKC, casefold, then UTS #39's skeleton
    (NFD, prototypes, NFD), twice so that a prototype that casefolds maps on.

    >>> skeleton("René") == skeleton("Rene\\u0301") == skeleton("RENÉ")
    True
    >>> len({skeleton(n) for n in ("ann", "\\u0430nn", "\\uff41nn", "\\U0001d41a\\U0001d427\\U0001d427")})
    1
    """
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", name).casefold())
    return _map(_map(text).casefold())


def skeleton_hash(name: str) -> str:
    """The SHA-256 of the skeleton, hex: what the unique column holds (a skeleton can be long)."""
    return hashlib.sha256(skeleton(name).encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """``name`` in NFC if it may be a player's name, else :class:`NameError_`. (The
    request schema has already trimmed it, refused control and unprintable
    characters, and checked its length.)"""
    text = unicodedata.normalize("NFC", name)
    for position, char in enumerate(text, 1):
        if char in BLANK_LOOKING or (unicodedata.category(char) == "Zs" and char != " "):
            raise NameError_(f"character {position} (U+{ord(char):04X}) looks blank")
    if not any(unicodedata.category(char)[0] in "LN" for char in text):
        raise NameError_("a name must contain a letter or a digit")
    run = 0
    for position, char in enumerate(unicodedata.normalize("NFD", text), 1):
        if unicodedata.category(char).startswith("M"):
            run += 1
            if position == run:
                raise NameError_("a name must not start with a combining mark")
            if run > MAX_MARKS_IN_A_ROW:
                raise NameError_(f"more than {MAX_MARKS_IN_A_ROW} combining marks on one character")
        else:
            run = 0
    return text


def find_player(session: Session, name: str) -> Player | None:
    """The player whose name reads as ``name`` (same skeleton), or else whose stored name is
    exactly ``name`` (a player kept from before names were checked, without a skeleton)."""
    found = session.scalar(select(Player).where(Player.skeleton_hash == skeleton_hash(name)))
    if found is None:
        found = session.scalar(select(Player).where(Player.name == unicodedata.normalize("NFC", name)))
    return found


def register(session: Session, name: str) -> tuple[Player, str]:
    """A new player named ``name`` and its token (the only time the token exists in clear).
    :class:`NameError_` for a name that cannot be one, :class:`NameTaken` for a taken one.
    The caller commits."""
    text = check_name(name)
    existing = find_player(session, text)
    if existing is not None:
        raise NameTaken(existing)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    player = Player(name=text, skeleton_hash=skeleton_hash(text), token_hash=hash_token(token),
                    created_at=datetime.now(timezone.utc))
    session.add(player)
    session.flush()
    return player, token


def unregistered(session: Session, name: str) -> Player:
    """The player a trusted key (or the debug server without keys) submits for under ``name``:
    the tokenless player of that name, created on first use. The caller makes sure that
    no registered player reads as ``name``."""
    text = check_name(name)
    player = find_player(session, text)
    if player is None:
        # concurrent first submissions under one name: the first insert wins, the others find it
        dialect = session.get_bind().dialect.name
        insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(Player.__table__)
        session.execute(insert.values(name=text, skeleton_hash=skeleton_hash(text), token_hash=None,
                                      created_at=datetime.now(timezone.utc)).on_conflict_do_nothing())
        player = find_player(session, text)
        assert player is not None
    return player


def is_player_token(token: str | None) -> bool:
    return token is not None and token.startswith(TOKEN_PREFIX)


def player_for_token(session: Session, token: str) -> Player | None:
    return session.scalar(select(Player).where(Player.token_hash == hash_token(token)))
