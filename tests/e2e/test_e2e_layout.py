"""The pages in a real browser, continued: layouts at phone, tablet and desktop widths
in three languages, the replay viewer's step URLs, highlights, play/pause and scrolling,
the pages without JavaScript, the copy buttons, and no English left on Korean and
Finnish pages. The viewer's screenshots for docs/pages.md are taken here
(``DOCS_SCREENSHOTS=1`` writes them to docs/)."""

from __future__ import annotations

import re
import string
from typing import Any
from urllib.parse import quote, unquote

import pytest
from babel.messages.pofile import read_po

from api.pages.board import board_labels
from api.pages.i18n import catalog_path
from tests.e2e.e2e_helpers import LONG_NAME

WIDTHS = {390: 844, 768: 1024, 1366: 900}
LANGS = ("en", "ko", "fi")
ILLEGAL_CHECK = "/check?code=FT1-N-AAAAAAB&moves=" + quote("T7>F T10>T9 T1>T2 S")


def paths(live_server: Any) -> dict[str, tuple[str, int]]:
    """Every kind of page, with the status it answers."""
    records = live_server.records
    return {
        "home": ("/", 200),
        "deal-yukon": ("/deals/YU1-C-AAAAAAB", 200),
        "deal-forty-thieves": ("/deals/FT1-N-AAAAAAC", 200),
        "record-yukon": (f"/records/{records['long']['id']}?step=4", 200),
        "record-forty-thieves": (f"/records/{records['vaino']['id']}?step=12", 200),
        "check-empty": ("/check", 200),
        "solution": (f"/challenges/{live_server.solution}/solution", 200),
        "check-illegal": (ILLEGAL_CHECK, 200),
        "check-syntax": ("/check?code=YU1-C-AAAAAAB&moves=" + quote("T1>T2x"), 200),
        "check-bad-code": ("/check?code=YU1-Q-AAAAAAB&moves=S", 422),
        # a player with ranked, copied (unranked) and in-review records, statistics and challenge ranks
        "player": (f"/players/{LONG_NAME}", 200),
        "player-words": ("/players/" + quote("Väinö Mäkinen-Virtanen"), 200),
        # today's and this week's boards, the countdown, the calendar and past challenges
        "challenge-forty-thieves": ("/challenges/forty-thieves", 200),
        # a closed day (final board, solution, your result) and a running week (countdown, board so far)
        "challenge-day": (f"/challenges/forty-thieves/daily/{live_server.yesterday}?player=pekka", 200),
        "challenge-week": (f"/challenges/forty-thieves/weekly/{live_server.monday}", 200),
        "challenge-yukon-relaxed": ("/challenges/yukon-relaxed", 200),  # the week's challenge being prepared
        "bad-deal": ("/deals/YU9-C-AAAAAAB", 404),
        "no-record": ("/records/999999", 404),
    }


def with_lang(path: str, lang: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={lang}"


def viewer_ready(page: Any, expect: Any) -> None:
    """Wait until the replay viewer has its frames (its slider is enabled then)."""
    expect(page.locator("[data-viewer] [data-slider]")).to_be_enabled()


#: what sticks out: the page wider than the window, or a panel's, table's or board's box beyond its panel or the page
OVERFLOW = """() => {
    const width = document.documentElement.clientWidth;
    const out = [];
    if (document.documentElement.scrollWidth > width) out.push(`page ${document.documentElement.scrollWidth} > ${width}`);
    for (const node of document.querySelectorAll('main *')) {
        const box = node.getBoundingClientRect();
        if (!box.width || node.closest('.visually-hidden, [hidden]')) continue;
        if (box.right > width + 0.5 || box.left < -0.5) out.push(`${node.tagName}.${node.className} ${box.left}…${box.right}`);
    }
    for (const panel of document.querySelectorAll('.panel, .board, .log, .verdict, .summary')) {
        if (panel.scrollWidth > panel.clientWidth + 1) out.push(`${panel.className} scrolls: ${panel.scrollWidth} > ${panel.clientWidth}`);
    }
    return out.slice(0, 5);
}"""


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("lang", LANGS)
def test_no_page_is_wider_than_the_screen(open_page, live_server, expect, screenshot, width, lang):
    for name, (path, status) in paths(live_server).items():
        page = open_page(with_lang(path, lang), width=width, height=WIDTHS[width], status=status)
        if name.startswith("record") or name in ("check-illegal", "check-syntax"):
            viewer_ready(page, expect)
        assert page.evaluate(OVERFLOW) == [], (name, lang, width)
        if width in (390, 1366) and name in ("home", "record-forty-thieves", "deal-forty-thieves", "check-illegal",
                                             "player", "challenge-forty-thieves"):
            screenshot(page, f"layout-{name}-{lang}-{width}")
        page.context.close()


def test_korean_words_do_not_break_letter_by_letter(open_page, live_server):
    page = open_page("/deals/YU1-R-AAAAAB7?lang=ko", width=390, height=844)
    result = page.locator("[data-leaderboard] td.result").first
    assert result.evaluate("n => getComputedStyle(n).wordBreak") == "keep-all"
    assert result.evaluate("n => n.getClientRects().length") == 1  # "승리하지 못함" on one line or wrapped by words
    height = result.evaluate("n => n.getBoundingClientRect().height")
    line = result.evaluate("n => parseFloat(getComputedStyle(n).lineHeight) || 20")
    assert height <= 2 * line + 1


@pytest.mark.parametrize("code, width", [("FT1-N-AAAAAAB", 390), ("YU1-C-AAAAAAB", 390)])
def test_every_pile_of_a_board_is_on_a_phone_screen(open_page, code, width):
    page = open_page(f"/deals/{code}", width=width, height=844)
    piles = page.locator("[data-board] [data-pile]").evaluate_all(
        "ns => ns.map(n => { const b = n.getBoundingClientRect(); return [n.dataset.pile, b.left, b.right]; })")
    assert len(piles) == (20 if code.startswith("FT") else 11)
    assert all(left >= 0 and right <= width for _, left, right in piles), piles


def test_on_a_phone_the_board_comes_before_the_controls(open_page, live_server, expect):
    page = open_page(f"/records/{live_server.records['vaino']['id']}", width=390, height=844)
    viewer_ready(page, expect)
    board = page.locator("[data-viewer] [data-board]").bounding_box()
    controls = page.locator("[data-viewer] .viewer-controls").bounding_box()
    assert board["y"] + board["height"] <= controls["y"]
    assert controls["y"] + controls["height"] <= 844  # board and buttons on the first screen
    page.keyboard.press("End")
    assert page.evaluate("window.scrollY") == 0


def test_each_step_url_opens_its_step(open_page, live_server, expect):
    record = live_server.records["pekka"]
    total = record["actions"]
    frames = None
    for step in (0, 1, 9, total):
        page = open_page(f"/records/{record['id']}?step={step}")
        if frames is None:
            frames = page.request.get(f"/records/{record['id']}/frames.json").json()["frames"]
        viewer = page.locator("[data-viewer]")
        viewer_ready(page, expect)
        expect(viewer.locator("[data-counter=step]")).to_have_text(f"{step} / {total}")
        current = viewer.locator("[data-log] [aria-current=step]")
        if step:
            expect(current).to_have_attribute("data-step", str(step))
        else:
            expect(current).to_have_count(0)
        labels = page.locator("[data-board] .column").evaluate_all("ns => ns.map(n => n.getAttribute('aria-label'))")
        assert labels == board_labels("en", frames[step]["board"])["columns"]
        assert page.locator("[data-viewer] [data-slider]").input_value() == str(step)
    page.get_by_role("button", name="Back").click()
    expect(page).to_have_url(re.compile(rf"\?step={total - 1}$"))
    page.get_by_role("button", name="Start").click()  # the deal: its own address, ?step=0
    expect(page).to_have_url(re.compile(rf"/records/{record['id']}\?step=0$"))
    page.get_by_role("button", name="End").click()  # the finished game: the page's own address
    expect(page).to_have_url(re.compile(rf"/records/{record['id']}$"))


def test_the_moved_cards_piles_are_highlighted_after_each_step(open_page, live_server, expect):
    record = live_server.records["pekka"]  # Forty Thieves: moves, draws, the waste and foundations
    page = open_page(f"/records/{record['id']}?step=0")
    viewer_ready(page, expect)
    items = page.locator("[data-log] [data-step]").evaluate_all(
        "ns => ns.map(n => [n.dataset.from || null, n.dataset.to || null, n.dataset.card || null])")
    kinds = set()
    forward = page.get_by_role("button", name="Forward")
    for step, (source, target, card) in enumerate(items[:25], 1):
        forward.click()
        expect(page.locator("[data-counter=step]")).to_have_text(f"{step} / {record['actions']}")
        expect(page.locator("[data-board] .moved-from")).to_have_attribute("data-pile", source)
        expect(page.locator("[data-board] .moved-to")).to_have_attribute("data-pile", target)
        if card:
            assert page.locator(f"[data-board] [data-pile='{target}'] .card").last.get_attribute("data-card") == card
        kinds.add(target[0])
    assert {"T", "F", "W"} <= kinds  # columns, foundations and draws to the waste were among them
    page.get_by_role("button", name="Back").click()  # back: the piles of the step now shown
    source, target, _ = items[23]
    expect(page.locator("[data-board] .moved-to")).to_have_attribute("data-pile", target)
    page.get_by_role("button", name="Start").click()
    expect(page.locator("[data-board] .moved-to, [data-board] .moved-from")).to_have_count(0)


def test_the_card_glides_unless_motion_is_reduced(open_page, live_server, expect):
    path = f"/records/{live_server.records['ann']['id']}?step=0"
    step = "() => { document.querySelector('[data-go=forward]').click(); return document.getAnimations().length; }"
    page = open_page(path)
    viewer_ready(page, expect)
    assert page.evaluate(step) >= 1
    calm = open_page(path, reduced_motion="reduce")
    viewer_ready(calm, expect)
    assert calm.evaluate(step) == 0
    expect(calm.locator("[data-counter=step]")).to_have_text(f"1 / {live_server.records['ann']['actions']}")


def test_play_and_pause_advance_the_board(open_page, live_server, expect):
    record = live_server.records["ann"]
    page = open_page(f"/records/{record['id']}")
    viewer_ready(page, expect)
    start = page.locator("[data-board] .column").evaluate_all("ns => ns.map(n => n.getAttribute('aria-label'))")
    page.get_by_label("Speed").select_option("150")
    play = page.locator("[data-viewer] [data-play]")
    expect(play).to_have_accessible_name("Play")
    play.click()
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(play).to_have_accessible_name("Pause")
    expect(page.locator("[data-counter=step]")).to_have_text(re.compile(r"^([3-9]|\d\d) / "))
    play.click()
    expect(play).to_have_attribute("aria-pressed", "false")
    paused_at = int(page.locator("[data-counter=step]").inner_text().split(" / ")[0])
    assert page.locator("[data-board] .column").evaluate_all(
        "ns => ns.map(n => n.getAttribute('aria-label'))") != start
    page.get_by_role("button", name="Forward").click()
    expect(page.locator("[data-counter=step]")).to_have_text(f"{paused_at + 1} / {record['actions']}")
    play.click()  # plays to the end, then stops by itself
    expect(page.locator("[data-counter=step]")).to_have_text(f"{record['actions']} / {record['actions']}")
    expect(play).to_have_attribute("aria-pressed", "false")
    expect(page.get_by_role("button", name="Forward")).to_be_disabled()
    page.locator("[data-slider]").fill("3")
    expect(page.locator("[data-counter=step]")).to_have_text(f"3 / {record['actions']}")


def test_stepping_scrolls_only_the_log(open_page, live_server, expect):
    record = live_server.records["pekka"]
    for width in (1366, 390):
        page = open_page(f"/records/{record['id']}", width=width, height=WIDTHS[width])
        viewer_ready(page, expect)
        page.keyboard.press("End")
        expect(page.locator("[data-counter=step]")).to_have_text(f"{record['actions']} / {record['actions']}")
        assert page.evaluate("window.scrollY") == 0
        panel = page.locator("[data-log-panel]")
        assert panel.evaluate("n => n.scrollTop") > 0
        current = page.locator("[data-log] [aria-current=step]").bounding_box()
        box = panel.bounding_box()
        assert box["y"] <= current["y"] and current["y"] + current["height"] <= box["y"] + box["height"] + 1
        page.keyboard.press("Home")
        assert page.evaluate("window.scrollY") == 0


def test_keyboard_hints_are_hidden_on_touch_screens(open_page, live_server, expect):
    path = f"/records/{live_server.records['ann']['id']}"
    expect(open_page(path).locator(".keys-hint")).to_be_visible()
    expect(open_page(path, width=390, height=844, has_touch=True, is_mobile=True).locator(".keys-hint")).to_be_hidden()


def test_the_pages_without_javascript(open_page, live_server, expect, screenshot):
    off = {"java_script_enabled": False}
    page = open_page("/", **off)  # the standings, as the server renders them
    expect(page.locator("[data-standings][data-variant=yukon-classic] td.player a")).to_have_count(3)
    forty = page.locator("[data-standings][data-variant=forty-thieves] tbody tr")
    expect(forty.locator("td.player")).to_have_text(["Väinö Mäkinen-Virtanen", "pekka"])
    expect(forty.locator("td.points")).to_have_text(["2", "1"])
    assert page.locator("[data-leaderboard]").count() == 0
    assert "Loading" not in page.locator("main").inner_text()
    page = open_page("/?lang=fi", width=390, height=844, **off)  # on a phone each row is a list with its labels
    row = page.locator("[data-standings][data-variant=forty-thieves] tbody tr").first
    expect(row.locator("td")).to_have_text(["1", "Väinö Mäkinen-Virtanen", "2", "0", "2"])
    assert row.locator("td.points").evaluate("n => getComputedStyle(n, '::before').content") == '"Haastepisteet "'
    assert page.locator("thead").first.evaluate("n => n.getBoundingClientRect().width") <= 1
    screenshot(page, "home-fi-phone-no-script")
    record = live_server.records["ann"]
    page = open_page(f"/records/{record['id']}", **off)
    assert page.locator("[data-log] [data-step]").count() == record["actions"]
    assert page.locator("[data-board] .column").count() == 7
    page.locator("[data-log] [data-step='5']").click()  # a link: the server draws step 5
    expect(page).to_have_url(re.compile(r"\?step=5$"))
    expect(page.locator("[data-counter=step]")).to_have_text(f"5 / {record['actions']}")
    expect(page.locator("[data-log] [aria-current=step]")).to_have_attribute("data-step", "5")
    screenshot(page, "record-no-script")
    page = open_page("/check", **off)
    page.get_by_label("Game code").fill("FT1-N-AAAAAAB")
    page.get_by_label("Move log").fill("T7>F T10>T9 T1>T2 S")
    page.get_by_role("button", name="Check", exact=True).click()
    expect(page.locator("[data-verdict] h2")).to_have_text("✗ Illegal log")
    expect(page.locator("[data-check-viewer] .action.illegal")).to_have_text("T1>T2")
    screenshot(page, "check-no-script")


def test_the_player_and_challenge_pages_without_javascript(open_page, live_server, expect, screenshot):
    off = {"java_script_enabled": False}
    records = live_server.records
    page = open_page("/", **off)  # each leaderboard links its game's challenges, and so does the header
    for variant in ("yukon-classic", "yukon-relaxed", "forty-thieves"):
        link = page.locator(f"[data-variant={variant}] .panel-link a")
        assert link.get_attribute("href") == f"/challenges/{variant}"
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Challenges").click()
    expect(page).to_have_url(re.compile(r"/challenges/yukon-classic$"))
    expect(page.locator("[data-challenge=daily] td.player")).to_have_text(LONG_NAME)

    page = open_page("/challenges/forty-thieves", **off)
    daily, weekly = page.locator("[data-challenge=daily]"), page.locator("[data-challenge=weekly]")
    expect(daily.locator("td.player a")).to_have_text("pekka")
    assert daily.locator("td.player a").get_attribute("href") == "/players/pekka"
    assert daily.locator("td.result a").get_attribute("href") == f"/records/{records['pekka']['id']}"
    expect(weekly.locator("td.player")).to_have_text("Väinö Mäkinen-Virtanen")
    expect(daily.locator(".countdown")).to_have_text(
        re.compile(r"^Next challenge in \d+ h \d+ min \([A-Z][a-z]{2} \d\d?, \d{4}, 12:00\s+AM UTC\)$"))
    expect(daily).to_contain_text("Par: 40 moves")
    past = page.locator(".past-challenges tbody tr")
    expect(past).to_have_count(2)  # yesterday's: Väinö played, did not win; the day before: nobody played
    expect(past.nth(0).locator("td.code")).to_have_text("FT1-N-AAAAAAD")
    expect(past.locator("td.winners")).to_have_text(["Nobody won", "Nobody won"])
    expect(open_page("/challenges/yukon-relaxed", **off).locator("[data-challenge=weekly] .notice")).to_contain_text(
        "being prepared")

    daily.locator("td.player a").click()  # a name on a board opens the player's page
    expect(page.locator("h1")).to_have_text("Player pekka")

    page = open_page(f"/records/{records['copy']['id']}", **off)  # the record's flags, and its player's page
    # the share leaves out the positions other players of the deal reached too (fair play's copy rule)
    expect(page.locator("[data-flags-in-force] li")).to_have_text(re.compile(
        rf"^copy: the game goes through \d+ % of the positions of record {records['ann']['id']}, "
        r"stored earlier by another player$"))
    screenshot(page, "record-flags-no-script")
    page.locator(".summary dd.player a").click()
    expect(page.locator("h1")).to_have_text(f"Player {LONG_NAME}")
    rows = page.locator("table.player-records tbody tr")
    expect(rows).to_have_count(3)  # newest first: the fast game, the copy, the first game
    expect(rows.nth(0)).to_contain_text("in review")
    expect(rows.nth(0).locator(".flag-list li")).to_have_text(re.compile(r"^timing: "))
    expect(rows.nth(1)).to_contain_text("unranked")
    expect(rows.nth(1).locator(".flag-list li")).to_have_text(re.compile(r"^copy: "))
    stats = page.locator(".player-stats tbody tr")
    expect(stats).to_have_count(1)  # only ranked records count
    expect(stats.locator("td[data-label=Games]")).to_have_text("1")
    ranks = page.locator(".challenge-ranks tbody tr")
    expect(ranks).to_have_count(1)
    expect(ranks.locator("td[data-label=Rank]")).to_have_text("1 of 1")
    day = ranks.locator("td.primary time").get_attribute("datetime")
    assert unquote(ranks.locator("td.primary a").get_attribute("href")) == (
        f"/challenges/yukon-classic/daily/{day}?player={LONG_NAME}")
    screenshot(page, "player-no-script")


def test_the_copy_buttons(open_page, live_server, expect):
    record = live_server.records["ann"]
    page = open_page(f"/records/{record['id']}?step=0", permissions=["clipboard-read", "clipboard-write"])
    viewer_ready(page, expect)
    page.get_by_role("button", name="Forward").click()
    page.get_by_role("button", name="Forward").click()
    page.get_by_role("button", name="Copy link", exact=True).click()
    expect(page.locator("[data-share] [data-copy-status]")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == f"{live_server.url}/records/{record['id']}"
    page.get_by_role("button", name="Copy link at this step").click()
    expect(page.locator("[data-step-share] [data-copy-status]")).to_have_text("Copied.")
    link = page.evaluate("navigator.clipboard.readText()")
    assert link == f"{live_server.url}/records/{record['id']}?step=2"
    page.get_by_role("button", name="Copy code YU1-C-AAAAAAB").click()
    assert page.evaluate("navigator.clipboard.readText()") == "YU1-C-AAAAAAB"
    opened = open_page(link.removeprefix(live_server.url))
    viewer_ready(opened, expect)
    expect(opened.locator("[data-counter=step]")).to_have_text(f"2 / {record['actions']}")


# -- no English on Korean and Finnish pages -------------------------------------------------

def english_texts(lang: str) -> tuple[set[str], set[str]]:
    """From the catalogue of ``lang``: the English message ids shown translated (whole, for short
    ones), and the fragments of two words or more between their ``{placeholders}``."""
    with catalog_path(lang).open("rb") as po:
        catalog = read_po(po, locale=lang)
    whole, fragments = set(), set()
    for message in catalog:
        if not message.id or message.string == message.id:
            continue  # the same in both (a name such as Yukon)
        whole.add(message.id)
        for literal, *_ in string.Formatter().parse(message.id):
            words = re.findall(r"[A-Za-z][A-Za-z'’-]*", literal)
            if len(words) >= 2:
                fragments.add(" ".join(words))
    return whole, fragments


#: English words that no Finnish sentence has
ENGLISH_WORDS = {"the", "is", "not", "of", "and", "to", "an", "are", "was", "with", "from", "onto", "cannot", "must",
                 "be", "this", "there", "expected"}


#: what a reader sees or hears: text nodes and the text attributes, outside data a player typed
SHOWN = """() => {
    const skip = 'textarea, script, style, code.rule-id, .player, [data-action], .action.illegal';
    const texts = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!parent || parent.closest(skip)) continue;
        const text = node.textContent.replace(/\\s+/g, ' ').trim();
        if (text) texts.push(text);
    }
    for (const node of document.querySelectorAll('[aria-label], [title], [placeholder], [data-label], meta[content]')) {
        if (node.closest(skip)) continue;
        for (const name of ['aria-label', 'title', 'placeholder', 'data-label', 'content']) {
            const value = node.getAttribute(name);
            if (value && !(name === 'content' && node.getAttribute('property') === 'og:url')) texts.push(value);
        }
    }
    texts.push(document.title);
    return texts;
}"""


def english_in(texts: list[str], whole: set[str], fragments: set[str]) -> list[str]:
    found = []
    for text in texts:
        words = " ".join(re.findall(r"[A-Za-z][A-Za-z'’-]*", text))
        if text in whole or text.rstrip(".:") in whole or any(re.search(rf"(?<![A-Za-z]){re.escape(fragment)}(?![A-Za-z])", words, re.I) for fragment in fragments):
            found.append(text)
    return found


def test_the_english_check_finds_an_untranslated_message():
    whole, fragments = english_texts("fi")
    assert english_in(["Forward", "Eteenpäin"], whole, fragments) == ["Forward"]
    assert english_in(["Toiminto 3: the actions after it were not played"], whole, fragments)
    assert english_in(["A card goes onto a card of the same suit exactly one rank higher: 8S cannot go onto 8S."],
                      whole, fragments)
    assert not english_in(["Toiminto 3/40: A♠ T7 → kotipino. Pisteet 10, siirrot 3.", "YU1-C-AAAAAAB"],
                          whole, fragments)


@pytest.mark.parametrize("lang", ["ko", "fi"])
@pytest.mark.parametrize("script", [True, False])
def test_korean_and_finnish_pages_contain_no_english_sentence(open_page, live_server, expect, lang, script):
    whole, fragments = english_texts(lang)
    for name, (path, status) in paths(live_server).items():
        page = open_page(with_lang(path, lang), status=status, java_script_enabled=script)
        if script and (name.startswith("record") or name in ("check-illegal", "check-syntax")):
            viewer_ready(page, expect)
            page.locator("[data-viewer] [data-play]").click()
            page.keyboard.press("End")
        found = english_in(page.evaluate(SHOWN), whole, fragments)
        assert found == [], (name, lang, found)
        # and nothing English from elsewhere (an engine's sentence): no run of three English words
        # in Korean, no two English function words in one Finnish text
        shown = page.evaluate(SHOWN)
        if lang == "ko":
            runs = [text for text in shown if re.search(r"(?<![\w.])[A-Za-z]{2,}(?:[ ,]+[A-Za-z]{2,}){2,}", text)
                    and "Quarante Voleurs" not in text]
        else:
            runs = [text for text in shown if len(ENGLISH_WORDS & set(re.findall(r"[a-z]+", text.lower()))) >= 2]
        assert runs == [], (name, runs)
        page.context.close()


# -- the screenshots of docs/pages.md ---------------------------------------------------------

#: the felt without its gradient: the same picture, in a PNG a fraction of the size
FLAT = "body { background: #1f6b3a !important; }"


def test_docs_screenshots_of_the_viewer(open_page, live_server, expect, screenshot):
    record = live_server.records["pekka"]
    phone = open_page(f"/records/{record['id']}?step=17", width=390, height=844, is_mobile=True, has_touch=True,
                      bypass_csp=True)
    phone.add_style_tag(content=FLAT)
    viewer_ready(phone, expect)
    phone.get_by_role("button", name="Forward").click()
    expect(phone.locator("[data-counter=step]")).to_have_text(f"18 / {record['actions']}")
    screenshot(phone, "viewer-phone", element=phone.locator("[data-viewer]"), docs=True)
    desktop = open_page(f"/records/{live_server.records['vaino']['id']}?step=20", width=1366, height=900,
                        bypass_csp=True)
    desktop.add_style_tag(content=FLAT)
    viewer_ready(desktop, expect)
    desktop.get_by_role("button", name="Forward").click()
    screenshot(desktop, "viewer-desktop", element=desktop.locator("[data-viewer]"), docs=True)


def test_the_share_button_uses_the_share_sheet_or_copies_the_link(open_page, live_server, expect):
    record = live_server.records["ann"]
    link = f"{live_server.url}/records/{record['id']}"
    # without the Web Share API: the link is copied
    page = open_page(f"/records/{record['id']}", permissions=["clipboard-read", "clipboard-write"])
    page.evaluate("delete Navigator.prototype.share")
    page.get_by_role("button", name="Share", exact=True).click()
    expect(page.locator("[data-share] [data-copy-status]")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == link
    # with it: the browser's share sheet gets the title and the link, and nothing is copied
    shared = open_page(f"/records/{record['id']}")
    shared.evaluate("() => { window.sharedWith = []; "
                    "navigator.share = async (data) => { window.sharedWith.push(data); }; }")
    shared.get_by_role("button", name="Share", exact=True).click()
    expect(shared.locator("[data-share] [data-copy-status]")).to_have_text("")
    calls = shared.evaluate("window.sharedWith")
    assert len(calls) == 1 and calls[0]["url"] == link and calls[0]["title"].startswith("ann on YU1-C-AAAAAAB")
