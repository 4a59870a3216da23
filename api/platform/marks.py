"""Texts marked for translation where they are declared, translated where they are shown
(:mod:`api.pages.i18n`): a module of its own so that services mark texts without the pages."""

from __future__ import annotations


def N_(message: str) -> str:
    """Mark ``message`` for extraction without translating it (Babel's default keyword)."""
    return message
