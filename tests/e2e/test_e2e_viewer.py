"""The replay viewer in a real browser (issue 24): the moved card (or group) glows, Space plays
and pauses from anywhere (also after clicking Forward), the wheel over the board steps without
scrolling the page, each step shows the player's clock, "copy link at this step"; the layout (the
board beside the log and controls with the whole board of usual columns above the fold on a desktop,
cards fanned down to their corners in a long column, the result first and every control at least 44 px tall on a phone);
axe-core finds nothing on the record and check pages. Each in en/ko/fi at 390, 768 and 1366 px.
And a log of 5,000 actions, stepped a window of the log at a time (issue 22)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from api.pages.board import LOG_PAGE, board_labels
from api.pages.views import clock_text
from tests.e2e.conftest import timed_times
from tests.e2e.test_e2e_layout import ILLEGAL_CHECK, LANGS, WIDTHS, viewer_ready, with_lang

#: Space's, Forward's and Play's names in each language (the catalogs' own words)
FORWARD = {"en": "Forward", "ko": "앞으로", "fi": "Eteenpäin"}
#: the smallest touch target on a phone (WCAG 2.5.5's 44 CSS px)
TARGET = 44


def counter(page: Any) -> int:
    return int(page.locator("[data-counter=step]").inner_text().split(" / ")[0])


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page (its script from the axe-playwright-python package)."""
    import axe_playwright_python

    script = Path(axe_playwright_python.__file__).with_name("axe.min.js").read_text()
    page.evaluate(script)
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]][:3]} for v in results["violations"]]


def group_move_step(page: Any) -> tuple[int, str, str]:
    """The first step of the log that moves a group (a card with cards on it): step, card, column."""
    found = page.evaluate("""async () => {
        const url = document.querySelector('[data-record]').dataset.frames;
        const data = await (await fetch(url)).json();
        for (let i = 1; i < data.frames.length; i++) {
            const f = data.frames[i];
            if (!f.card || !f.to.startsWith('T')) continue;
            const column = f.board.columns[Number(f.to.slice(1)) - 1].up;
            if (column.indexOf(f.card) < column.length - 1) return [i, f.card, f.to];
        }
        return null;
    }""")
    assert found, "the record has no group move"
    return tuple(found)


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("lang", LANGS)
def test_the_viewers_points_in_each_language_and_width(open_page, live_server, expect, screenshot, lang, width):
    record = live_server.records["timed"]
    page = open_page(with_lang(f"/records/{record['id']}", lang), width=width, height=WIDTHS[width],
                     permissions=["clipboard-read", "clipboard-write"])
    viewer_ready(page, expect)
    total = record["actions"]

    # the moved card, and the cards it carried, glow (not the column's top card)
    step, card, column = group_move_step(page)
    page.locator(f"[data-log] [data-step='{step}']").click()
    expect(page.locator("[data-counter=step]")).to_have_text(f"{step} / {total}")
    cards = page.locator(f"[data-board] [data-pile='{column}'] .card").evaluate_all(
        "ns => ns.map(n => [n.dataset.card || null, n.classList.contains('moved')])")
    codes = [code for code, _ in cards]
    assert [code for code, moved in cards if moved] == codes[codes.index(card):]
    assert len(codes) - codes.index(card) >= 2  # a group
    assert page.locator("[data-board] .card.moved").count() == len(codes) - codes.index(card)

    # each step shows the player's clock
    expect(page.locator("[data-counter=clock]")).to_have_text(clock_text(timed_times(total)[step - 1]))

    # Space plays and pauses from anywhere, also after clicking Forward (the focus is on it then)
    page.get_by_role("button", name=FORWARD[lang], exact=True).click()
    expect(page.locator("[data-counter=step]")).to_have_text(f"{step + 1} / {total}")
    page.locator("[data-speed]").select_option("150")
    page.get_by_role("button", name=FORWARD[lang], exact=True).focus()
    page.keyboard.press(" ")
    expect(page.locator("[data-play]")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function("n => Number(document.querySelector('[data-counter=step]').textContent.split(' / ')[0]) >= n",
                           arg=step + 4)
    page.keyboard.press(" ")
    expect(page.locator("[data-play]")).to_have_attribute("aria-pressed", "false")
    paused = counter(page)
    page.wait_for_timeout(500)
    assert counter(page) == paused
    expect(page.locator("[data-counter=clock]")).to_have_text(clock_text(timed_times(total)[paused - 1]))
    page.locator("main h1").click()  # Space with nothing in the viewer focused
    page.keyboard.press(" ")
    expect(page.locator("[data-play]")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press(" ")
    expect(page.locator("[data-play]")).to_have_attribute("aria-pressed", "false")

    # the wheel over the board steps, and the page does not scroll
    page.locator("[data-viewer] [data-slider]").fill("10")
    expect(page.locator("[data-counter=step]")).to_have_text(f"10 / {total}")
    page.locator("[data-board-holder]").scroll_into_view_if_needed()
    scrolled = page.evaluate("window.scrollY")
    page.locator("[data-board-holder]").hover()
    page.mouse.wheel(0, 100)
    expect(page.locator("[data-counter=step]")).to_have_text(f"11 / {total}")
    page.mouse.wheel(0, -100)
    page.mouse.wheel(0, -100)
    expect(page.locator("[data-counter=step]")).to_have_text(f"9 / {total}")
    assert page.evaluate("window.scrollY") == scrolled

    # "copy link at this step": the record's link with the step (and the language chosen)
    page.locator("[data-copy-step]").click()
    link = page.evaluate("navigator.clipboard.readText()")
    assert link == f"{live_server.url}/records/{record['id']}?lang={lang}&step=9"
    screenshot(page, f"viewer-points-{lang}-{width}")
    assert axe_violations(page) == []


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("lang", LANGS)
def test_the_record_pages_layout(open_page, live_server, expect, lang, width):
    record = live_server.records["timed"]
    height = WIDTHS[width]
    page = open_page(with_lang(f"/records/{record['id']}?step={record['actions']}", lang), width=width,
                     height=height)
    viewer_ready(page, expect)
    box = lambda selector: page.locator(selector).first.bounding_box()
    board, panel, log = box("[data-viewer] [data-board]"), box(".viewer-panel"), box("[data-log-panel]")
    result = box("[data-result]")
    assert result["y"] + result["height"] <= board["y"]  # the result comes before the board
    # the longest column (39 cards) fans as tight as a card's corner: the next card leaves each face-up
    # card's rank and suit whole, and covers the rest
    steps = page.locator("[data-board] .column .cards").evaluate_all("""ns => ns.map(n => {
        const up = [...n.querySelectorAll('.card:not(.back)')];
        return up.slice(1).map((card, i) => [up.length, card.getBoundingClientRect().top,
            ...['.rank', '.suit'].map(s => up[i].querySelector(s).getBoundingClientRect().bottom),
            up[i].getBoundingClientRect().height]);
    }).flat()""")
    assert max(count for count, *_ in steps) >= 30
    assert all(next_top >= max(rank, suit) - 0.5 for _, next_top, rank, suit, _ in steps), steps
    assert all(next_top - max(rank, suit) < card / 4 for count, next_top, rank, suit, card in steps if count >= 30)
    if width == 1366:
        # the board beside the log and controls; a column this long reaches below the fold, at the least
        # card size (below it the glyphs stop shrinking)
        assert board["x"] + board["width"] <= panel["x"] and board["x"] + board["width"] <= log["x"]
        assert log["y"] >= panel["y"] + panel["height"] - 1
        card_width = page.locator("[data-board] .card").first.bounding_box()["width"]
        assert abs(card_width - 2.8 * 16) < 1, card_width
    if width == 390:
        assert result["y"] + result["height"] <= height / 2  # the result in the first screen's upper half
        assert board["y"] + board["height"] <= panel["y"]  # the board, then the controls
    assert axe_violations(page) == []


@pytest.mark.parametrize("lang", LANGS)
def test_on_a_desktop_a_board_of_usual_columns_stays_above_the_fold(open_page, live_server, expect, lang):
    for record in (live_server.records["ann"], live_server.records["pekka"]):
        page = open_page(with_lang(f"/records/{record['id']}?step={record['actions']}", lang), width=1366, height=900)
        viewer_ready(page, expect)
        board = page.locator("[data-viewer] [data-board]").bounding_box()
        assert board["y"] + board["height"] <= 900, (record["code"], board)
        page.context.close()


def too_small(page: Any) -> list[str]:
    """The controls of the page (in its main part) under 44 px tall."""
    return page.evaluate("""(least) => {
        const out = [];
        const controls = 'main button, main select, main input, main textarea, [data-log] .action, .log-page';
        for (const node of document.querySelectorAll(controls)) {
            const box = node.getBoundingClientRect();
            if (!box.width || node.closest('[hidden]') || node.type === 'hidden') continue;
            if (box.height < least - 0.5) out.push(`${node.tagName}.${node.className} ${node.textContent.trim().slice(0, 20)}: ${box.height}`);
        }
        return out.slice(0, 8);
    }""", TARGET)


@pytest.mark.parametrize("lang", LANGS)
def test_on_a_phone_every_control_of_the_record_and_check_pages_is_44_px_tall(open_page, live_server, expect,
                                                                              lang):
    long = live_server.records["longest"]
    for path in (f"/records/{live_server.records['timed']['id']}?step=5", f"/records/{long['id']}?step=300",
                 ILLEGAL_CHECK, "/check"):
        page = open_page(with_lang(path, lang), width=390, height=844,
                         permissions=["clipboard-read", "clipboard-write"])
        if "step" in path or "moves" in path:
            viewer_ready(page, expect)
        assert too_small(page) == [], (path, lang)
        page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_axe_finds_nothing_on_the_check_pages_and_a_long_record(open_page, live_server, expect, lang):
    for path in (ILLEGAL_CHECK, "/check", f"/records/{live_server.records['longest']['id']}?step=2500"):
        page = open_page(with_lang(path, lang))
        if "step" in path or "moves" in path:
            viewer_ready(page, expect)
        assert axe_violations(page) == [], (path, lang)
        page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_a_record_opens_at_the_finished_game_and_step_0_at_the_deal(open_page, live_server, expect, lang):
    record = live_server.records["ann"]
    total, path = record["actions"], f"/records/{record['id']}"
    page = open_page(with_lang(path, lang))
    frames = page.request.get(f"{path}/frames.json?step={total}").json()
    last = frames["frames"][total - frames["start"]]
    viewer_ready(page, expect)  # the script has its frames: the address is still the page's own …
    expect(page.locator("[data-counter=step]")).to_have_text(f"{total} / {total}")
    expect(page).to_have_url(re.compile(rf"{path}\?lang={lang}$"))
    assert page.locator("[data-board] .column").evaluate_all(
        "ns => ns.map(n => n.getAttribute('aria-label'))") == board_labels(lang, last["board"])["columns"]
    expect(page.locator("[data-counter=score]")).to_have_text(str(record["score"]))
    expect(page.locator("[data-log] [aria-current=step]")).to_have_attribute("data-step", str(total))
    expect(page.get_by_role("button", name=FORWARD[lang])).to_be_disabled()  # … at the end of the game
    page.keyboard.press("ArrowLeft")
    expect(page).to_have_url(re.compile(rf"[?&]step={total - 1}$"))
    page.keyboard.press("Home")  # the deal has an address of its own: ?step=0
    expect(page).to_have_url(re.compile(r"[?&]step=0$"))
    expect(page.locator("[data-counter=step]")).to_have_text(f"0 / {total}")
    page.reload()
    viewer_ready(page, expect)
    expect(page.locator("[data-counter=step]")).to_have_text(f"0 / {total}")  # ?step=0 opens the deal
    page.keyboard.press("End")  # back at the finished game: the plain address again
    expect(page).to_have_url(re.compile(rf"{path}\?lang={lang}$"))
    deal = open_page(with_lang(f"{path}?step=0", lang), java_script_enabled=False)  # drawn by the server
    expect(deal.locator("[data-counter=step]")).to_have_text(f"0 / {total}")
    expect(deal.locator("[data-log] [aria-current=step]")).to_have_count(0)


def test_a_log_of_5000_actions_steps_a_window_at_a_time(open_page, live_server, expect):
    record = live_server.records["longest"]
    page = open_page(f"/records/{record['id']}?step={LOG_PAGE}")
    viewer_ready(page, expect)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.evaluate("window.stillHere = true")
    expect(page.locator("[data-log-range]")).to_have_text(f"Actions 1–{LOG_PAGE} of 5000")
    page.get_by_role("button", name="Forward").click()  # into the next page of the log
    expect(page.locator("[data-counter=step]")).to_have_text(f"{LOG_PAGE + 1} / 5000")
    expect(page.locator("[data-log-range]")).to_have_text(f"Actions {LOG_PAGE + 1}–{2 * LOG_PAGE} of 5000")
    expect(page.locator("[data-log] [aria-current=step]")).to_have_attribute("data-step", str(LOG_PAGE + 1))
    assert page.locator("[data-log] [data-step]").count() == LOG_PAGE
    page.keyboard.press("End")
    expect(page.locator("[data-counter=step]")).to_have_text("5000 / 5000")
    expect(page.locator("[data-log-range]")).to_have_text("Actions 4801–5000 of 5000")
    expect(page).to_have_url(re.compile(rf"/records/{record['id']}$"))  # the finished game: the page's own address
    page.locator("[data-log-page=previous]").click()  # the page before, without reloading
    expect(page.locator("[data-counter=step]")).to_have_text("4800 / 5000")
    expect(page.locator("[data-log-range]")).to_have_text("Actions 4601–4800 of 5000")
    assert page.evaluate("window.stillHere") is True
    frames = [url for url in requests if "frames.json" in url]
    assert 1 <= len(frames) <= 5, frames  # a window now and then, never the whole log
    page.locator("[data-slider]").fill("2345")
    expect(page.locator("[data-log] [aria-current=step]")).to_have_attribute("data-step", "2345")
    expect(page.locator("[data-status]")).to_contain_text("Action 2345 of 5000")
    # without scripts, the links to the pages before and after are plain links
    plain = open_page(f"/records/{record['id']}?step=2345", java_script_enabled=False)
    plain.locator("[data-log-page=next]").click()
    expect(plain).to_have_url(re.compile(r"\?step=2401$"))
    expect(plain.locator("[data-log-range]")).to_have_text("Actions 2401–2600 of 5000")


def test_the_checker_steps_through_a_long_log_to_its_failing_action(open_page, expect):
    moves = "S U " * 150 + "T1>T2"
    page = open_page("/check")
    page.get_by_label("Game code").fill("FT1-N-AAAAAAB")
    page.get_by_label("Move log").fill(moves)
    page.get_by_role("button", name="Check", exact=True).click()
    viewer_ready(page, expect)
    expect(page.locator("[data-counter=step]")).to_have_text("300 / 300")
    expect(page.locator("[data-check-viewer] .action.illegal")).to_be_visible()
    page.keyboard.press("Home")
    expect(page.locator("[data-log-range]")).to_have_text(f"Actions 1–{LOG_PAGE} of 300")
    expect(page.locator("[data-check-viewer] .action.illegal")).to_be_hidden()
    page.evaluate("window.stillHere = true")
    page.locator("[data-log-page=next]").click()  # the form's button, here without posting it again
    expect(page.locator("[data-counter=step]")).to_have_text(f"{LOG_PAGE + 1} / 300")
    expect(page.locator("[data-check-viewer] .action.illegal")).to_be_visible()
    assert page.evaluate("window.stillHere") is True
