"""The frames of stored records (``GET /records/{id}/frames.json``), kept gzipped in
memory: a record never changes, so its frames are computed once per engine version.

Each answer carries a strong ``ETag`` (a hash of the JSON, so equal bytes give equal
tags on every process), answers ``304`` to a matching ``If-None-Match``, may be cached
by browsers and proxies for a day, and is sent gzipped to a client that accepts it
(``Vary: Accept-Encoding``). The cache is bounded by the gzipped bytes it holds
(``FRAMES_CACHE_BYTES``); the least recently used records go first.
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


def accepts_gzip(request: Request) -> bool:
    """Whether the client takes gzip: named with a quality above 0, or not named and ``*`` taken."""
    codings = request.accept_encodings
    return codings["gzip"] > 0 or ("gzip" not in codings and codings["*"] > 0)


def pack(data: dict[str, Any]) -> Frames:
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    # mtime=0: the same frames give the same bytes on every process
    return Frames(gzip.compress(raw, compresslevel=6, mtime=0), hashlib.sha256(raw).hexdigest()[:32])


class FrameCache:
    """Records' :class:`Frames` by record id and engine version, at most ``max_bytes`` gzipped
    bytes in all (a least recently used entry goes first); safe across threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[tuple[int, str, int], Frames] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(record_id: int) -> tuple[int, str, int]:
        return record_id, engine.__version__, engine.RULES_VERSION

    def get(self, record_id: int) -> Frames | None:
        with self._lock:
            found = self._entries.get(self._key(record_id))
            if found is not None:
                self._entries.move_to_end(self._key(record_id))
            return found

    def put(self, record_id: int, frames: Frames) -> None:
        """Keep ``frames`` unless they alone are larger than the whole cache."""
        if len(frames.gzipped) > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(self._key(record_id), None)
            self.size -= len(old.gzipped) if old else 0
            self._entries[self._key(record_id)] = frames
            self.size += len(frames.gzipped)
            while self.size > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self.size -= len(dropped.gzipped)

    def __len__(self) -> int:
        return len(self._entries)
