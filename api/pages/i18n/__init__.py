"""Translations: English, Korean and Finnish, from Babel message catalogs.

The catalogs are the ``.po`` files beside this module (``ko/LC_MESSAGES/messages.po``,
``fi/…``), read when first needed with Babel's ``read_po`` and turned into a
gettext translations object in memory: there is no compile step. The message
ids are the English texts themselves: the rule sentences of
:data:`engine.messages.MESSAGES` and the pages' strings (``python -m
api.pages.i18n.extract`` gathers them into ``messages.pot`` and the catalogs).
A missing or empty translation falls back to English.

>>> gettext("fi", "Foundation {number} is empty: there is no card to take back.", number=3)
'Kotipino 3 on tyhjä: siitä ei ole korttia otettavaksi takaisin.'
>>> card_name("ko", "AD"), card_name("fi", "7H"), card_name("en", "TS")
('다이아몬드 에이스', 'hertta-7', 'ten of spades')
"""

from __future__ import annotations

import gettext as _gettext
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from flask import after_this_request, has_request_context, request

from api.platform.marks import N_
from engine import DECK, Card
from engine.messages import MESSAGES
from engine.rules import RULE_SETS
from engine.rules.registry import titles
from verifier import Verdict
from verifier.verdict import ActionError

#: the languages, English first (the fallback and the language of the message ids)
LANGUAGES: tuple[str, ...] = ("en", "ko", "fi")
DEFAULT = "en"
#: each language in its own words, for the language switch
LANGUAGE_NAMES = {"en": "English", "ko": "한국어", "fi": "Suomi"}
HERE = Path(__file__).resolve().parent
DOMAIN = "messages"


#: the registry's titles of games and rule sets (``api.pages.i18n.extract`` puts them in the catalogs)
REGISTRY_TITLES = titles()
#: game names, as the engine's ``Rules.name`` gives them in the ``{game}`` parameter
GAME_NAMES = tuple(dict.fromkeys(rule_set.game.title for rule_set in RULE_SETS))
#: the words of a card's name (the same words as :attr:`engine.Card.name` in English)
RANK_WORDS = (N_("ace"), N_("two"), N_("three"), N_("four"), N_("five"), N_("six"), N_("seven"), N_("eight"),
              N_("nine"), N_("ten"), N_("jack"), N_("queen"), N_("king"))
SUIT_WORDS = (N_("spades"), N_("hearts"), N_("diamonds"), N_("clubs"))
CARD_NAME = N_("{rank} of {suit}")


def catalog_path(lang: str) -> Path:
    return HERE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> _gettext.NullTranslations:
    """The translations of ``lang`` (English: none, every text is its own message id)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGUAGES)}")
    if lang == DEFAULT:
        return _gettext.NullTranslations()
    with catalog_path(lang).open("rb") as po:
        catalog = read_po(po, locale=lang, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog)  # in memory; fuzzy and empty entries are left out, so they fall back to English
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def gettext(lang: str, message: str, **params: Any) -> str:
    """``message`` in ``lang``, its ``{named}`` parameters filled in (only when some are given)."""
    text = translations(lang).gettext(message)
    return text.format(**params) if params else text


# -- which language --------------------------------------------------------

def accepted_language() -> str:
    """The best of :data:`LANGUAGES` for the request's ``Accept-Language``; English without one.

    Werkzeug parses the header; the ranges are then taken best first and each matched by
    its primary tag, so that ``fi-FI, en;q=0.5`` means Finnish (werkzeug's own
    ``best_match`` would take the exact ``en`` before falling back to ``fi-FI`` → ``fi``)."""
    if not has_request_context() or "Accept-Language" not in request.headers:
        return DEFAULT
    accepted = request.accept_languages
    for value, quality in accepted:  # best first; equal qualities in the order sent
        if quality <= 0:
            continue
        primary = value.replace("_", "-").split("-")[0].lower()
        if primary in LANGUAGES:
            return primary
        if value == "*":
            break
    return DEFAULT


def page_language() -> str:
    """A page's language: the ``lang`` query parameter when it names one of :data:`LANGUAGES`,
    else :func:`accepted_language`."""
    chosen = request.args.get("lang", "").strip().lower()
    return chosen if chosen in LANGUAGES else accepted_language()


# -- rule messages -----------------------------------------------------------

def rule_sentence(lang: str, key: str, params: dict[str, str], english: str) -> str:
    """The sentence of rule message ``key`` in ``lang``, filled with the same ``params`` (a
    ``{game}`` name translated too); ``english`` when the key has no template or ``lang`` is English."""
    template = MESSAGES.get(key)
    if template is None or lang == DEFAULT:
        return english
    params = dict(params)
    if "game" in params:
        params["game"] = gettext(lang, params["game"])
    return gettext(lang, template, **params)


def rule_message(error: ActionError, lang: str) -> str:
    """The sentence of a verifier error in ``lang``; syntax errors stay in English."""
    if error.kind != "rule":
        return error.message
    return rule_sentence(lang, error.key, error.params, error.message)


def localized_verdict(verdict: Verdict, lang: str | None = None) -> dict[str, Any]:
    """``verdict.to_json()`` with the error's sentence in ``lang`` (default: the request's
    ``Accept-Language``)."""
    body = verdict.to_json()
    if lang is None and has_request_context():
        lang = accepted_language()
        after_this_request(_language_headers(lang))  # the answer depends on Accept-Language: say so to caches
    if verdict.error is not None:
        body["error"]["message"] = rule_message(verdict.error, lang or "en")
    return body


def language_headers(lang: str) -> dict[str, str]:
    """The headers of an answer in ``lang`` chosen by ``Accept-Language``, for a view to return
    with it (cheaper than :func:`localized_verdict`'s callback after the request)."""
    return {"Content-Language": lang, "Vary": "Accept-Language"}


def _language_headers(lang: str) -> Any:
    def add(response: Any) -> Any:
        response.vary.add("Accept-Language")
        response.headers["Content-Language"] = lang
        return response

    return add


# -- cards and piles, for text alternatives -------------------------------------

def card_name(lang: str, card: Card | str) -> str:
    """A card in words: ``ace of diamonds``, ``다이아몬드 에이스``, ``ruutu-ässä``."""
    if not isinstance(card, Card):
        card = Card.from_text(card)
    return gettext(lang, CARD_NAME, rank=gettext(lang, RANK_WORDS[card.rank - 1]),
                   suit=gettext(lang, SUIT_WORDS[card.suit]))


@cache
def card_names(lang: str) -> dict[str, str]:
    """Every card's text (``TD``) → its name in ``lang``."""
    return {str(card): card_name(lang, card) for card in DECK}
