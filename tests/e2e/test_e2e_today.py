"""The returning player's day in a real browser (issue 44), at phone and desktop widths in en/ko/fi:
today's challenge played through the API as an attempt, then the player's record while the window runs,
a spoiler-safe page (result, rank, time, when the replay unlocks; no deal, board or log), reached from
the running board and from the player's own link, then the challenge page remembering the name (its links
keeping it) until "Forget my name"; no request on the way answers 4xx or 5xx, and axe finds
no violation and no contrast it cannot judge.

Today's Yukon relaxed challenge is made one with attempts (its deal secret) for the test's length, and put
back afterwards; the attempt's record stays (on a deal no other browser test ranks by)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.test_e2e_a11y import axe
from tests.play import play_greedy

CODE = "YU1-R-AAAAAB7"


@pytest.fixture(scope="module")
def attempt_record(live_server: Any) -> Iterator[dict[str, Any]]:
    """A record of today's Yukon relaxed challenge, played by "sami" as an attempt while its deal is secret."""
    from datetime import UTC, datetime

    from sqlalchemy import select

    from api.challenges.windows import window
    from api.platform.models import Challenge

    app = live_server.app
    start = window("daily", datetime.now(UTC))[0]

    def secret(flag: bool) -> int:
        with app.extensions["api.platform.db"].sessions() as session:
            challenge = session.scalars(select(Challenge).where(
                Challenge.variant == "yukon-relaxed", Challenge.kind == "daily", Challenge.starts_at == start)).one()
            challenge.attempts_required = flag
            session.commit()
            return challenge.id

    challenge_id = secret(True)
    try:
        client = app.test_client()
        token = client.post("/api/v1/players", json={"name": "sami"}).get_json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        started = client.post(f"/api/v1/challenges/{challenge_id}/attempts", headers=headers)
        assert started.status_code == 201, started.get_data(as_text=True)
        response = client.post("/api/v1/records", headers=headers, json={
            "code": CODE, "attempt": started.get_json()["attempt"], "moves": " ".join(play_greedy(CODE, 16))})
        assert response.status_code == 201, response.get_data(as_text=True)
        yield response.get_json()
    finally:
        secret(False)


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
    expect(page.locator("[data-unlocks] .nowrap")).to_contain_text("UTC")
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
