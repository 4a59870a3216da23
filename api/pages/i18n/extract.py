"""Gather every translatable text into ``messages.pot`` and merge it into the catalogs.

The texts are the pages' strings, found by Babel's extractors as ``babel.cfg``
maps them (``_()`` and ``N_()`` calls in Python, ``_()`` in the Jinja
templates), the rule sentences of :data:`engine.messages.MESSAGES`, whose
English templates are the message ids, and the game registry's titles. New ids enter ``ko`` and ``fi`` empty
(English is shown until someone translates them); ids that are gone leave.

    python -m api.pages.i18n.extract           # write messages.pot and update the catalogs
    python -m api.pages.i18n.extract --check   # exit 1, naming what differs, if anything is out of date
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

import engine
from api.pages.i18n import DEFAULT, DOMAIN, HERE, LANGUAGE_NAMES, LANGUAGES, catalog_path
from engine.messages import MESSAGES
from engine.rules.registry import titles

ROOT = HERE.parents[2]
TEMPLATE = HERE / f"{DOMAIN}.pot"
MESSAGES_FILE = "engine/messages.py"
REGISTRY_FILE = "engine/rules/registry.py"
#: a fixed date (and no line numbers in the files), so that only a changed text changes a catalog
STAMP = datetime(2025, 1, 1, tzinfo=UTC)
WIDTH = 100
HEADER = ("# {language} messages of the solitaire-verifier pages and rule sentences.\n"
          "# Regenerate with `python -m api.pages.i18n.extract`; message ids are the English texts.\n#")
FIELDS: dict[str, Any] = {
    "project": "solitaire-verifier", "version": engine.__version__, "domain": DOMAIN, "charset": "utf-8",
    "fuzzy": False, "creation_date": STAMP, "revision_date": STAMP, "msgid_bugs_address": "",
    "last_translator": "solitaire-verifier maintainers"}


def extract() -> Catalog:
    """The template catalog: every message id, with where it is used."""
    catalog = Catalog(header_comment=HEADER.format(language="The"), **FIELDS)
    with (HERE / "babel.cfg").open(encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config)
    for filename, lineno, message, comments, _context in extract_from_dir(ROOT, method_map, options_map):
        if isinstance(message, tuple):  # plural forms: none are used yet
            raise SystemExit(f"{filename}:{lineno}: plural messages are not supported")
        _add(catalog, message, filename, lineno, comments)
    for key, text in MESSAGES.items():
        _add(catalog, text, MESSAGES_FILE, 0, [f"rule message {key}"])
    for title in titles():
        _add(catalog, title, REGISTRY_FILE, 0, ["a title from the game registry"])
    return catalog


def _add(catalog: Catalog, message: str, filename: str, lineno: int, comments: list[str]) -> None:
    existing = catalog.get(message)
    if existing is None:
        catalog.add(message, locations=[(filename, lineno)], auto_comments=list(comments))
    else:
        existing.locations.append((filename, lineno))
        existing.auto_comments.extend(c for c in comments if c not in existing.auto_comments)


def ids(catalog: Catalog) -> list[str]:
    return [message.id for message in catalog if message.id and isinstance(message.id, str)]


def read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=locale, domain=DOMAIN)


def render(catalog: Catalog) -> bytes:
    out = BytesIO()
    write_po(out, catalog, width=WIDTH, ignore_obsolete=True, include_previous=False, include_lineno=False)
    return out.getvalue()


def merged(template: Catalog, lang: str) -> Catalog:
    """The catalog of ``lang`` updated to ``template``: new ids empty, gone ids dropped."""
    path = catalog_path(lang)
    if path.exists():
        catalog = read(path, lang)
    else:
        catalog = Catalog(locale=lang, header_comment=HEADER.format(language=LANGUAGE_NAMES[lang]),
                          language_team=LANGUAGE_NAMES[lang], **FIELDS)
    catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
    catalog.revision_date = STAMP
    catalog.fuzzy = False
    return catalog


def outputs() -> dict[Path, bytes]:
    """What each file should hold."""
    template = extract()
    files = {TEMPLATE: render(template)}
    for lang in LANGUAGES:
        if lang != DEFAULT:
            files[catalog_path(lang)] = render(merged(template, lang))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m api.pages.i18n.extract", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, content in outputs().items():
        if path.exists() and path.read_bytes() == content:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    for path in stale:
        print(f"{'out of date' if args.check else 'written'}: {path.relative_to(ROOT)}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
