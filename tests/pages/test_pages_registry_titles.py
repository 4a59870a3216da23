"""The pages' game and rule set names come from the engine's registry: each one is a
msgid the extractor finds (``api.pages.i18n.REGISTRY_TITLES``) with a Korean and a Finnish entry."""

from __future__ import annotations

from babel.messages.pofile import read_po

from api.pages.i18n import GAME_NAMES, LANGUAGES, REGISTRY_TITLES, catalog_path
from api.pages.views import VARIANTS
from engine.rules import RULE_SETS


def registry_titles() -> set[str]:
    return {rule_set.title for rule_set in RULE_SETS} | {rule_set.game.title for rule_set in RULE_SETS}


def test_pages_and_game_names_follow_the_registry():
    assert tuple((rule_set.variant, rule_set.title) for rule_set in RULE_SETS) == VARIANTS
    assert set(GAME_NAMES) == {rule_set.game.title for rule_set in RULE_SETS}
    assert set(REGISTRY_TITLES) == registry_titles()


def test_every_registry_title_is_translated():
    for lang in LANGUAGES:
        if lang == "en":
            continue
        with catalog_path(lang).open("rb") as po:
            entries = {message.id: message.string for message in read_po(po, locale=lang) if message.id}
        missing = sorted(title for title in registry_titles() if not entries.get(title))
        assert missing == [], f"{lang}: no translation of {missing}"


def test_a_bad_code_is_explained_with_the_registry_s_letters_and_titles(client):
    """The pages' explanations of a bad code list the registry's games, versions and rule letters."""
    cases = {
        "XX1-C-AAAAAAB": "Pelikoodi alkaa jollakin näistä: YU (Yukon), FT (Neljäkymmentä rosvoa).",
        "YU2-C-AAAAAAB": "Pelikoodeista on olemassa vain versio 1: YU1, FT1.",
        "YU1-N-AAAAAAB": "riippuu pelistä: Yukon: C, R; Neljäkymmentä rosvoa: N.",
    }
    for code, words in cases.items():
        page = client.get("/deals", query_string={"code": code, "lang": "fi"})
        assert page.status_code == 422 and words in page.get_data(as_text=True), code
