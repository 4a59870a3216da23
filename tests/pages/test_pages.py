"""The players' pages, server side: what each page holds, the boards' text
alternatives, escaping of what clients submitted, languages, and the frames the
replay viewer steps through."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from html_tree import parse

from api.pages.board import SCRIPT_TEXTS
from engine import Card, Game, parse_action
from tests.play import play_greedy
from verifier import deal_json, replay

STATIC = Path(__file__).resolve().parents[2] / "api" / "pages" / "static"
TEMPLATES = Path(__file__).resolve().parents[2] / "api" / "pages" / "templates"
MARKUP_NAME = '<img src=x onerror="alert(1)">&'  # players' names have at most 32 characters


def page(client, url, status=200, **kwargs):
    response = client.get(url, **kwargs)
    assert response.status_code == status, (url, response.status_code, response.get_data(as_text=True)[:500])
    assert response.mimetype == "text/html"
    return parse(response.get_data(as_text=True)), response


def script_data(document):
    return json.loads(document.find("script", id="page-data").text)


def expected_column_labels(code: str) -> list[str]:
    """``column 1: ace of diamonds, …`` from the engine's own deal, face-down cards as such."""
    position = Game.from_code(code).position
    labels = []
    for number, (column, down) in enumerate(zip(position.columns, position.down), 1):
        names = ["face-down card"] * down + [card.name for card in column[down:]]
        labels.append(f"column {number}: {', '.join(names)}")
    return labels


# -- the home page --------------------------------------------------------------------

def test_the_home_page_has_the_code_form_and_three_standings(client):
    document, response = page(client, "/")
    assert document.find("html").attrs["lang"] == "en"
    form = document.find("form", role="search")
    assert form.attrs["action"] == "/deals" and form.attrs["method"] == "get"
    field = form.find("input", name="code")
    assert document.find("label", for_=field.attrs["id"]).text == "Game code"
    assert [section.attrs["data-variant"] for section in document.find_all("section", data_standings=True)] == \
        ["yukon-classic", "yukon-relaxed", "forty-thieves"]
    assert not document.find_all("section", data_leaderboard=True)  # no raw-score board across deals
    assert [h.text for h in document.find_all("h2")] == ["Today", "Open a deal", "Challenge standings"]
    games = ["Yukon, classic rules", "Yukon, relaxed rules", "Forty Thieves"]
    assert [h.text for h in document.find_all("h3")] == games + games  # the Today strip's, the standings'
    # no challenge prepared here: the strip says so, and asks nobody to prepare one (it only reads)
    assert [li.text.strip() for li in document.find("section", data_today=True).find_all("li", data_today_kind=True)][:2] \
        == ["Daily challenge · being prepared", "Weekly challenge · being prepared"]
    assert re.fullmatch(r"/static/js/page\.[0-9a-f]{10}\.js", document.find("script", type="module").attrs["src"])
    assert response.headers["Content-Language"] == "en"
    assert "Accept-Language" in response.headers["Vary"]
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_the_code_form_goes_to_the_canonical_deal(client):
    response = client.get("/deals?code=%20yu1-c-aaaaaab%20")
    assert response.status_code == 302 and response.headers["Location"] == "/deals/YU1-C-AAAAAAB"
    response = client.get("/deals?code=ft1-n-aaaaaab&lang=fi")
    assert response.headers["Location"] == "/deals/FT1-N-AAAAAAB?lang=fi"


@pytest.mark.parametrize("entered, reason", [
    ("", "Enter a game code such as YU1-C-AAAAAAB."),
    ("YU1-X-AAAAAAB", "YU1-X-AAAAAAB is not a game code: rule letter X is not valid for YU"),
    ("<b>bold</b>", "<b>bold</b> is not a game code:"),
])
def test_a_code_that_is_not_one_is_explained_on_the_home_page(client, entered, reason):
    document, _ = page(client, "/deals", 422, query_string={"code": entered})
    error = document.find("p", id="code-error")
    assert error.attrs["role"] == "alert"
    assert error.text.startswith(reason)
    assert document.find("input", name="code").attrs["aria-invalid"] == "true"
    assert document.find("input", name="code").attrs["value"] == entered.strip()
    assert not document.find_all("b")  # the markup entered is text


# -- the deal page ------------------------------------------------------------------------

def test_a_yukon_deal_is_drawn_with_face_down_cards_as_backs(client):
    document, _ = page(client, "/deals/YU1-C-AAAAAAB")
    assert document.find("h1").text == "Deal YU1-C-AAAAAAB"
    board = document.find("div", data_board=True)
    columns = board.find_all("div", class_="column")
    assert [column.attrs["aria-label"] for column in columns] == expected_column_labels("YU1-C-AAAAAAB")
    assert all(column.attrs["role"] == "img" for column in columns)
    deal = deal_json("YU1-C-AAAAAAB")
    for column, dealt in zip(columns, deal["tableau"]):
        cards = column.find("div", class_="cards").find_all("span", class_="card")
        assert len(cards) == len(dealt)
        for card, entry in zip(cards, dealt):
            if entry["face_up"]:
                assert card.attrs["data-card"] == entry["card"]
                assert card.attrs["title"] == Card.from_text(entry["card"]).name
                assert "red" in card.attrs["class"].split() or "black" in card.attrs["class"].split()
            else:
                assert card.attrs["class"] == "card back" and "data-card" not in card.attrs
    foundations = board.find_all("div", class_="foundation")
    assert [f.attrs["aria-label"] for f in foundations] == [f"foundation {n}: empty" for n in range(1, 5)]
    assert not board.find_all("div", class_="stock")
    assert columns[0].attrs["aria-label"] == "column 1: seven of hearts"
    leaderboard = document.find("section", data_leaderboard=True)
    assert leaderboard.attrs["data-code"] == "YU1-C-AAAAAAB"
    assert leaderboard.attrs["data-variant"] == "yukon-classic"
    assert document.find("a", href="/check?code=YU1-C-AAAAAAB").text == "Check a log of this deal"


def test_a_forty_thieves_deal_shows_stock_waste_and_eight_foundations(client):
    document, _ = page(client, "/deals/FT1-N-AAAAAAB")
    board = document.find("div", data_board=True)
    assert board.find("div", class_="stock").attrs["aria-label"] == "stock, cards left: 64"
    assert board.find("div", class_="waste").attrs["aria-label"] == "waste: empty"
    assert len(board.find_all("div", class_="foundation")) == 8
    assert [c.attrs["aria-label"] for c in board.find_all("div", class_="column")] == \
        expected_column_labels("FT1-N-AAAAAAB")
    placeholders = [slot.text for slot in board.find_all("span", class_="placeholder")]
    assert placeholders == list("♠♥♦♣♠♥♦♣")


def test_a_deal_code_in_another_spelling_redirects_to_the_canonical_page(client):
    response = client.get("/deals/yu1-r-aaaaab7?lang=ko")
    assert response.status_code == 308
    assert response.headers["Location"] == "/deals/YU1-R-AAAAAB7?lang=ko"


def test_a_code_that_names_no_deal_is_a_404_page(client):
    document, _ = page(client, "/deals/YU9-C-AAAAAAB", 404)
    assert document.find("h1").text == "No such deal"
    assert "YU9-C-AAAAAAB is not a game code: unsupported version" in document.find("p", class_="form-error").text


# -- the record page ----------------------------------------------------------------------

def test_the_record_page_shows_the_record_its_finished_game_and_its_log(client, submit):
    log = play_greedy("YU1-C-AAAAAAB", 25)
    record = submit("ann", "YU1-C-AAAAAAB", " ".join(log))
    document, _ = page(client, f"/records/{record['id']}")
    assert document.find("h1").text == "ann · YU1-C-AAAAAAB"
    assert document.find("title").text.startswith(f"ann on YU1-C-AAAAAAB · record {record['id']}")
    assert document.find("a", href="/deals/YU1-C-AAAAAAB").text == "Deal YU1-C-AAAAAAB"
    facts = {div.find("dt").text: div.find("dd").text for div in document.find("dl", class_="summary").find_all("div")}
    assert facts["Score"] == str(record["score"]) and facts["Moves"] == str(record["moves"])
    assert facts["Result"] == ("won" if record["won"] else "not won")
    viewer = document.find("section", data_viewer=True)
    items = viewer.find("ol", data_log=True).find_all("a")
    assert [a.attrs["data-action"] for a in items] == record["canonical"].split()
    assert [a.attrs["data-step"] for a in items] == [str(n) for n in range(1, len(log) + 1)]
    assert [a.attrs["href"] for a in items[:2]] == [f"/records/{record['id']}?step={n}" for n in (1, 2)]
    # it opens at the finished game: the last action is current, and the address leaves that step out
    assert [a.attrs["data-step"] for a in viewer.find_all("a", aria_current=True)] == [str(len(log))]
    assert viewer.attrs["data-step"] == viewer.attrs["data-default-step"] == str(len(log))
    controls = viewer.find("div", role="group")
    assert [b.attrs.get("data-go") for b in controls.find_all("button")] == ["first", "back", None, "forward", "last"]
    assert [b.attrs["aria-keyshortcuts"] for b in controls.find_all("button")] == ["Home", "ArrowLeft", "Space",
                                                                                   "ArrowRight", "End"]
    assert all("disabled" in b.attrs for b in controls.find_all("button"))  # until the script has the frames
    status = viewer.find("p", data_status=True)
    assert status.attrs["role"] == "status" and status.attrs["aria-live"] == "polite"
    holder = document.find("div", data_record=str(record["id"]))
    assert holder.attrs["data-frames"] == f"/records/{record['id']}/frames.json"
    # ?step=0 opens the deal: no action current, the deal's piles
    viewer = page(client, f"/records/{record['id']}?step=0")[0].find("section", data_viewer=True)
    assert viewer.attrs["data-step"] == "0" and not viewer.find_all("a", aria_current=True)
    columns = viewer.find_all("div", class_="column")
    assert [c.attrs["aria-label"] for c in columns] == expected_column_labels("YU1-C-AAAAAAB")


def test_a_player_name_with_markup_is_shown_as_text(client, submit):
    record = submit(MARKUP_NAME, "FT1-N-AAAAAAB", "T7>F T10>T9")
    response = client.get(f"/records/{record['id']}")
    html = response.get_data(as_text=True)
    document = parse(html)
    assert MARKUP_NAME not in html
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;" in html
    assert document.find("span", class_="player").text == MARKUP_NAME  # the same characters, as text
    assert document.find("dd", class_="player").text == MARKUP_NAME
    assert not document.find_all("img")
    assert [re.sub(r"\.[0-9a-f]{10}\.js$", ".js", s.attrs.get("id") or s.attrs.get("src"))
            for s in document.find_all("script")] == ["page-data", "/static/js/page.js", "/static/js/record.js",
                                                       "/static/js/share.js"]


def test_the_page_data_cannot_end_its_script_element(client, submit):
    """The JSON handed to the scripts is inside <script>: a name cannot close it."""
    record = submit("</script><b>x</b>", "FT1-N-AAAAAAB", "T7>F")
    html = client.get(f"/records/{record['id']}", query_string={"lang": "fi"}).get_data(as_text=True)
    data_block = html.split('<script type="application/json" id="page-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data_block)["lang"] == "fi"


def test_a_missing_record_is_a_404_page(client):
    document, _ = page(client, "/records/4242", 404)
    assert document.find("h1").text == "No such record"
    page(client, f"/records/{2 ** 70}", 404)
    assert client.get("/records/0/frames.json").status_code == 404


def test_a_hidden_record_can_still_be_opened_by_id_and_says_so(app, client, submit):
    record = submit("ann", "FT1-N-AAAAAAB", "T7>F")
    from api.platform.models import Record

    with app.extensions["api.platform.db"].sessions() as session:
        stored = session.get(Record, record["id"])
        if not hasattr(stored, "status"):
            pytest.skip("records have no status yet")
        stored.status = "hidden"
        session.commit()
    document, _ = page(client, f"/records/{record['id']}")
    assert document.find("p", class_="notice").text == "This record is hidden: it is not on the leaderboards."


# -- frames ------------------------------------------------------------------------------

def test_the_frames_of_a_record_are_the_engines_positions_after_each_action(client, submit):
    log = play_greedy("FT1-N-AAAAAAB", 40)
    record = submit("ann", "FT1-N-AAAAAAB", " ".join(log))
    response = client.get(f"/records/{record['id']}/frames.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    data = response.get_json()
    assert data["code"] == "FT1-N-AAAAAAB" and data["error"] is None
    frames = data["frames"]
    assert len(frames) == len(log) + 1
    assert [f["action"] for f in frames] == [None, *record["canonical"].split()]
    game = Game.from_code("FT1-N-AAAAAAB")
    for index, frame in enumerate(frames):
        if index:
            game.push(parse_action(log[index - 1]))
        position = game.position
        assert (frame["score"], frame["moves"], frame["takebacks"]) == \
            (position.score, position.moves, position.takebacks)
        board = frame["board"]
        assert [c["up"] for c in board["columns"]] == [[str(card) for card in column[down:]]
                                                       for column, down in zip(position.columns, position.down)]
        assert board["stock"] == len(position.stock)
        assert board["waste"] == {"top": str(position.waste[-1]) if position.waste else None,
                                  "count": len(position.waste)}
        assert [f["count"] for f in board["foundations"]] == [len(f) for f in position.foundations]
    assert frames[-1]["score"] == record["score"] and frames[-1]["moves"] == record["moves"]
    assert any(frame["score"] > 0 for frame in frames)


def test_frames_of_a_posted_log_stop_at_the_first_illegal_action(client):
    response = client.post("/frames.json", json={"code": "ft1-n-aaaaaab", "moves": "T7>F T10>T9 T1>T2 S"},
                           headers={"Accept-Language": "fi"})
    assert response.status_code == 200
    data = response.get_json()
    assert data["code"] == "FT1-N-AAAAAAB"
    assert [f["action"] for f in data["frames"]] == [None, "T7:AS>F1", "T10:6H>T9"]
    verdict = replay("FT1-N-AAAAAAB", "T7>F T10>T9 T1>T2 S")
    assert data["error"]["index"] == verdict.error.index == 2
    assert data["error"]["rule"] == verdict.error.rule
    assert data["error"]["message"].startswith("Kortin voi asettaa")
    syntax = client.post("/frames.json", json={"code": "FT1-N-AAAAAAB", "moves": ["T7>F", {"from": "X"}]}).get_json()
    assert syntax["error"]["kind"] == "syntax" and syntax["error"]["index"] == 1 and len(syntax["frames"]) == 2


@pytest.mark.parametrize("body, status, detail", [
    ({"code": "YU1-C", "moves": ""}, 422, "code: "),
    ({"code": "YU1-C-AAAAAAB"}, 422, "body: expected"),
    ({"code": 7, "moves": "T1>F"}, 422, "body: expected"),
    ([], 422, "body: expected"),
    # (a posted log: FRAMES_MAX_ACTIONS, 5000 by default: MAX_LOG_ACTIONS)
    ({"code": "YU1-C-AAAAAAB", "moves": "S " * 5001}, 422, "shows at most 5000"),
    ({"code": "YU1-C-AAAAAAB", "moves": "S", "step": -1}, 422, "step: "),
    ({"code": "YU1-C-AAAAAAB", "moves": "S", "step": "2"}, 422, "step: "),
])
def test_frames_refuse_what_is_not_a_code_and_a_log(client, body, status, detail):
    response = client.post("/frames.json", json=body)
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["detail"].startswith(detail) or detail in response.get_json()["detail"]


def test_frames_need_a_json_body(client):
    assert client.post("/frames.json", data="code=x", content_type="application/x-www-form-urlencoded")\
        .status_code == 415
    assert client.post("/frames.json", data="{", content_type="application/json").status_code == 400


# -- the checker ---------------------------------------------------------------------------

def test_the_checker_form_is_labelled_and_prefilled_as_text(client):
    document, _ = page(client, "/check", query_string={"code": "YU1-C-AAAAAAB", "moves": "</textarea><b>x</b>"})
    form = document.find("form", data_checker=True)
    assert form.attrs["action"] == "/check" and form.attrs["method"] == "get"
    code = form.find("input", name="code")
    moves = form.find("textarea", name="moves")
    assert code.attrs["value"] == "YU1-C-AAAAAAB"
    assert moves.text == "</textarea><b>x</b>"
    assert not document.find_all("b")
    for control in (code, moves):
        assert document.find("label", for_=control.attrs["id"]).text
    assert document.find("section", data_verdict=True).attrs["class"] == "verdict is-illegal"
    assert document.find("div", data_check_viewer=True).attrs["data-frames"] == "/frames.json"
    assert [s.attrs["src"].split("/")[-1].split(".")[0] for s in document.find_all("script", type="module")] == \
        ["page", "check"]


# -- languages -------------------------------------------------------------------------------

def test_a_page_follows_accept_language_and_a_lang_parameter_wins(client):
    korean, response = page(client, "/deals/YU1-C-AAAAAAB", headers={"Accept-Language": "ko-KR,ko;q=0.9"})
    assert korean.find("html").attrs["lang"] == "ko" and response.headers["Content-Language"] == "ko"
    assert korean.find("h1").text == "배치 YU1-C-AAAAAAB"
    assert korean.find("div", class_="column").attrs["aria-label"] == "1번 열: 하트 7"
    assert korean.find("div", data_pile="T2").attrs["aria-label"].startswith("2번 열: 뒷면 카드, 하트 4")
    finnish, _ = page(client, "/deals/YU1-C-AAAAAAB?lang=fi", headers={"Accept-Language": "ko"})
    assert finnish.find("html").attrs["lang"] == "fi"
    assert finnish.find("div", class_="column").attrs["aria-label"] == "sarake 1: hertta-7"
    assert finnish.find("div", class_="foundation").attrs["aria-label"] == "kotipino 1: tyhjä"
    # links keep an explicit choice
    assert finnish.find("a", class_="brand").attrs["href"] == "/?lang=fi"
    assert finnish.find("a", href="/check?code=YU1-C-AAAAAAB&lang=fi")
    switch = finnish.find("nav", class_="languages")
    assert [(a.attrs["hreflang"], a.text, a.attrs.get("aria-current")) for a in switch.find_all("a")] == \
        [("en", "English", None), ("ko", "한국어", None), ("fi", "Suomi", "true")]
    assert switch.find("a", hreflang="ko").attrs["href"] == "/deals/YU1-C-AAAAAAB?lang=ko"
    upper, _ = page(client, "/?lang=FI")
    assert upper.find("html").attrs["lang"] == "fi"
    assert upper.find("form", role="search").find("input", type="hidden").attrs == \
        {"type": "hidden", "name": "lang", "value": "fi"}
    assert upper.find("a", class_="brand").attrs["href"] == "/?lang=fi"
    plain, _ = page(client, "/", headers={"Accept-Language": "fi"})
    assert plain.find("a", class_="brand").attrs["href"] == "/"  # a language only accepted is not carried on
    assert not plain.find("form", role="search").find_all("input", type="hidden")
    odd, _ = page(client, "/deals/YU1-C-AAAAAAB?code=other&lang=ko")  # a query parameter named like the path's
    assert odd.find("a", hreflang="en").attrs["href"] == "/deals/YU1-C-AAAAAAB?lang=en"
    english, _ = page(client, "/deals/YU1-C-AAAAAAB", headers={"Accept-Language": "de, sv"})
    assert english.find("html").attrs["lang"] == "en"


@pytest.mark.parametrize("lang", ["en", "ko", "fi"])
def test_every_page_text_for_the_scripts_is_translated_and_the_card_names_come_along(client, lang):
    document, _ = page(client, f"/check?lang={lang}")
    data = script_data(document)
    assert data["lang"] == lang and data["api"] == "/api/v1" and data["root"] == ""
    assert set(data["text"]) == set(SCRIPT_TEXTS)
    assert len(data["names"]) == 52
    if lang != "en":
        same = [key for key, text in data["text"].items() if text == SCRIPT_TEXTS[key]]
        assert same == [], f"untranslated for {lang}: {same}"


def test_the_korean_record_page_formats_its_date_for_korean(client, submit):
    record = submit("ann", "FT1-N-AAAAAAB", "T7>F")
    document, _ = page(client, f"/records/{record['id']}?lang=ko")
    received = document.find("time")
    assert received.attrs["datetime"].startswith(record["received_at"][:19])
    assert re.search(r"\d{4}\. \d{1,2}\. \d{1,2}\.", received.text), received.text


# -- the static files and what the scripts may do ----------------------------------------------

@pytest.mark.parametrize("path, mimetype", [
    ("/static/js/common.js", "text/javascript"),
    ("/static/js/replay.js", "text/javascript"),
    ("/static/css/pages.css", "text/css"),
    ("/static/favicon.svg", "image/svg+xml"),
])
def test_the_static_files_are_served(client, path, mimetype):
    response = client.get(path)
    assert response.status_code == 200 and response.mimetype == mimetype
    assert response.headers["Cache-Control"] == "public, no-cache"  # the plain name: revalidated
    assert response.get_data() == (STATIC / path.removeprefix("/static/")).read_bytes()
    etag = response.headers["ETag"]
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
    response.close()


def test_the_scripts_never_write_html_and_use_only_texts_that_exist():
    called, literals = set(), set()
    for script in sorted((STATIC / "js").glob("*.js")):
        source = script.read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in source, f"{script.name} uses {sink}"
        called |= set(re.findall(r"\bt\(\s*\"(\w+)\"", source))
        literals |= set(re.findall(r"\"(\w+)\"", source))
    assert called - set(SCRIPT_TEXTS) == set(), "t() of a text the server does not send"
    assert set(SCRIPT_TEXTS) - literals == set(), "texts sent that no script uses"


def test_the_templates_never_turn_escaping_off():
    for template in TEMPLATES.glob("*.html"):
        source = template.read_text(encoding="utf-8")
        assert "|safe" not in source.replace(" ", "") and "autoescape false" not in source, template.name
        assert "style=" not in source, f"{template.name}: inline styles break the Content-Security-Policy"


# -- what the server renders by itself (no script needed) ------------------------------------

def hashed_urls(document) -> list[str]:
    return [link.attrs["href"] for link in document.find_all("link", rel="modulepreload")]


def test_static_files_have_hashed_names_with_a_year_of_cache_and_gzip(client):
    document, _ = page(client, "/")
    css = document.find("link", rel="stylesheet").attrs["href"]
    assert re.fullmatch(r"/static/css/pages\.[0-9a-f]{10}\.css", css)
    response = client.get(css, headers={"Accept-Encoding": "gzip"})
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in response.headers["Vary"]
    assert gzip.decompress(response.get_data()) == (STATIC / "css" / "pages.css").read_bytes()
    assert client.get(css).get_data() == (STATIC / "css" / "pages.css").read_bytes()  # no gzip unless accepted
    assert client.get("/static/css/pages.0000000000.css").status_code == 404
    assert client.get("/static/../routes/pages.py").status_code == 404


def test_a_hashed_script_imports_the_hashed_modules_and_the_page_preloads_them_all(client, submit):
    record = submit("ann", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 5)))
    document, _ = page(client, f"/records/{record['id']}")
    preloaded = hashed_urls(document)
    names = [re.sub(r"\.[0-9a-f]{10}\.js$", ".js", url).removeprefix("/static/js/") for url in preloaded]
    # every module of the viewer is named in the page, so the browser fetches them in parallel
    assert {"common.js", "board.js", "replay.js", "record.js", "page.js"} <= set(names)
    record_js = next(url for url in preloaded if "/record." in url)
    source = client.get(record_js).get_data(as_text=True)
    imported = re.findall(r'from "\./([\w.]+)"', source)
    assert imported and all(re.fullmatch(r"\w+\.[0-9a-f]{10}\.js", name) for name in imported)
    assert {f"/static/js/{name}" for name in imported} <= set(preloaded)


def test_a_deals_board_is_in_the_page_itself(client, submit):
    first = submit("Väinö Mäkinen", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 30)))
    second = submit("ann", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 10)))
    document, _ = page(client, "/deals/YU1-C-AAAAAAB?lang=fi")
    rows = document.find("section", data_leaderboard=True).find("tbody").find_all("tr")
    assert [row.find("td", class_="player").text for row in rows] == ["Väinö Mäkinen", "ann"]
    link = rows[0].find("td", class_="player").find("a")  # a name links to the player's page, the result to the record
    assert link.attrs["href"] == "/players/V%C3%A4in%C3%B6%20M%C3%A4kinen?lang=fi"
    assert rows[0].find("td", class_="result").find("a").attrs["href"] == f"/records/{first['id']}?lang=fi"
    # Yukon: every win earns alike, so the board shows take-backs and moves, a game not won its earned
    # points in the result, and the app's score beside them; the caption says what ranks
    assert [td.attrs["data-label"] for td in rows[0].find_all("td")] == [
        "#", "Pelaaja", "Takaisinotot", "Siirrot", "Lopputulos", "Pisteet"]
    assert rows[1].find("td", class_="result").text == f"ei voitettu, {second['score']} pistettä"
    assert rows[1].find("td", class_="score").text == str(second["score"])
    caption = document.find("section", data_leaderboard=True).find("caption").text
    assert caption.startswith("Järjestys: tulos, sitten ilman takaisinottoja ansaitut pisteet")
    empty, _ = page(client, "/deals/FT1-N-AAAAAAB?lang=fi")
    assert empty.find("section", data_leaderboard=True).find("tbody").text == "Varmennettuja tallenteita ei vielä ole."


def test_each_step_has_its_own_url_and_the_server_draws_it(client, submit):
    log = play_greedy("FT1-N-AAAAAAB", 20)
    record = submit("ann", "FT1-N-AAAAAAB", " ".join(log))
    actions = record["canonical"].split()
    frames = client.get(f"/records/{record['id']}/frames.json").get_json()["frames"]
    for step in (0, 1, 7, len(actions)):
        document, _ = page(client, f"/records/{record['id']}?step={step}")
        viewer = document.find("section", data_viewer=True)
        assert viewer.attrs["data-step"] == str(step)
        assert viewer.find("dd", data_counter="step").text == f"{step} / {len(actions)}"
        assert viewer.find("dd", data_counter="score").text == str(frames[step]["score"])
        columns = [c.attrs["aria-label"] for c in viewer.find_all("div", class_="column")]
        from api.pages.board import board_labels
        assert columns == board_labels("en", frames[step]["board"])["columns"]
        current = viewer.find_all("a", aria_current="step")
        assert [a.attrs["data-step"] for a in current] == ([str(step)] if step else [])
        if step:
            item = current[0]
            assert item.attrs["tabindex"] == "0"
            moved = viewer.find("div", data_pile=item.attrs["data-to"]) if "data-to" in item.attrs else None
            assert moved is not None
    for bad in ("x", "-3", "99999"):
        document, _ = page(client, f"/records/{record['id']}?step={bad}")
        assert document.find("section", data_viewer=True).attrs["data-step"] in ("0", str(len(actions)))


@pytest.mark.parametrize("log, expected", [
    ("T6>T7 T7>F U", ["6♦ T6 → T7", None, None]),
])
def test_the_log_reads_like_a_game(log, expected):
    from flask import Flask, g

    from api.pages.board import describe_log
    app = Flask(__name__)
    with app.test_request_context("/"):
        g.lang = "en"
        steps = describe_log(["T6:6D>T7", "T5:AS>F1", "U", "S", "W:5H>T3", "W:2C>F4", "F2:7H>T4", "U"])
    assert [s["label"] for s in steps] == [
        "6♦ T6 → T7", "A♠ T5 → foundation", "Undo (takes back A♠ T5 → foundation)", "Draw",
        "5♥ from the waste → T3", "2♣ from the waste → foundation", "Take-back: 7♥ F2 → T4",
        "Undo (takes back Take-back: 7♥ F2 → T4)"]
    assert [(s["from"], s["to"], s["card"]) for s in steps] == [
        ("T6", "T7", "6D"), ("T5", "F1", "AS"), ("F1", "T5", "AS"), ("S", "W", None), ("W", "T3", "5H"),
        ("W", "F4", "2C"), ("F2", "T4", "7H"), ("T4", "F2", "7H")]
    with app.test_request_context("/"):
        g.lang = "fi"
        assert [s["label"] for s in describe_log(["T5:AS>F1", "S", "U"])] == [
            "A♠ T5 → kotipino", "Nosto", "Peruminen (kumoaa: Nosto)"]


def test_the_checker_gives_its_verdict_without_any_script(client):
    query = {"code": "FT1-N-AAAAAAB", "moves": "T7>F T10>T9 T1>T2 S"}
    document, _ = page(client, "/check", 200, query_string={**query, "lang": "ko"})
    verdict = document.find("section", data_verdict=True)
    assert verdict.find("h2").text == "✗ 규칙에 어긋나는 수 기록"
    error = replay("FT1-N-AAAAAAB", query["moves"]).error
    from api.pages.i18n import rule_message
    assert verdict.find("p", class_="rule-message").text == rule_message(error, "ko")
    assert verdict.find("strong").text == "3번째 동작(T1>T2)은 규칙에 어긋납니다."
    assert error.rule not in verdict.find("strong").text  # the rule id only in the detail line
    assert verdict.find("code", class_="rule-id").text == error.rule
    viewer = document.find("div", data_check_viewer=True)
    assert viewer.attrs["data-moves"] == "T7:AS>F1 T10:6H>T9"
    assert viewer.find("span", class_="illegal").text == "T1>T2"
    assert viewer.find("dd", data_counter="step").text == "2 / 2"
    assert viewer.find("button", aria_current="step").attrs["data-step"] == "2"
    og = document.find("meta", property="og:url").attrs["content"]
    assert og.startswith("http://localhost/check?code=FT1-N-AAAAAAB&moves=T7") and og.endswith("&lang=ko")
    posted = client.post("/check", data={**query})
    assert posted.status_code == 200
    assert parse(posted.get_data(as_text=True)).find("section", data_verdict=True).find("h2").text == "✗ Illegal log"
    legal, _ = page(client, "/check", query_string={"code": "FT1-N-AAAAAAB", "moves": "T7>F, T10>T9\nS"})
    assert legal.find("section", data_verdict=True).find("h2").text == "✓ Legal log"
    assert not legal.find_all("div", data_rule_error=True)


@pytest.mark.parametrize("query, field, english, finnish", [
    ({"code": "", "moves": "S"}, "code", "Enter a game code such as YU1-C-AAAAAAB.",
     "Kirjoita pelikoodi, esimerkiksi YU1-C-AAAAAAB."),
    ({"code": "YU1-Q-AAAAAAB", "moves": "S"}, "code", "YU1-Q-AAAAAAB is not a game code: rule letter Q is not valid",
     "YU1-Q-AAAAAAB ei ole pelikoodi: Ensimmäisen yhdysviivan jälkeinen sääntökirjain riippuu pelistä: Yukon: C, R"),
    ({"code": "YU1-C-AAAAAAB", "moves": "  "}, "moves", "Paste a move log.", "Liitä siirtoloki."),
])
def test_the_checker_explains_a_missing_or_bad_field_in_the_pages_language(client, query, field, english, finnish):
    for lang, text in (("en", english), ("fi", finnish)):
        document, _ = page(client, "/check", 422, query_string={**query, "lang": lang})
        error = document.find("p", data_check_error=True)
        assert error.text.startswith(text), error.text
        control = document.find("input" if field == "code" else "textarea", name=field)
        assert control.attrs["aria-invalid"] == "true"
        assert not document.find_all("section", data_verdict=True)


def test_a_syntax_error_is_explained_in_korean_not_in_the_engines_english(client):
    document, _ = page(client, "/check", query_string={"code": "YU1-C-AAAAAAB", "moves": "T1>T2x", "lang": "ko"})
    box = document.find("div", data_rule_error=True)
    assert box.find("strong").text == "1번째 동작(T1>T2x)은 앱이 아는 수가 아닙니다."
    assert not box.find_all("code", class_="rule-id")
    assert "expected" not in box.text


@pytest.mark.parametrize("lang, code, part", [("ko", "XX1-C-AAAAAAB", "YU (Yukon)"), ("fi", "YU1-C-AAAA", "Jako-osa")])
def test_a_bad_code_is_explained_in_the_pages_language(client, lang, code, part):
    document, _ = page(client, "/deals", 422, query_string={"code": code, "lang": lang})
    assert part in document.find("p", id="code-error").text
    missing, _ = page(client, f"/deals/{code}?lang={lang}", 404)
    assert part in missing.find("p", class_="form-error").text


def test_sharing_tags_and_titles_name_the_player_and_the_deal(client, submit):
    record = submit("ann", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 12)))
    document, _ = page(client, f"/records/{record['id']}?step=3")
    meta = {m.attrs["property"]: m.attrs["content"] for m in document.find_all("meta") if "property" in m.attrs}
    assert meta["og:title"] == f"ann on YU1-C-AAAAAAB · record {record['id']}"
    assert meta["og:description"] == (f"ann played YU1-C-AAAAAAB: {record['moves']} moves, {record['score']} points, "
                                      "not won")
    assert meta["og:url"] == f"http://localhost/records/{record['id']}"
    share = document.find("div", data_share=True)
    assert "hidden" in share.attrs  # the copy buttons need the script
    assert share.find("button", data_copy_text="YU1-C-AAAAAAB").text == "Copy code YU1-C-AAAAAAB"
    korean, _ = page(client, f"/records/{record['id']}?lang=ko")
    assert korean.find("meta", property="og:description").attrs["content"].startswith("ann 님의 YU1-C-AAAAAAB 게임")
    deal, _ = page(client, "/deals/FT1-N-AAAAAAB?lang=fi")
    assert deal.find("title").text.startswith("Jako FT1-N-AAAAAAB")
    assert deal.find("p", class_="subtitle").text.startswith("Neljäkymmentä rosvoa")


def test_a_won_record_is_summed_up_as_a_win(app, client, submit):
    from flask import g

    from api.pages.views import record_summary

    class Won:
        player, code, moves, score, won = "ann", "YU1-C-AAAAAAB", 88, 625, True

    with app.test_request_context("/"):
        g.lang = "en"
        assert record_summary(Won) == "ann won YU1-C-AAAAAAB in 88 moves, 625 points"


def test_the_received_time_says_its_zone(client, submit):
    record = submit("ann", "FT1-N-AAAAAAB", "T7>F")
    document, _ = page(client, f"/records/{record['id']}")
    assert document.find("time").text.endswith(" UTC")


def test_the_replay_data_and_the_pages_are_gzip_compressed(client, submit):
    record = submit("ann", "FT1-N-AAAAAAB", " ".join(play_greedy("FT1-N-AAAAAAB", 60)))
    plain = client.get(f"/records/{record['id']}/frames.json")
    assert "Content-Encoding" not in plain.headers and "Accept-Encoding" in plain.headers["Vary"]
    packed = client.get(f"/records/{record['id']}/frames.json", headers={"Accept-Encoding": "gzip, br"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(packed.get_data())) == plain.get_json()
    assert len(packed.get_data()) * 8 < len(plain.get_data())
    page_ = client.get(f"/records/{record['id']}", headers={"Accept-Encoding": "gzip"})
    assert page_.headers["Content-Encoding"] == "gzip"
    assert b"data-viewer" in gzip.decompress(page_.get_data())


def test_each_module_is_preloaded_once(client):
    document, _ = page(client, "/check?code=YU1-C-AAAAAAB&moves=T6>T7")
    preloaded = hashed_urls(document)
    assert len(preloaded) == len(set(preloaded)) == 5  # common, page, board, replay, check


def test_the_main_navigation_has_the_leaderboards_and_challenges_and_the_footer_the_checker(client):
    document = parse(client.get("/").get_data(as_text=True))
    nav = document.find("nav", aria_label="Main")
    assert [a.text for a in nav.find_all("a")] == ["Leaderboards", "Challenges"]
    footer = document.find("footer")
    assert [a.attrs["href"] for a in footer.find_all("a")] == ["/check"]  # for players, not about the API
    assert "API" not in footer.text
