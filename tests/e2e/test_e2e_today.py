"""The returning player's day in a real browser (issue 44), at phone and desktop widths in en/ko/fi:
today's challenge played through the API as an attempt, then the player's record while the window runs,
a spoiler-safe page (result, rank, time, when the replay unlocks; no deal, board or log), reached from
the running board and from the player's own link, then the challenge page remembering the name (its links
keeping it) until "Forget my name"; no request on the way answers 4xx or 5xx, and axe finds
no violation and no contrast it cannot judge. And the whole day in one walk, with no response of 4xx or 5xx:
home → today (the Today strip) → an attempt played through the API → the player's own spoiler-safe record →
its share card; the window closed (as on the next day) → the whole record and its share card → the calendars.

Today's Yukon relaxed challenge is made one with attempts (its deal secret) for the test's length, and put
back afterwards; the attempt's record stays (on a deal no other browser test ranks by)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.e2e_helpers import RELAXED_CODE as CODE
from tests.e2e.e2e_helpers import play_attempt, play_randomly, secret_relaxed_daily, todays_relaxed_daily
from tests.e2e.test_e2e_a11y import axe


@pytest.fixture(scope="module")
def relaxed_daily(live_server: Any) -> Iterator[int]:
    """Today's Yukon relaxed daily challenge made one with attempts (its deal secret) for this module; its id."""
    with secret_relaxed_daily(live_server.app) as challenge_id:
        yield challenge_id


@pytest.fixture(scope="module")
def attempt_record(live_server: Any, relaxed_daily: int) -> dict[str, Any]:
    """A record of today's Yukon relaxed challenge, played by "sami" as an attempt while its deal is secret."""
    return play_attempt(live_server.app, "sami", relaxed_daily)


@pytest.mark.parametrize("width", [390, 1366])
@pytest.mark.parametrize("lang", ["en", "ko", "fi"])
def test_your_game_while_the_window_runs_has_a_page_without_spoilers(open_page, live_server, attempt_record, expect,
                                                                    lang, width):
    failed: list[str] = []
    page = open_page(f"/challenges/yukon-relaxed?lang={lang}", width=width, height=900)
    page.on("response", lambda response: response.status >= 400 and failed.append(f"{response.status} {response.url}"))
    link = page.locator(f"[data-challenge=daily] a[data-record-link][href*='/records/{attempt_record['id']}']")
    expect(link).to_have_count(1)  # the running board links the record …
    link.click()
    expect(page.locator("[data-sealed-record]")).to_be_visible()  # … to its spoiler-safe page
    html = page.content()
    assert CODE not in html and "data-board" not in html and "data-log-panel" not in html
    expect(page.locator("[data-unlocks] [data-unlocks-at]")).to_contain_text("UTC")
    expect(page.locator("[data-unlocks] time.nowrap")).to_have_count(1)  # when, on one line
    violations, unjudged = axe(page)
    assert violations == [] and unjudged == [], (violations, unjudged)
    # the player's own way there: the day page's "your result" for ?player=
    page.locator(".subtitle a[href*='player=sami']").click()
    expect(page.locator("[data-your-result]")).to_contain_text("sami")
    # the browser remembers the name: the challenge page opened without it is sami's, its links keep it
    page.goto(f"/challenges/yukon-relaxed?lang={lang}")
    expect(page).to_have_url(re.compile(r"[?&]player=sami"))
    expect(page.locator("[data-visitor] p")).to_contain_text("sami")
    assert all("player=sami" in href for href in page.locator("[data-calendar] tbody a").evaluate_all(
        "ns => ns.map(n => n.href)"))
    forget = page.locator("[data-forget-player]")
    expect(forget).to_be_visible()
    assert forget.bounding_box()["height"] >= 44 - 0.5
    violations, unjudged = axe(page)
    assert violations == [] and unjudged == [], (violations, unjudged)
    forget.click()  # … until it is told to forget it
    expect(page).to_have_url(re.compile(rf"/challenges/yukon-relaxed\?lang={lang}$"))
    expect(page.locator("[data-visitor] p")).to_have_count(0)
    page.reload()
    expect(page).to_have_url(re.compile(rf"/challenges/yukon-relaxed\?lang={lang}$"))
    assert failed == [], failed
    page.context.close()


def test_docs_screenshots_of_today_and_a_record_while_its_window_runs(open_page, attempt_record, screenshot):
    phone = open_page("/?player=sami", width=390, height=844, is_mobile=True, has_touch=True)
    screenshot(phone, "today-phone", element=phone.locator("[data-today]"), docs=True)
    desktop = open_page(f"/records/{attempt_record['id']}", width=1366, height=900)
    screenshot(desktop, "record-running-desktop", docs=True)


#: the walk's window heights for its widths (a phone's, a desktop's)
WALK = {390: 844, 1366: 900}


def share_card(page: Any) -> None:
    """The page's share image (its og:image) loads in the page: a PNG of 1200×630, answered with 200."""
    card = page.locator("meta[property='og:image']").get_attribute("content")
    with page.expect_response(card) as answer:
        size = page.evaluate("""url => new Promise((loaded, failed) => {
            const image = new Image();
            image.onload = () => loaded([image.naturalWidth, image.naturalHeight]);
            image.onerror = () => failed(new Error(`no image at ${url}`));
            image.src = url; })""", card)
    assert answer.value.status == 200 and answer.value.headers["content-type"] == "image/png", card
    assert size == [1200, 630], size


def play_an_attempt(page: Any, name: str, challenge_id: int) -> dict[str, Any]:
    """Today's challenge played as the app plays it, through the API: the player's token, the attempt
    (the deal's code comes with it), then the log."""
    api = page.request
    current = api.get("/api/v1/challenges/daily?variant=yukon-relaxed")
    assert current.status == 200 and current.json()["id"] == challenge_id and current.json()["code"] is None
    player = api.post("/api/v1/players", data={"name": name})
    assert player.status == 201, player.text()
    headers = {"Authorization": f"Bearer {player.json()['token']}"}
    started = api.post(f"/api/v1/challenges/{challenge_id}/attempts", headers=headers)
    assert started.status == 201, started.text()
    code = started.json()["code"]
    stored = api.post("/api/v1/records", headers=headers, data={
        "code": code, "attempt": started.json()["attempt"], "moves": " ".join(play_randomly(code, 30, name))})
    assert stored.status == 201, stored.text()
    return stored.json()


@pytest.mark.parametrize("width", sorted(WALK))
@pytest.mark.parametrize("lang", ["en", "ko", "fi"])
def test_the_whole_day_from_home_to_the_next_days_calendar_answers_no_error(open_page, live_server, relaxed_daily,
                                                                           expect, lang, width):
    """home → today (the Today strip) → an attempt played through the API → the player's own record, spoiler-safe
    while the challenge runs → its share card; the window closes (as on the next day) → the whole record, its
    finished game and share card → the calendars to the day's page. Every response the page gets is below 400."""
    from datetime import UTC, datetime

    from api.challenges.windows import window

    name, today = f"walker{lang}{width}", datetime.now(UTC).date().isoformat()
    failed: list[str] = []
    page = open_page(f"/?lang={lang}", width=width, height=WALK[width])
    page.on("response", lambda response: response.status >= 400 and failed.append(f"{response.status} {response.url}"))
    page.goto(f"/?lang={lang}")
    page.locator("[data-today-variant=yukon-relaxed] [data-today-kind=daily] a").click()
    expect(page).to_have_url(re.compile(rf"/challenges/yukon-relaxed/daily/{today}\?lang={lang}$"))
    record = play_an_attempt(page, name, relaxed_daily)
    page.locator("#player-name").fill(name)  # "your result", by the day page's form
    page.locator("[data-your-result] button[type=submit]").click()
    page.locator(f"[data-your-result] a[href*='/records/{record['id']}']").click()
    expect(page.locator("[data-sealed-record]")).to_be_visible()  # the spoiler-safe page while the window runs
    assert CODE not in page.content() and page.locator("[data-viewer]").count() == 0
    share_card(page)  # the result alone, no board
    try:
        todays_relaxed_daily(live_server.app, ends_at=datetime.now(UTC))  # the window closes
        page.reload()
        expect(page.locator("[data-viewer] [data-slider]")).to_be_enabled()  # the whole record, at its finished game
        expect(page.locator("[data-counter=step]")).to_have_text(f"{record['actions']} / {record['actions']}")
        share_card(page)  # its final position
        page.locator("h1 a[href^='/players/']").click()  # the player's streak calendar: today played (★ or •)
        cell = page.locator(f"[data-streaks] td[data-day='{today}']").last
        expect(cell).to_have_attribute("data-state", "won" if record["won"] else "played")
        cell.locator("a").click()
        expect(page.locator("[data-challenge-board] tbody tr")).not_to_have_count(0)  # the day's final board
        page.locator(".subtitle a[href^='/challenges/yukon-relaxed?']").click()  # the challenge page's calendar
        expect(page).to_have_url(re.compile(rf"[?&]player={name}"))
        day = page.locator(f"[data-calendar] td[data-day='{today}']")  # the player's day, today outlined
        expect(day).to_have_attribute("data-state", "won" if record["won"] else "played")
        expect(day).to_have_class(re.compile(r"\bday-today\b"))
        day.locator("a").click()
        expect(page.locator("[data-your-result]")).to_contain_text(name)
    finally:
        todays_relaxed_daily(live_server.app, ends_at=window("daily", datetime.now(UTC))[1])
    assert failed == [], failed
    page.context.close()
