"""What the pages make of stored records, kept in memory: the windows of a record's frames
(``GET /records/{id}/frames.json?step=N``) gzipped, the record page's rendered viewer and the
share images. A record's log never changes, so each is computed once per engine version.

Each answer carries a strong ``ETag`` (a hash of the JSON, so equal bytes give equal
tags on every process), answers ``304`` to a matching ``If-None-Match``, may be cached
by browsers and proxies for a day, and is sent gzipped to a client that accepts it
(``Vary: Accept-Encoding``). The cache is bounded by the bytes it holds
(``FRAMES_CACHE_BYTES``); the least recently used entries go first.

A record's entry keeps the deal it is of (``code``): whoever serves it checks that deal
against the withheld set (the running and upcoming challenges' deals) each time, before
any answer or ``304``, since a deal can become a challenge after the entry was made.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from flask import Request
from flask.wrappers import Response

import engine

#: a record's frames change only with the engine, whose upgrade changes the ETag: a day, then revalidate
CACHE_CONTROL = "public, max-age=86400"


@dataclass(frozen=True)
class Frames:
    """One record's frames: the gzipped JSON and its strong validator."""

    gzipped: bytes
    etag: str  # without quotes; the gzipped form's tag is this with ``-gzip``
    code: str | None = None  # the record's deal (checked against the withheld set when served)

    def response(self, request: Request) -> Response:
        """The answer to ``request``: 304, gzipped or plain JSON, with the caching headers."""
        gzip_ok = accepts_gzip(request)
        tag = f"{self.etag}-gzip" if gzip_ok else self.etag
        headers = {"ETag": f'"{tag}"', "Cache-Control": CACHE_CONTROL, "Vary": "Accept-Encoding"}
        wanted = request.if_none_match
        # (weak comparison, as RFC 9110 has for If-None-Match; either coding's tag names the same frames)
        if wanted and (wanted.star_tag or wanted.contains_weak(self.etag) or wanted.contains_weak(f"{self.etag}-gzip")):
            return Response(status=304, headers=headers)
        if gzip_ok:
            body, headers["Content-Encoding"] = self.gzipped, "gzip"
        else:
            body = gzip.decompress(self.gzipped)
        return Response(body, mimetype="application/json", headers=headers)

    @property
    def nbytes(self) -> int:
        return len(self.gzipped)


@dataclass(frozen=True)
class Picture:
    """A PNG (a share image) and its strong validator: a hash of its bytes."""

    png: bytes
    etag: str
    code: str | None = None  # a record's deal (checked against the withheld set when served)

    @classmethod
    def of(cls, png: bytes, code: str | None = None) -> Picture:
        return cls(png, hashlib.sha256(png).hexdigest()[:32], code)

    def response(self, request: Request) -> Response:
        headers = {"ETag": f'"{self.etag}"', "Cache-Control": CACHE_CONTROL}
        wanted = request.if_none_match
        if wanted and (wanted.star_tag or wanted.contains_weak(self.etag)):
            return Response(status=304, headers=headers)
        return Response(self.png, mimetype="image/png", headers=headers)

    @property
    def nbytes(self) -> int:
        return len(self.png)


def accepts_gzip(request: Request) -> bool:
    """Whether the client takes gzip: named with a quality above 0, or not named and ``*`` taken."""
    codings = request.accept_encodings
    return codings["gzip"] > 0 or ("gzip" not in codings and codings["*"] > 0)


def pack(data: dict[str, Any], code: str | None = None) -> Frames:
    """The frames ``data`` (of a record of deal ``code``), gzipped, with their tag."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    # mtime=0: the same frames give the same bytes on every process
    return Frames(gzip.compress(raw, compresslevel=6, mtime=0), hashlib.sha256(raw).hexdigest()[:32], code)


def size_of(value: Any) -> int:
    """The bytes an entry holds: a :class:`Frames`' gzipped body, a :class:`Picture`'s PNG, a text's UTF-8."""
    if isinstance(value, (Frames, Picture)):
        return value.nbytes
    return len(value.encode())


class FrameCache:
    """Entries by key (a tuple that starts with the kind: ``("frames", record, first step, lang)``)
    and engine version, at most ``max_bytes`` bytes in all (a least recently used entry goes
    first); safe across threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(key: tuple[Any, ...]) -> tuple[Any, ...]:
        return (*key, engine.__version__, engine.RULES_VERSION)

    def get(self, key: tuple[Any, ...]) -> Any:
        with self._lock:
            found = self._entries.get(self._key(key))
            if found is not None:
                self._entries.move_to_end(self._key(key))
            return found

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        """Keep ``value`` unless it alone is larger than the whole cache."""
        size = size_of(value)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(self._key(key), None)
            self.size -= size_of(old) if old is not None else 0
            self._entries[self._key(key)] = value
            self.size += size
            while self.size > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self.size -= size_of(dropped)

    def __len__(self) -> int:
        return len(self._entries)
