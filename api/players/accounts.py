"""Players: registration, names and tokens.

A player registers a name and gets a token (``svp_`` and 43 URL-safe characters),
shown once and stored only as its SHA-256, as API keys are (:mod:`api.platform.auth`).

Names are stored in NFC. Two names are the same player when their *skeletons*
are equal (UTS #39, :mod:`api.fairplay.names`), so that "René" composed or decomposed,
Cyrillic "аnn", Greek "ΚΑΤΕ" for "KATE", "biII" for "bill", full-width "ａnn" and
mathematical-bold "𝐚𝐧𝐧" all mean the same player. A name must contain a letter or
a digit, must hold no invisible character (default-ignorable code points: variation
selectors, tags, joiners …) and no blank-looking one (Hangul fillers, the blank
Braille pattern, spaces other than U+0020), must not mix scripts beyond UTS #39's
moderately restrictive profile, and has at most :data:`MAX_MARKS_IN_A_ROW`
combining marks after any one character.

Refusals are domain errors (:class:`PlayerError`, :class:`BadName`, :class:`NameTaken`);
``api/routes/errors.py`` answers each with its problem. The request's token is read by
the routes and handed in.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import Connection, bindparam, or_, select
from sqlalchemy.orm import Session

from api.fairplay.names import invisible, mixed_scripts, skeleton
from api.platform.auth import _TOKEN, MAX_TOKEN_LENGTH, PLAYER_TOKEN_PREFIX, hash_token
from api.platform.models import ApiKey, Player

TOKEN_PREFIX = PLAYER_TOKEN_PREFIX
#: combining marks allowed after one base character (Vietnamese needs 2, some Indic clusters 3)
MAX_MARKS_IN_A_ROW = 3
#: characters that look blank although Unicode calls some of them letters (Hangul fillers, blank Braille)
BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u2060\ufeff")


class BadName(ValueError):
    """A name that cannot be a player's name; the message says why (and where)."""


class NameTaken(ValueError):
    """A name whose skeleton is already a player's."""

    def __init__(self, player: Player) -> None:
        super().__init__(f"the name is taken: it reads as {player.name!r}, an existing player")
        self.player = player


class PlayerError(Exception):
    """A request refused for who sent it or whom it is for; the message says why."""


class TokenNeeded(PlayerError):
    """``what`` ("a hint") needs a player token, and none was sent."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} needs a player token")
        self.what = what


class KeyNotToken(PlayerError):
    """``what`` needs a player token, and an API key was sent: a key cannot be ``doing`` it."""

    def __init__(self, what: str, doing: str) -> None:
        super().__init__(f"{what} needs a player token; an API key cannot {doing}")
        self.what, self.doing = what, doing


class BadToken(PlayerError):
    """A player token no player holds."""

    def __init__(self) -> None:
        super().__init__("the player token is not valid")


class WrongPlayer(PlayerError):
    """A record submitted for a player its sender may not submit for."""


class BadClaim(PlayerError):
    """A submission's ``player`` that names no one: missing, or not a name (the message says why)."""


def skeleton_hash(name: str) -> str:
    """The SHA-256 of the skeleton, hex: what the unique column holds (a skeleton can be long)."""
    return hashlib.sha256(skeleton(name).encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """``name`` in NFC if it may be a player's name, else :class:`BadName`. (The
    request schema has already trimmed it, refused control and unprintable
    characters, and checked its length.)"""
    for position, char in enumerate(name, 1):  # (NFC changes none of these: positions as sent)
        if char in BLANK_LOOKING or (unicodedata.category(char) == "Zs" and char != " "):
            raise BadName(f"character {position} (U+{ord(char):04X}) looks blank")
        what = invisible(char)
        if what is not None:
            raise BadName(f"character {position} (U+{ord(char):04X}) is {what}, which does not show: a name may "
                          "not hold invisible characters")
    text = unicodedata.normalize("NFC", name)
    if not any(unicodedata.category(char)[0] in "LN" for char in text):
        raise BadName("a name must contain a letter or a digit")
    run = 0
    for position, char in enumerate(unicodedata.normalize("NFD", text), 1):
        if unicodedata.category(char).startswith("M"):
            run += 1
            if position == run:
                raise BadName("a name must not start with a combining mark")
            if run > MAX_MARKS_IN_A_ROW:
                raise BadName(f"more than {MAX_MARKS_IN_A_ROW} combining marks on one character")
        else:
            run = 0
    mixed = mixed_scripts(text)
    if mixed is not None:
        position, char, scripts = mixed
        raise BadName(f"character {position} ({char!r}, U+{ord(char):04X}) mixes scripts ({', '.join(scripts)}): a "
                      "name may be written in one script, or in Latin with one other script but Cyrillic or Greek "
                      "(Latin with Han and kana, Bopomofo or Hangul is fine)")
    return text


def find_player(session: Session, name: str) -> Player | None:
    """The player named exactly ``name`` (in NFC), else the one whose name reads as it (same
    skeleton). Exact names come first for players kept from before registration existed
    whose names read as an older player's (they have no skeleton)."""
    return session.scalar(_FIND_PLAYER, name_params(name))


def name_params(name: str) -> dict[str, str]:
    """The bind parameters of :func:`named`: the name in NFC and its skeleton's hash."""
    return {"nfc": unicodedata.normalize("NFC", name), "skeleton": skeleton_hash(name)}


def named(*columns: Any) -> Any:
    """``columns`` of the player a name reads as (:func:`find_player`; parameters :func:`name_params`)."""
    return (select(*columns)
            .where(or_(Player.name == bindparam("nfc"), Player.skeleton_hash == bindparam("skeleton")))
            .order_by((Player.name == bindparam("nfc")).desc()).limit(1))


#: :func:`find_player`'s statement, built once
_FIND_PLAYER = named(Player)
#: :func:`named_player`'s: the id, name and whether registered of the player a name reads as
_NAMED_SUBMITTER = named(Player.id, Player.name, Player.token_hash.is_not(None))


def named_player(connection: Connection, name: str) -> Submitter | None:
    """The player ``name`` reads as (:func:`find_player`), as :func:`settle` takes it (Core: no ORM)."""
    row = connection.execute(_NAMED_SUBMITTER, name_params(name)).first()
    return None if row is None else Submitter(int(row[0]), str(row[1]), bool(row[2]))


def register(session: Session, name: str) -> tuple[Player, str]:
    """A new player named ``name`` and its token (the only time the token exists in clear).
    :class:`BadName` for a name that cannot be one, :class:`NameTaken` for a taken one.
    The caller commits."""
    text = check_name(name)
    existing = find_player(session, text)
    if existing is not None:
        raise NameTaken(existing)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    player = Player(name=text, skeleton_hash=skeleton_hash(text), token_hash=hash_token(token),
                    created_at=datetime.now(UTC))
    session.add(player)
    session.flush()
    return player, token


def issue_token(session: Session, name: str, replace: bool = False) -> tuple[Player, str]:
    """A token for the player named ``name`` (an operator's command): for a player kept from
    before registration existed, or, with ``replace``, a new one for a player who lost theirs
    (the old one stops working). :class:`LookupError` for an unknown player, :class:`ValueError`
    for one who has a token and no ``replace``. The caller commits."""
    player = find_player(session, name)
    if player is None:
        raise LookupError(f"there is no player {name!r}")
    if player.token_hash is not None and not replace:
        raise ValueError(f"{player.name!r} has a token already; --replace gives a new one and the old one "
                         "stops working")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    player.token_hash = hash_token(token)
    return player, token


@cache
def is_player_token(token: str | None) -> bool:
    return token is not None and token.startswith(TOKEN_PREFIX)


def player_for_token(session: Session, token: str) -> Player | None:
    return session.scalar(select(Player).where(Player.token_hash == hash_token(token)))


def token_owner(session: Session, token: str) -> Player:
    """The player holding the player token ``token``; :class:`BadToken` if none does."""
    player = None
    if len(token) <= MAX_TOKEN_LENGTH and _TOKEN.match(token):
        player = player_for_token(session, token)
    if player is None:
        raise BadToken
    return player


def token_player(session: Session, token: str | None, what: str, doing: str) -> Player:
    """The player of the sent ``token``, for ``what`` needs one ("a hint"): :class:`TokenNeeded`
    without a token, :class:`KeyNotToken` with an API key (which cannot be ``doing`` it: "ask
    for hints"; the caller checks the key first), :class:`BadToken` for a token no player holds."""
    if token is None:
        raise TokenNeeded(what)
    if not is_player_token(token):
        raise KeyNotToken(what, doing)
    return token_owner(session, token)


# -- who submits a record for whom -------------------------------------------------


@dataclass(frozen=True)
class Submitter:
    """The player a record is stored for: ``id`` is ``None`` for a new tokenless player,
    made with the record (``api.records.submit``)."""

    id: int | None
    name: str
    registered: bool = False


@dataclass(frozen=True)
class Claim:
    """Whom a submission is for, before the database is read: the token's player
    (``known``), or a checked ``name`` and the key that may vouch for it (``vouch``)."""

    known: Submitter | None = None
    name: str = ""
    vouch: str | None = None


def claimant(session: Session, sender: Player | ApiKey | None, name: str | None) -> Claim:
    """Whom a record is claimed for; :func:`settle` decides, with the player the name reads as.

    - A player token submits for its player; a ``player`` naming anyone else is :class:`WrongPlayer`.
    - An API key allowed to vouch (``keys create --vouch``) submits for registered players by name.
    - Any other key (or none, where keys are optional) submits under names no registered
      player reads as: a tokenless player of that name.

    A missing ``player`` or one that is not a name is :class:`BadClaim`."""
    if isinstance(sender, Player):
        if name is not None:
            named = find_player(session, name)
            if named is None or named.id != sender.id:
                raise WrongPlayer(f"this player token is {sender.name!r}'s: it cannot submit a record for {name!r}")
        return Claim(known=Submitter(sender.id, sender.name, True))
    if name is None:
        raise BadClaim("Missing data for required field.")
    try:
        text = check_name(name)
    except BadName as error:
        raise BadClaim(str(error)) from None
    return Claim(name=text, vouch=sender.name if sender is not None and sender.vouch else None)


def settle(claim: Claim, named: Submitter | None) -> tuple[Submitter, str | None]:
    """The player a record is stored for, and the key that vouched for them (if one did), from
    the ``claim`` and the player its name reads as (``named``, read with the deal's evidence):
    :class:`WrongPlayer` for a registered player no one vouches for."""
    if claim.known is not None:
        return claim.known, None
    if named is not None and named.registered:
        if claim.vouch is not None:
            return named, claim.vouch
        raise WrongPlayer(f"{claim.name!r} reads as {named.name!r}, a registered player: only their player token, "
                          f"or an API key allowed to vouch for players, may submit their records")
    return named or Submitter(None, claim.name), None


def reads_as(older: str, older_id: int) -> str:
    """Why a kept look-alike player's name waits for review (``Player.name_review``)."""
    return f"the name reads as {older!r} (player {older_id}), an older player's"


def adopt(session: Session, name: str) -> Player:
    """The player of a name stored before (an import): the player of exactly that NFC name, else
    a new tokenless one, holding the skeleton unless an older player already reads the same (then
    it is flagged for review, as the names migration flags such players)."""
    text = unicodedata.normalize("NFC", name)
    player = session.scalar(select(Player).where(Player.name == text))
    if player is None:
        hashed = skeleton_hash(text)
        older = session.scalar(select(Player).where(Player.skeleton_hash == hashed))
        review = None if older is None else reads_as(older.name, older.id)
        player = Player(name=text, skeleton_hash=None if older else hashed, token_hash=None,
                        created_at=datetime.now(UTC), name_review=review)
        session.add(player)
        session.flush()
    return player


# -- names waiting for an admin's look (flagged by migration 0009) ---------------------

def names_for_review(session: Session, after: int, limit: int) -> tuple[list[Player], int | None]:
    """Players whose names are flagged for review, by id after ``after``; and the next page's ``after``."""
    rows = session.scalars(select(Player).where(Player.name_review.is_not(None), Player.id > after)
                           .order_by(Player.id).limit(limit + 1)).all()
    return list(rows[:limit]), rows[limit - 1].id if len(rows) > limit else None


def clear_name_review(session: Session, name: str) -> Player:
    """An admin looked at the player ``name`` (exactly, in NFC) and keeps it as it is: the flag
    goes (:class:`LookupError` for no such player). The caller commits."""
    player = session.scalar(select(Player).where(Player.name == unicodedata.normalize("NFC", name)))
    if player is None:
        raise LookupError(f"there is no player named exactly {name!r}")
    player.name_review = None
    return player
