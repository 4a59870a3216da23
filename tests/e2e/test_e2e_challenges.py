"""Challenges, decisions and player pages in a real browser, in English, Korean and Finnish at
phone, tablet and desktop widths: the calendar leads to a past day's page (its board, no winner
on a day nobody won, the solution, "your result" by its form), the countdowns go on by script,
Yukon boards show moves and the difference from par, deal and record pages name their challenge,
a record shows its decisions, and a player page its statistics first, bests, streaks and pages."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest

from tests.e2e.e2e_helpers import LONG_NAME
from tests.e2e.test_e2e_layout import LANGS, OVERFLOW, WIDTHS

CASES = [(lang, width) for lang in LANGS for width in sorted(WIDTHS)]
TEXTS = {
    "en": {"nobody": "Nobody won this challenge.", "winners": "Winners", "rank": "rank 1 of 1",
           "review": "In review", "left": "Next challenge in"},
    "ko": {"nobody": "이 도전에서 승리한 사람이 없습니다.", "winners": "우승자", "rank": "1명 중 1위",
           "review": "검토 중", "left": "다음 도전까지"},
    "fi": {"nobody": "Kukaan ei voittanut tätä haastetta.", "winners": "Voittajat", "rank": "sija 1/1",
           "review": "Tarkastettavana", "left": "Seuraava haaste"},
}


def fits(page, what):
    assert page.evaluate(OVERFLOW) == [], what


@pytest.mark.parametrize("lang, width", CASES)
def test_the_calendar_leads_to_a_past_days_page_with_its_board_and_your_result(open_page, live_server, expect,
                                                                                lang, width):
    page = open_page(f"/challenges/forty-thieves?lang={lang}", width=width, height=WIDTHS[width])
    fits(page, "challenge page")
    day = live_server.yesterday
    if not page.locator(f"[data-calendar] a[href*='/daily/{day}']").count():  # yesterday was last month
        page.locator("[data-calendar] a[rel=prev]").click()
    page.locator(f"[data-calendar] a[href*='/daily/{day}']").click()
    expect(page).to_have_url(re.compile(rf"/challenges/forty-thieves/daily/{day}\?lang={lang}$"))
    fits(page, "day page")
    expect(page.locator("[data-winners] h2")).to_have_text(TEXTS[lang]["winners"])
    expect(page.locator("[data-winners] p")).to_have_text(TEXTS[lang]["nobody"])  # never a "winner" who lost
    expect(page.locator("[data-challenge-board] td.player")).to_have_text(["Väinö Mäkinen-Virtanen"])
    expect(page.locator("[data-solution] p")).to_contain_text("60")  # the window has closed: published
    expect(page.locator("time[data-countdown]")).to_have_count(0)
    page.locator("[data-your-result] input[name=player]").fill("väinö mäkinen-virtanen")
    page.locator("[data-your-result] button[type=submit]").click()
    expect(page.locator("[data-your-result] p").first).to_contain_text("Väinö Mäkinen-Virtanen")
    expect(page.locator("[data-your-result] p").first).to_contain_text(
        {"en": "rank 1 of 1", "ko": "1명 중 1위", "fi": "sija 1/1"}[lang])
    assert "player=" in page.url


@pytest.mark.parametrize("lang, width", CASES)
def test_countdowns_go_on_by_script(open_page, lang, width):
    page = open_page(f"/challenges/forty-thieves?lang={lang}", width=width, height=WIDTHS[width])
    weekly = page.locator("[data-challenge=weekly] time[data-countdown]")
    end = datetime.fromisoformat(weekly.get_attribute("datetime"))
    assert weekly.inner_text().startswith(TEXTS[lang]["left"])
    # five minutes before the week ends, then past its end
    page.clock.install(time=end - timedelta(minutes=5, seconds=30))
    page.reload()
    clock = page.locator("[data-challenge=weekly] time[data-countdown]")
    assert re.search(r"\b0\D+5\D", clock.inner_text()), clock.inner_text()  # "0 h 5 min", "0시간 5분", "0 t 5 min"
    page.clock.run_for(6 * 60 * 1000)
    assert clock.inner_text() == {"en": "The next challenge is ready: reload the page.",
                                  "ko": "다음 도전이 준비되었습니다. 페이지를 새로 고치세요.",
                                  "fi": "Seuraava haaste on valmis: lataa sivu uudelleen."}[lang]
    daily = page.locator("[data-challenge=daily] time[data-countdown]")
    assert daily.inner_text() == clock.inner_text()  # the day ends no later than the week


@pytest.mark.parametrize("lang, width", CASES)
def test_yukon_boards_show_moves_and_par_and_pages_name_their_challenge(open_page, live_server, expect, lang,
                                                                         width):
    page = open_page(f"/challenges/yukon-classic?lang={lang}", width=width, height=WIDTHS[width])
    board = page.locator("[data-challenge=daily] table")
    expect(board.locator("td.moves")).to_have_count(1)
    expect(board.locator("td.par-diff")).to_have_text(["–"])  # not won: no difference from par
    expect(board.locator("td.takebacks")).to_have_text(["0"])
    expect(board.locator("td.time")).to_have_count(1)  # a challenge board shows the time played
    expect(board.locator("td.earned")).to_have_count(0)  # Yukon: the score does not tell the points earned
    expect(board.locator("td.score")).to_have_count(1)  # the app's score, shown beside the ranking
    # the deal of today's Forty Thieves challenge, and a record played in it
    page = open_page(f"/deals/FT1-N-AAAAAAB?lang={lang}", width=width, height=WIDTHS[width])
    note = page.locator("[data-deal-challenges] a")
    expect(note).to_have_count(1)
    assert f"/challenges/forty-thieves/daily/{datetime.now(UTC).date().isoformat()}" in note.get_attribute("href")
    page = open_page(f"/records/{live_server.records['pekka']['id']}?lang={lang}", width=width,
                     height=WIDTHS[width])
    expect(page.locator("[data-record-challenge]")).to_contain_text(TEXTS[lang]["rank"])
    fits(page, "record page")


@pytest.mark.parametrize("lang, width", CASES)
def test_a_record_shows_its_status_history_and_flags_in_force(open_page, live_server, expect, lang, width):
    page = open_page(f"/records/{live_server.records['fast']['id']}?lang={lang}", width=width, height=WIDTHS[width])
    decisions = page.locator("[data-decisions]")
    expect(decisions.locator("[data-status-text]")).to_contain_text(TEXTS[lang]["review"])
    expect(decisions.locator("[data-flags-in-force] li")).to_have_count(1)
    expect(decisions.locator("[data-flags-cleared]")).to_have_count(0)
    result = page.locator(".summary").bounding_box()
    assert decisions.bounding_box()["y"] > result["y"]  # after the result
    fits(page, "record page")


@pytest.mark.parametrize("lang, width", CASES)
def test_the_player_page_puts_stats_first_with_bests_streaks_and_dated_records(open_page, live_server, expect,
                                                                                lang, width):
    page = open_page(f"/players/{quote('Väinö Mäkinen-Virtanen')}?lang={lang}", width=width, height=WIDTHS[width])
    stats, note = page.locator(".player-stats"), page.locator(".fair-play-note")
    assert stats.bounding_box()["y"] < note.bounding_box()["y"]  # the appeal text after the stats
    expect(page.locator("[data-bests] tbody tr")).to_have_count(1)
    expect(page.locator("[data-streaks] table.streak-calendar")).to_have_count(1)
    yesterday = page.locator(f"[data-streaks] td[title^='{live_server.yesterday}']")
    expect(yesterday).to_have_attribute("data-state", "played")  # played, not won
    dates = page.locator("table.player-records td.date time")
    expect(dates).to_have_count(2)
    assert all(re.search(r"\d", text) for text in dates.all_inner_texts())
    fits(page, "player page")
    page = open_page(f"/players/{quote(LONG_NAME)}?lang={lang}", width=width, height=WIDTHS[width])
    expect(page.locator("table.player-records tbody tr")).to_have_count(3)
    expect(page.locator("table.player-records .pager")).to_have_count(0)


def test_docs_screenshots_of_a_challenge_day_and_a_player(open_page, live_server, screenshot):
    phone = open_page(f"/challenges/forty-thieves/daily/{live_server.yesterday}?player=pekka", width=390,
                      height=844, is_mobile=True, has_touch=True)
    screenshot(phone, "challenge-day-phone", docs=True)
    desktop = open_page(f"/players/{quote('Väinö Mäkinen-Virtanen')}", width=1366, height=900)
    screenshot(desktop, "player-desktop", docs=True)
