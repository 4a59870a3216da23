"""The pages' static files under content-hashed names, for long browser caching.

Every file of ``api/pages/static`` is also served as ``name.<hash>.ext`` (``css/pages.css`` →
``css/pages.1f2e3d4c5b.css``), the hash taken from its content, with a year-long
``immutable`` cache lifetime: a changed file gets a new name. Scripts import each
other by relative paths (``./common.js``); in the hashed copy those paths name the
hashed files too, so a script's hash covers what it imports. ``url_for("pages.static",
filename=…)`` gives the hashed name (see ``pages._hashed_static``); the plain name
still works, with revalidation on each use.

Files are read once per process (in debug mode, again when one changes), and a
gzip copy of the hashed text files is kept for clients that accept it.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
#: ``import … from "./x.js"`` and ``import "./x.js"``: relative module imports
IMPORT = re.compile(r"""(\bfrom\s*|\bimport\s*)(["'])(\./[\w./-]+\.js)\2""")
TEXT_TYPES = ("text/", "application/javascript", "image/svg+xml", "application/json")


@dataclass(frozen=True)
class Asset:
    path: str                 # the plain name, such as "js/record.js"
    hashed: str               # the hashed name, such as "js/record.0a1b2c3d4e.js"
    body: bytes               # under the hashed name (its imports name hashed files)
    source: bytes             # under the plain name: the file as it is
    gzipped: bytes | None
    mimetype: str
    etag: str
    imports: tuple[str, ...] = field(default=())  # plain names of the modules it imports, directly


@dataclass(frozen=True)
class Manifest:
    assets: dict[str, Asset]          # by plain name
    by_hashed: dict[str, Asset]       # by hashed name
    stamp: tuple[tuple[str, float], ...]

    def find(self, name: str) -> tuple[Asset, bool] | None:
        """The asset a URL names, and whether the name was the hashed one."""
        if name in self.by_hashed:
            return self.by_hashed[name], True
        if name in self.assets:
            return self.assets[name], False
        return None

    def modules(self, entry: str) -> list[str]:
        """``entry`` and every module it imports, directly or not (plain names, entry last)."""
        seen: list[str] = []

        def walk(name: str) -> None:
            for dep in self.assets[name].imports:
                if dep not in seen:
                    walk(dep)
            if name not in seen:
                seen.append(name)

        walk(entry)
        return seen


def _stamp() -> tuple[tuple[str, float], ...]:
    return tuple(sorted((str(p.relative_to(STATIC)), p.stat().st_mtime) for p in STATIC.rglob("*") if p.is_file()))


def _hashed_name(path: str, body: bytes) -> str:
    digest = hashlib.sha256(body).hexdigest()[:10]
    stem, dot, ext = path.rpartition(".")
    return f"{stem}.{digest}.{ext}" if dot else f"{path}.{digest}"


def build() -> Manifest:
    sources = {str(p.relative_to(STATIC)).replace("\\", "/"): p.read_bytes()
               for p in sorted(STATIC.rglob("*")) if p.is_file()}
    imports: dict[str, tuple[str, ...]] = {}
    for name, body in sources.items():
        if name.endswith(".js"):
            folder = name.rpartition("/")[0]
            deps = [_join(folder, match.group(3)) for match in IMPORT.finditer(body.decode("utf-8"))]
            imports[name] = tuple(dict.fromkeys(dep for dep in deps if dep in sources))
    assets: dict[str, Asset] = {}

    def make(name: str) -> Asset:
        if name in assets:
            return assets[name]
        body = sources[name]
        deps = imports.get(name, ())
        if deps:
            folder = name.rpartition("/")[0]
            hashed_deps = {dep: make(dep).hashed for dep in deps}

            def rename(match: re.Match[str]) -> str:
                dep = _join(folder, match.group(3))
                if dep not in hashed_deps:
                    return match.group(0)
                relative = "./" + hashed_deps[dep].rpartition("/")[2]
                return f"{match.group(1)}{match.group(2)}{relative}{match.group(2)}"

            body = IMPORT.sub(rename, body.decode("utf-8")).encode("utf-8")
        mimetype = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if name.endswith(".js"):
            mimetype = "text/javascript"
        gzipped = gzip.compress(body, 9, mtime=0) if mimetype.startswith(TEXT_TYPES) else None
        hashed = _hashed_name(name, body)
        asset = Asset(name, hashed, body, sources[name], gzipped, mimetype, hashed.rsplit(".", 2)[-2], deps)
        assets[name] = asset
        return asset

    for name in sources:
        make(name)
    return Manifest(assets, {asset.hashed: asset for asset in assets.values()}, _stamp())


def _join(folder: str, relative: str) -> str:
    parts = [p for p in folder.split("/") if p]
    for part in relative.split("/"):
        if part == "..":
            parts = parts[:-1]
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


_manifest: Manifest | None = None


def manifest(reload: bool = False) -> Manifest:
    """The files, read once (``reload``: again if one changed, for the debug server)."""
    global _manifest
    if _manifest is None or (reload and _manifest.stamp != _stamp()):
        _manifest = build()
    return _manifest
