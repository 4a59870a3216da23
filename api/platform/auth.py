"""API keys: who may write.

A key is a random token (``svk_`` and 43 URL-safe characters, 256 bits from
:mod:`secrets`), shown once when it is created and stored only as its SHA-256.
A token that random cannot be guessed or brute-forced from its hash, so a
slow password hash would add nothing but latency; looking a key up by its hash
also means no token is ever compared character by character.

Clients send ``Authorization: Bearer <token>``. Reading is public. Submitting a
record needs a key when keys are required (``API_KEYS_REQUIRED``; by default
everywhere but the debug server); changing a record's status always needs an
admin key, because the status history must name who did it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime

from flask import current_app, request
from sqlalchemy import select
from sqlalchemy.orm import Session

from api.platform.models import ApiKey
from api.platform.problems import Problem

TOKEN_PREFIX = "svk_"
#: a player's token (``api.players.accounts``): it never stands for an API key
PLAYER_TOKEN_PREFIX = "svp_"
REALM = "solitaire-verifier"
#: what a token may look like (RFC 6750 ``b64token``); anything else is refused without a database lookup
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*\Z")
MAX_TOKEN_LENGTH = 200
#: a key's name: shown in records and status histories, so plain and short
KEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}\Z")


class ApiKeyError(ValueError):
    """A key command that cannot be done (bad or taken name, unknown key); the message says why."""


def hash_token(token: str) -> str:
    """The SHA-256 of a token, hex: what the database stores.

    >>> hash_token("svk_example")[:16]
    '4f2f1390e90c15e7'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def check_key_name(name: str) -> str:
    if not KEY_NAME.match(name):
        raise ApiKeyError(f"key name {name!r}: use 1 to 64 letters, digits and . _ @ + - (starting with a letter "
                        f"or digit)")
    return name


def create_key(session: Session, name: str, admin: bool = False, vouch: bool = False) -> tuple[ApiKey, str]:
    """A new key named ``name`` and its token (the only time the token exists in clear); a key
    that may ``vouch`` submits records for registered players by name."""
    check_key_name(name)
    if session.scalar(select(ApiKey).where(ApiKey.name == name)) is not None:
        raise ApiKeyError(f"there is already a key named {name!r} (names are never reused, even after revoking)")
    token = new_token()
    key = ApiKey(name=name, key_hash=hash_token(token), admin=admin, vouch=vouch, created_at=datetime.now(UTC))
    session.add(key)
    session.commit()
    return key, token


def revoke_key(session: Session, name: str) -> ApiKey:
    """Revoke the key named ``name`` (at once, for every worker: each request looks its key up)."""
    key = session.scalar(select(ApiKey).where(ApiKey.name == name))
    if key is None:
        raise ApiKeyError(f"there is no key named {name!r}")
    if key.revoked_at is None:
        key.revoked_at = datetime.now(UTC)
        session.commit()
    return key


def keys_required() -> bool:
    """``API_KEYS_REQUIRED`` when it is set, else required unless the app runs in debug mode."""
    setting = current_app.config.get("API_KEYS_REQUIRED")
    return (not current_app.debug) if setting is None else bool(setting)


def bearer_token() -> str | None:
    """The token of the request's ``Authorization: Bearer …`` header, unchecked; ``None`` without one."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def unauthorized(detail: str, error: str | None = None) -> Problem:
    challenge = f'Bearer realm="{REALM}"'
    if error:
        challenge += f', error="{error}"'
    return Problem(401, detail, "unauthorized", headers={"WWW-Authenticate": challenge})


def authenticate(session: Session, *, required: bool, admin: bool = False) -> ApiKey | None:
    """The request's API key: 401 when it is missing (and ``required``), malformed, unknown or
    revoked; 403 when ``admin`` is needed and the key is not an admin key. Without a header and
    not ``required``: ``None``. A key that is sent is always checked."""
    header = request.headers.get("Authorization")
    if header is None or not header.strip():
        if required or admin:
            needed = "an admin API key" if admin else "an API key"
            raise unauthorized(f"this operation needs {needed}: send the header 'Authorization: Bearer <key>'")
        return None
    token = bearer_token()
    if token is None:
        raise unauthorized("the Authorization header must be 'Bearer <key>'", "invalid_request")
    if len(token) > MAX_TOKEN_LENGTH or not _TOKEN.match(token):
        raise unauthorized("the API key is not valid", "invalid_token")
    if token.startswith(PLAYER_TOKEN_PREFIX):
        raise Problem(403, "this operation needs an API key; a player token cannot be used for it", "forbidden")
    key = session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_token(token)))
    if key is None:
        raise unauthorized("the API key is not valid", "invalid_token")
    if key.revoked_at is not None:
        raise unauthorized(f"the API key {key.name!r} was revoked", "invalid_token")
    if admin and not key.admin:
        raise Problem(403, f"this operation needs an admin API key; {key.name!r} is not one", "forbidden")
    return key
