"""The pages in a real browser: leaderboards, a deal, stepping through a replay
with buttons, keys and the log, checking a bad log, languages, escaping and
keyboard reach; each test leaves screenshots in test-artifacts/e2e/."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import pytest

from api.pages.board import board_labels, board_view
from api.pages.i18n import card_name, rule_message
from engine import Game
from tests.e2e.e2e_helpers import MARKUP_NAME
from verifier import replay

#: the board's markup as a tree of (tag, attributes, children), text trimmed and blank text left out
BOARD_TREE = """node => {
    const walk = n => n.nodeType === Node.TEXT_NODE ? n.textContent.trim() : [
        n.tagName,
        [...n.attributes].map(a => [a.name, a.value]).sort(),
        [...n.childNodes].map(walk).filter(c => c !== ""),
    ];
    return walk(node);
}"""


def column_labels(page: Any) -> list[str]:
    return page.locator("[data-board] .column").evaluate_all("nodes => nodes.map(n => n.getAttribute('aria-label'))")


def start_labels(code: str, lang: str = "en") -> list[str]:
    return board_labels(lang, board_view(Game.from_code(code).position))["columns"]


def test_the_home_page_shows_the_three_standings_with_names_as_text(open_page, live_server, expect, screenshot):
    page = open_page("/")
    assert page.locator("[data-leaderboard]").count() == 0  # no raw-score board across deals
    classic = page.locator("[data-standings][data-variant=yukon-classic]")
    # ann, the markup name and a long one each played one of today's or this week's challenges: 1 point, one rank
    expect(classic.locator("tbody tr")).to_have_count(3)
    assert classic.locator("td.rank").all_inner_texts() == ["1", "1", "1"]
    assert classic.locator("td.points").all_inner_texts() == ["1", "1", "1"]
    forty = page.locator("[data-standings][data-variant=forty-thieves] tbody tr")
    expect(forty).to_have_count(2)  # Väinö played this week's and yesterday's challenge, pekka today's
    expect(forty.nth(0).locator("td")).to_have_text(["1", "Väinö Mäkinen-Virtanen", "2", "0", "2"])
    expect(forty.nth(1).locator("td")).to_have_text(["2", "pekka", "1", "0", "1"])
    # (the browser tests of a running challenge play today's Yukon relaxed challenge too: more names may follow)
    expect(page.locator("[data-variant=yukon-relaxed] tbody tr td.player", has_text="김민지")).to_have_count(1)
    expect(classic.locator(".hint")).to_have_text(
        "Challenge points: 3 for each challenge won, 1 for each challenge played and not won.")
    names = classic.locator("td.player a").all_inner_texts()
    assert MARKUP_NAME in names and "ann" in names
    assert page.locator("main img").count() == 0  # the markup is text, not an element
    link = classic.locator("td.player a", has_text="onerror")  # the name: the player's page
    assert unquote(link.get_attribute("href")) == f"/players/{MARKUP_NAME}"
    screenshot(page, "home")
    link.click()
    expect(page.locator("h1")).to_have_text(f"Player {MARKUP_NAME}")
    assert page.locator("main img").count() == 0
    page.go_back()
    classic.locator(".panel-link a").click()
    expect(page).to_have_url(re.compile(r"/challenges/yukon-classic$"))


def test_the_code_form_opens_the_deal_with_its_board_and_best_records(open_page, expect, screenshot):
    page = open_page("/")
    page.get_by_label("Game code").fill("yu1-c-aaaaaab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/deals/YU1-C-AAAAAAB$"))
    expect(page.locator("h1")).to_have_text("Deal YU1-C-AAAAAAB")
    assert column_labels(page) == start_labels("YU1-C-AAAAAAB")
    assert column_labels(page)[1].startswith("column 2: face-down card, four of hearts")
    assert page.locator("[data-board] .card.back").count() == 21
    assert page.locator("[data-board] .card[data-card]").count() == 31
    expect(page.locator("[data-leaderboard] tbody tr")).to_have_count(2)
    screenshot(page, "deal-yukon")
    page = open_page("/deals/FT1-N-AAAAAAB")
    expect(page.locator("[data-pile=S]")).to_have_attribute("aria-label", "stock, cards left: 64")
    expect(page.locator("[data-leaderboard] tbody tr td.player")).to_have_text("pekka")
    screenshot(page, "deal-forty-thieves")


def test_the_replay_steps_with_buttons_keys_and_the_log(open_page, live_server, expect, screenshot):
    record = live_server.records["ann"]
    actions = record["canonical"].split()
    total = len(actions)
    page = open_page(f"/records/{record['id']}?step=0")  # the deal (without ?step=, the finished game)
    frames = page.request.get(f"/records/{record['id']}/frames.json").json()["frames"]
    viewer = page.locator("[data-viewer]")
    forward = viewer.get_by_role("button", name="Forward")
    expect(forward).to_be_enabled()
    start = column_labels(page)
    assert start == start_labels("YU1-C-AAAAAAB")
    drawn_by_server = page.locator("[data-board]").evaluate(BOARD_TREE)

    labels = viewer.locator("[data-log] [data-step]").all_inner_texts()
    assert viewer.locator("[data-log] [data-step]").evaluate_all("ns => ns.map(n => n.dataset.action)") == actions

    def shows(step: int) -> None:
        frame = frames[step]
        expect(viewer.locator("[data-counter=step]")).to_have_text(f"{step} / {total}")
        expect(viewer.locator("[data-counter=score]")).to_have_text(str(frame["score"]))
        expect(viewer.locator("[data-counter=moves]")).to_have_text(str(frame["moves"]))
        current = viewer.locator("[data-log] [aria-current=step]")
        if step:
            expect(current).to_have_text(labels[step - 1])
            expect(viewer.locator("[data-status]")).to_contain_text(f"Action {step} of {total}: {labels[step - 1]}.")
        else:
            expect(current).to_have_count(0)
            expect(viewer.locator("[data-status]")).to_contain_text("Start position.")
        assert column_labels(page) == board_labels("en", frame["board"])["columns"]

    shows(0)
    forward.click()
    forward.click()
    shows(2)
    page.keyboard.press("ArrowRight")
    shows(3)
    page.keyboard.press("ArrowLeft")
    shows(2)
    page.keyboard.press("End")
    shows(total)
    assert page.evaluate("window.scrollY") == 0  # stepping scrolls the log panel, never the page
    assert frames[total]["score"] == record["score"] and frames[total]["moves"] == record["moves"]
    expect(forward).to_be_disabled()
    expect(viewer.get_by_role("button", name="End")).to_be_disabled()
    expect(viewer.get_by_role("button", name="Back")).to_be_enabled()
    page.keyboard.press("ArrowRight")  # at the end: nothing happens
    shows(total)
    page.keyboard.press("Home")
    shows(0)
    expect(viewer.get_by_role("button", name="Start")).to_be_disabled()
    assert column_labels(page) == start  # the script's labels are the server's
    assert page.locator("[data-board]").evaluate(BOARD_TREE) == drawn_by_server  # and so is all the markup
    viewer.locator("[data-log] [data-step='7']").click()
    shows(7)
    expect(page).to_have_url(re.compile(rf"/records/{record['id']}\?step=7$"))
    page.keyboard.press("ArrowDown")  # in the log, the arrows move the focus along
    shows(8)
    expect(viewer.locator("[data-log] [data-step='8']")).to_be_focused()
    assert page.evaluate("window.scrollY") == 0
    screenshot(page, "replay")
    # the score went up somewhere: a foundation move or a card turned up was replayed
    assert max(frame["score"] for frame in frames) > 0


def test_the_checker_marks_the_failing_action_with_its_rule(open_page, live_server, expect, screenshot):
    page = open_page("/check")
    log = "T7>F T10>T9 T1>T2 S"
    page.get_by_label("Game code").fill("FT1-N-AAAAAAB")
    page.get_by_label("Move log").fill(log)
    page.get_by_role("button", name="Check", exact=True).click()
    verdict = page.locator("[data-verdict]")
    expect(verdict.locator("h2")).to_have_text("✗ Illegal log")
    expect(page).to_have_url(re.compile(r"/check\?code=FT1-N-AAAAAAB&moves=T7%3EF"))  # a link to share
    expected = replay("FT1-N-AAAAAAB", log).error
    expect(verdict.locator("[data-rule-error] strong")).to_have_text("Action 3 (T1>T2) breaks a rule.")
    expect(verdict.locator(".rule-message")).to_have_text(expected.message)
    expect(verdict.locator(".rule-id")).to_have_text(expected.rule)  # the rule id: a detail line only
    failing = page.locator("[data-check-viewer] .action.illegal")
    expect(failing).to_have_text("T1>T2")
    expect(page.locator("#failing-rule")).to_have_text(expected.message)
    expect(page.locator("[data-check-viewer] [data-counter=step]")).to_have_text("2 / 2")
    expect(page.locator("[data-check-viewer] [data-log] [aria-current=step]")).to_have_text("6♥ T10 → T9")
    screenshot(page, "check-illegal")
    expect(page.locator("[data-check-viewer] [data-go=first]")).to_be_enabled()
    page.keyboard.press("Home")
    expect(page.locator("[data-check-viewer] [data-counter=step]")).to_have_text("0 / 2")

    page.get_by_label("Move log").fill("T7>F, T10>T9\nS")
    page.get_by_role("button", name="Check", exact=True).click()
    expect(verdict.locator("h2")).to_have_text("✓ Legal log")
    expect(verdict.locator("[data-rule-error]")).to_be_hidden()
    expect(page.locator("[data-check-viewer] [data-counter=step]")).to_have_text("3 / 3")
    expect(page.locator("[data-check-viewer] .action.illegal")).to_have_count(0)

    page.get_by_label("Game code").fill("YU1-Q-AAAAAAB")
    with page.expect_response(re.compile(r"/check\?")) as answer:
        page.get_by_role("button", name="Check", exact=True).click()
    assert answer.value.status == 422
    expect(page.locator("[data-check-error]")).to_contain_text(
        "YU1-Q-AAAAAAB is not a game code: rule letter Q is not valid for YU")
    expect(page.get_by_label("Game code")).to_have_attribute("aria-invalid", "true")


def test_the_checker_speaks_korean_and_a_log_is_shown_as_text(open_page, expect, screenshot):
    page = open_page("/check?code=YU1-C-AAAAAAB&moves=T1%3ET2%20%3Cb%3Ebold%3C/b%3E", locale="ko-KR")
    assert page.locator("html").get_attribute("lang") == "ko"
    verdict = page.locator("[data-verdict]")
    expect(verdict.locator("h2")).to_have_text("✗ 규칙에 어긋나는 수 기록")
    error = replay("YU1-C-AAAAAAB", "T1>T2").error
    expect(verdict.locator(".rule-message")).to_have_text(rule_message(error, "ko"))
    assert rule_message(error, "ko") == "카드는 정확히 한 단계 높은 카드 위에만 놓을 수 있습니다. 7H 카드는 JH 카드 위에 놓을 수 없습니다."
    expect(page.locator("[data-check-viewer] .action.illegal")).to_have_text("T1>T2")
    assert page.locator("main b").count() == 0
    assert page.get_by_role("textbox", name="수 기록").input_value() == "T1>T2 <b>bold</b>"
    screenshot(page, "check-korean")


@pytest.mark.parametrize("locale, path, lang, label", [
    ("ko-KR", "/deals/FT1-N-AAAAAAB", "ko", "1번 열: 다이아몬드 6, 다이아몬드 7, 스페이드 잭, 스페이드 8"),
    ("en-US", "/deals/FT1-N-AAAAAAB?lang=fi", "fi", "sarake 1: ruutu-6, ruutu-7, pata-jätkä, pata-8"),
])
def test_pages_and_card_descriptions_in_korean_and_finnish(open_page, expect, screenshot, locale, path, lang, label):
    page = open_page(path, locale=locale)
    assert page.locator("html").get_attribute("lang") == lang
    assert column_labels(page)[0] == label
    assert column_labels(page) == start_labels("FT1-N-AAAAAAB", lang)
    expect(page.locator("[data-leaderboard] tbody tr td.player")).to_have_text("pekka")
    screenshot(page, f"deal-{lang}")


def test_the_replay_viewer_in_finnish_describes_each_step(open_page, live_server, expect):
    record = live_server.records["pekka"]
    page = open_page(f"/records/{record['id']}?lang=fi&step=0")
    forward = page.get_by_role("button", name="Eteenpäin")
    expect(forward).to_be_enabled()
    forward.click()
    first = page.locator("[data-log] [data-step='1']").inner_text()
    assert first.endswith("→ kotipino") or "→ T" in first or first == "Nosto"
    expect(page.locator("[data-status]")).to_contain_text(f"Toiminto 1/{record['actions']}: {first}.")
    frames = page.request.get(f"/records/{record['id']}/frames.json?lang=fi").json()["frames"]
    assert column_labels(page) == board_labels("fi", frames[1]["board"])["columns"]
    waste = page.locator("[data-pile=W]").get_attribute("aria-label")
    top = frames[1]["board"]["waste"]["top"]
    assert waste == (f"poistopino: päällimmäisenä {card_name('fi', top)}, kortteja: 1" if top else "poistopino: tyhjä")


@pytest.mark.parametrize("which", ["home", "deal", "record", "check"])
def test_the_keyboard_reaches_every_control(open_page, live_server, expect, which):
    path = {"home": "/", "deal": "/deals/YU1-C-AAAAAAB", "record": f"/records/{live_server.records['ann']['id']}",
            "check": "/check"}[which]
    page = open_page(path)
    if which == "record":
        expect(page.get_by_role("button", name="Start")).to_be_enabled()
    if which in ("home", "deal"):
        expect(page.locator("[data-standings] tbody tr a, [data-leaderboard] tbody tr a").first).to_be_visible()
    controls = page.evaluate("""() => {
        const all = [...document.querySelectorAll('a[href], button, input, textarea, select, [tabindex]')]
          .filter(n => !n.disabled && n.tabIndex >= 0 && n.type !== 'hidden' && n.getClientRects().length);
        all.forEach((n, i) => n.dataset.e2e = String(i));
        return all.length;
    }""")
    assert controls >= 5
    reached = []
    for _ in range(controls + 5):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement && document.activeElement.dataset.e2e"))
    assert reached[0] == page.evaluate("() => document.querySelector('.skip-link').dataset.e2e")
    missed = {str(i) for i in range(controls)} - set(reached)
    assert not missed, "not reached by Tab: " + ", ".join(page.evaluate(
        "ids => ids.map(i => document.querySelector(`[data-e2e='${i}']`).outerHTML.slice(0, 80))", sorted(missed)))
