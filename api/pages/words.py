"""The page's language: texts, days, months and moments, the games and the cards, as a page
shows them in the language it chose (:func:`api.pages.i18n.page_language`)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from babel.dates import format_date, format_skeleton, format_time, get_datetime_format
from flask import g

from api.pages.i18n import card_name, gettext
from engine import Card
from engine.cards import SUIT_SYMBOLS
from engine.rules.registry import game_titles


def _(message: str, **params: Any) -> str:
    """``message`` in the page's language (plain text: Jinja escapes it)."""
    return gettext(g.lang, message, **params)


def day_text(day: date) -> str:
    """A day in the page's language: ``Dec 4, 2026``, ``2026. 12. 4.``, ``4.12.2026`` (pages show
    it in ``<time class="nowrap">``: ``macros.day``, so that it stays on one line)."""
    return format_date(day, "medium", locale=g.lang)


def month_text(day: date) -> str:
    """The month of ``day`` in the page's language: ``December 2026``, ``2026년 12월``, ``joulukuu 2026``."""
    return format_skeleton("yMMMM", day, locale=g.lang)


def week_text(day: date) -> str:
    """A week's first day, short, in the page's language: ``12/4``, ``12. 4.``, ``4.12.``."""
    return format_skeleton("Md", day, locale=g.lang)


def moment_text(moment: datetime) -> str:
    """A moment in UTC to the minute, in the page's language: ``Dec 5, 2026, 12:00 AM``,
    ``2026. 12. 5. 오전 12:00``, ``5.12.2026 klo 0.00`` (the page adds "UTC")."""
    moment = moment.astimezone(UTC)
    return str(get_datetime_format("medium", locale=g.lang)).format(
        format_time(moment, "short", tzinfo=UTC, locale=g.lang), format_date(moment, "medium", locale=g.lang))


def games_in_words() -> str:
    """The registry's games in the page's language, in a sentence: ``Yukon and Forty Thieves``."""
    names = [_(title) for title in game_titles()]
    return _("{games} and {last}", games=", ".join(names[:-1]), last=names[-1]) if len(names) > 1 else names[0]


def card_face(text: str) -> dict[str, str]:
    """How a card is drawn: rank (``10``), suit symbol, colour and name (its ``title``)."""
    card = Card.from_text(text)
    return {"rank": card.symbol[:-1], "symbol": SUIT_SYMBOLS[card.suit], "colour": "red" if card.red else "black",
            "name": card_name(g.lang, card)}


def card_short(text: str) -> str:
    """A card as players write it: ``10♦``."""
    return Card.from_text(text).symbol
