"""Translations: the catalogs are complete and current, placeholders survive
translation, the language is chosen as promised, and the API's rule sentences
follow Accept-Language."""

from __future__ import annotations

import string

import pytest
from babel.messages.pofile import read_po
from flask import Flask

from api.pages.i18n import (
    DEFAULT,
    LANGUAGES,
    accepted_language,
    card_name,
    catalog_path,
    extract,
    gettext,
    page_language,
    rule_message,
    rule_sentence,
    translations,
)
from engine import DECK, Card, IllegalActionError
from engine.messages import MESSAGES
from verifier import replay

TRANSLATED = [lang for lang in LANGUAGES if lang != DEFAULT]


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def catalog(lang: str) -> dict[str, object]:
    with catalog_path(lang).open("rb") as po:
        return {message.id: message for message in read_po(po, locale=lang) if message.id}


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_rule_message_is_translated_with_the_same_placeholders(lang):
    messages = catalog(lang)
    for key, template in MESSAGES.items():
        entry = messages.get(template)
        assert entry is not None, f"{lang}: {key} is not in the catalog"
        assert entry.string.strip(), f"{lang}: {key} has no translation"
        assert not entry.fuzzy, f"{lang}: {key} is fuzzy"
        assert placeholders(entry.string) == placeholders(template), f"{lang}: {key}: {entry.string!r}"
        assert entry.string != template, f"{lang}: {key} is still English"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_page_string_is_translated_with_the_same_placeholders(lang):
    for message_id, entry in catalog(lang).items():
        assert entry.string.strip(), f"{lang}: {message_id!r} has no translation"
        assert not entry.fuzzy, f"{lang}: {message_id!r} is fuzzy"
        assert placeholders(entry.string) == placeholders(message_id), f"{lang}: {message_id!r}: {entry.string!r}"


def test_the_catalogs_hold_exactly_what_the_sources_use():
    """``python -m api.pages.i18n.extract --check``: nothing to add, nothing stale."""
    assert extract.main(["--check"]) == 0
    template = extract.extract()
    ids = set(extract.ids(template))
    assert set(MESSAGES.values()) <= ids
    assert {"Check a log", "column {number}: {cards}", "Yukon"} <= ids  # a template's, a script's, the game names
    for lang in TRANSLATED:
        assert set(catalog(lang)) == ids


def test_the_catalogs_are_read_at_run_time_into_gettext_translations():
    for lang in TRANSLATED:
        table = translations(lang)
        assert table.gettext("Check a log") != "Check a log"
        assert table.gettext("a text nobody translated") == "a text nobody translated"
    assert gettext("en", "Check a log") == "Check a log"
    with pytest.raises(ValueError, match="unknown language 'de'"):
        translations("de")


def test_cards_are_named_in_each_language_as_the_app_names_them():
    for card in DECK:
        assert card_name("en", card) == card.name
    # the app's own accessible description (seed 002): "1번 열: 다이아몬드 에이스, 스페이드 3, 하트 킹"
    assert [card_name("ko", text) for text in ("AD", "3S", "KH", "TC")] == \
        ["다이아몬드 에이스", "스페이드 3", "하트 킹", "클럽 10"]
    # the app's Finnish rules: "Hertta-7 sopii kortin pata-8 … päälle"
    assert [card_name("fi", text) for text in ("7H", "8S", "QD", "AC")] == \
        ["hertta-7", "pata-8", "ruutu-kuningatar", "risti-ässä"]


# -- the rule sentences ------------------------------------------------------------

#: logs that break a rule, and the message key each one meets
ILLEGAL = [
    ("FT1-N-AAAAAAB", "T7>F T1>T2", "tableau.build:suit"),
    ("YU1-C-AAAAAAB", "T9>T1", "pile.no-such-column"),
    ("YU1-C-AAAAAAB", "S", "stock.none"),
    ("YU1-C-AAAAAAB", "U", "undo.nothing-to-undo"),
    ("FT1-N-AAAAAAB", "W>T1", "source.empty:waste"),
    ("FT1-N-AAAAAAB", "F3>T1", "source.empty:foundation"),
    ("YU1-C-AAAAAAB", "T1>T2", "tableau.build"),
]


@pytest.mark.parametrize("code, log, key", ILLEGAL)
@pytest.mark.parametrize("lang", TRANSLATED)
def test_a_verifier_error_is_told_in_the_language_with_its_own_parameters(code, log, key, lang):
    error = replay(code, log).error
    assert error is not None and error.key == key
    template = gettext(lang, MESSAGES[key])
    params = dict(error.params)
    if "game" in params:
        params["game"] = gettext(lang, params["game"])
    sentence = rule_message(error, lang)
    assert sentence == template.format(**params)
    assert sentence != error.message
    for value in error.params.values():
        if value not in ("Yukon", "Forty Thieves"):
            assert value in sentence  # cards, numbers, suits appear as they are
    assert rule_message(error, "en") == error.message


def test_english_fills_the_same_template_as_the_engine():
    for code, log, key in ILLEGAL:
        error = replay(code, log).error
        assert rule_sentence("en", error.key, error.params, "unused") == "unused"  # English: the engine's sentence
        assert MESSAGES[key].format(**error.params) == error.message


def test_syntax_errors_stay_in_english():
    error = replay("YU1-C-AAAAAAB", "X9").error
    assert error.kind == "syntax"
    assert rule_message(error, "ko") == error.message


def test_a_game_name_is_translated_inside_a_sentence():
    error = replay("FT1-N-AAAAAAB", "T11>T1").error
    assert error.params["game"] == "Forty Thieves"
    assert rule_message(error, "ko").startswith("Quarante Voleurs에는 T1부터 T10까지의 열이 있습니다.")


def test_every_rule_template_formats_in_every_language():
    for key, template in MESSAGES.items():
        params = {name: f"<{name}>" for name in placeholders(template)}
        for lang in LANGUAGES:
            text = rule_sentence(lang, key, params, template.format(**params))
            assert all(f"<{name}>" in text for name in params if name != "game"), (lang, key, text)


def test_illegal_action_errors_carry_what_translation_needs():
    with pytest.raises(IllegalActionError) as caught:
        from engine import Game, parse_action
        Game.from_code("YU1-C-AAAAAAB").push(parse_action("T1>T2"))
    assert caught.value.key in MESSAGES and set(caught.value.params) == placeholders(MESSAGES[caught.value.key])


# -- choosing the language ------------------------------------------------------------

@pytest.mark.parametrize("header, expected", [
    ("ko-KR,ko;q=0.9,en;q=0.5", "ko"),
    ("fi-FI", "fi"),
    ("de-DE,de;q=0.9", "en"),
    ("sv, fi;q=0.4, ko;q=0.3", "fi"),
    ("fi-FI, en;q=0.5", "fi"),  # by primary tag, best first: not the exact "en" of lower quality
    ("en-GB, ko", "en"),
    ("fi;q=0, ko;q=0.1", "ko"),  # q=0: not acceptable
    ("ko_KR", "ko"),
    ("", "en"),
    ("*", "en"),
])
def test_accept_language_picks_the_best_language(header, expected):
    app = Flask(__name__)
    with app.test_request_context("/", headers={"Accept-Language": header}):
        assert accepted_language() == expected
        assert page_language() == expected


def test_a_lang_parameter_wins_on_pages_when_it_names_a_language():
    app = Flask(__name__)
    with app.test_request_context("/?lang=fi", headers={"Accept-Language": "ko"}):
        assert page_language() == "fi"
        assert accepted_language() == "ko"  # the API looks at the header only
    with app.test_request_context("/?lang=KO"):
        assert page_language() == "ko"
    with app.test_request_context("/?lang=xx", headers={"Accept-Language": "fi"}):
        assert page_language() == "fi"


def test_no_request_means_english():
    assert accepted_language() == "en"


# -- the API ------------------------------------------------------------------------------

def test_verify_answers_the_rule_sentence_in_the_accepted_language(client):
    body = {"code": "FT1-N-AAAAAAB", "moves": "T7>F T1>T2"}
    english = client.post("/api/v1/verify", json=body).get_json()["error"]["message"]
    korean = client.post("/api/v1/verify", json=body, headers={"Accept-Language": "ko"}).get_json()
    finnish = client.post("/api/v1/verify", json=body, headers={"Accept-Language": "fi-FI, en;q=0.5"}).get_json()
    german = client.post("/api/v1/verify", json=body, headers={"Accept-Language": "de"}).get_json()
    assert english == "A card goes onto a card of the same suit exactly one rank higher: 8S cannot go onto 8S."
    assert korean["error"]["message"] == ("카드는 같은 무늬이면서 숫자가 바로 하나 높은 카드 위에만 놓을 수 있습니다. "
                                          "8S 카드는 8S 카드 위에 놓을 수 없습니다.")
    assert finnish["error"]["message"].startswith("Kortin voi asettaa vain samaa maata olevan")
    assert german["error"]["message"] == english
    assert korean["error"]["rule"] == "tableau.build"  # the rule id and everything else stay as they are
    assert {k: v for k, v in korean.items() if k != "error"} == {k: v for k, v in german.items() if k != "error"}


@pytest.mark.parametrize("header, lang", [(None, "en"), ("ko", "ko"), ("fi-FI, en;q=0.5", "fi"), ("de", "en")])
def test_an_answer_that_follows_accept_language_says_so_to_caches(client, header, lang):
    headers = {"Accept-Language": header} if header else {}
    verify = client.post("/api/v1/verify", json={"code": "FT1-N-AAAAAAB", "moves": "T7>F"}, headers=headers)
    rejected = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAB", "player": "ann", "moves": "T9>T1"},
                           headers=headers)
    for response in (verify, rejected):
        assert response.headers["Content-Language"] == lang
        assert response.headers.getlist("Vary") == ["Accept-Language"]


def test_a_rejected_record_explains_the_rule_in_the_accepted_language(client):
    response = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAB", "player": "ann", "moves": "T9>T1"},
                           headers={"Accept-Language": "fi"})
    assert response.status_code == 422
    problem = response.get_json()
    sentence = "Pelissä Yukon on sarakkeet T1–T7; saraketta T9 ei ole."
    assert problem["verdict"]["error"]["message"] == sentence
    assert problem["detail"] == f"action 0 'T9>T1' is not allowed: pile.no-such-column: {sentence}"


def test_a_syntax_error_from_the_api_stays_in_english(client):
    verdict = client.post("/api/v1/verify", json={"code": "YU1-C-AAAAAAB", "moves": "Q"},
                          headers={"Accept-Language": "ko"}).get_json()
    assert verdict["error"]["kind"] == "syntax"
    assert verdict["error"]["message"].isascii()


def test_every_card_has_a_distinct_name_in_every_language():
    for lang in LANGUAGES:
        names = [card_name(lang, card) for card in DECK]
        assert len(set(names)) == 52, lang
        assert card_name(lang, "TD") == card_name(lang, Card.from_text("10♦"))
