"""Challenges a person comes back for, as the server renders them (no JavaScript): each past
day's page with its final board, par, all winners tied first, the solution once the window has
closed and "your result" (``?player=``); the calendar; the countdowns; the deal and record pages
naming their challenge; the player page's paging, personal bests and streak calendar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from html_tree import parse
from sqlalchemy import select, update

from api.boards import upkeep
from api.challenges.windows import window
from api.platform.models import Challenge, Record
from engine import Game
from tests.engine.engine_helpers import find_win
from tests.play import play_greedy

WIN_CODE = "YU1-C-AAAAAAB"      # yesterday's Yukon classic daily challenge: ann and cid tie first, bob loses
LOST_CODE = "YU1-C-AAAAAAC"     # the day before: nobody won
TODAY_CODE = "YU1-C-AAAAAAD"    # today's, still running


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.get_data(as_text=True)[:300])
    return parse(response.get_data(as_text=True))


def rows(table):
    return [[td.text for td in row.find_all("td")] for row in table.find("tbody").find_all("tr")]


@pytest.fixture
def days(app, submit):
    """Yesterday's challenge won by ann and cid with the same game (a tie for first), lost by bob;
    the day before's played only by bob, who did not win; today's played by ann."""
    line = " ".join(str(action) for action in find_win(WIN_CODE))
    ann = submit("ann", WIN_CODE, line)
    bob = submit("bob", WIN_CODE, " ".join(play_greedy(WIN_CODE, 10)))
    lost = submit("bob", LOST_CODE, " ".join(play_greedy(LOST_CODE, 10)))
    today = submit("ann", TODAY_CODE, " ".join(play_greedy(TODAY_CODE, 12)))
    now = datetime.now(UTC)
    yesterday = window("daily", now)[0] - timedelta(days=1)
    with app.extensions["api.platform.db"].sessions() as session:
        stored = session.get(Record, ann["id"])
        tie = Record(**{column.key: getattr(stored, column.key) for column in Record.__table__.columns
                        if column.key not in ("id", "player", "player_id", "log_hash")},
                     player="cid", log_hash="0" * 64)  # an import: the same result by someone else
        session.add(tie)
        session.flush()
        moved = {ann["id"]: yesterday + timedelta(hours=10), tie.id: yesterday + timedelta(hours=11),
                 bob["id"]: yesterday + timedelta(hours=12), lost["id"]: yesterday - timedelta(hours=12)}
        for record_id, at in moved.items():
            session.execute(update(Record).where(Record.id == record_id).values(received_at=at))
        session.add_all([
            Challenge(variant="yukon-classic", kind="daily", starts_at=yesterday, ends_at=yesterday + timedelta(days=1),
                      code=WIN_CODE, candidate=0, attempts_required=False, par=ann["moves"] - 2, par_line=line, prepared_at=yesterday),
            Challenge(variant="yukon-classic", kind="daily", starts_at=yesterday - timedelta(days=1),
                      ends_at=yesterday, code=LOST_CODE, candidate=0, attempts_required=False, par=50, par_line="T1>T2",
                      prepared_at=yesterday),
            Challenge(variant="yukon-classic", kind="daily", starts_at=yesterday + timedelta(days=1),
                      ends_at=yesterday + timedelta(days=2), code=TODAY_CODE, candidate=0, attempts_required=False, par=60,
                      par_line="SECRET-LINE", prepared_at=yesterday),
            Challenge(variant="yukon-classic", kind="weekly", starts_at=window("weekly", now)[0],
                      ends_at=window("weekly", now)[1], code="YU1-C-AAAAAAE", candidate=0, attempts_required=False, par=70, par_line="",
                      prepared_at=yesterday)])
        session.flush()
        upkeep.rebuild_all(session.connection())
        session.commit()
        tie_id = tie.id
        won_id, today_id = (session.scalar(select(Challenge.id).where(Challenge.code == code))
                            for code in (WIN_CODE, TODAY_CODE))
    return {"ann": ann, "bob": bob, "tie": tie_id, "yesterday": yesterday.date(), "today": today,
            "won_id": won_id, "today_id": today_id}


def test_a_past_day_has_its_final_board_all_winners_tied_first_par_and_the_solution(client, days):
    day = days["yesterday"].isoformat()
    document = get(client, f"/challenges/yukon-classic/daily/{day}")
    assert document.find("h1").text == f"Daily challenge of {day}"
    winners = document.find("section", data_winners=True)
    assert winners.find("h2").text == "Winners"
    assert [li.find("a").text for li in winners.find_all("li")] == ["ann", "cid"]  # both, not the first row
    board = document.find("section", data_challenge_board=True)
    assert board.find("h2").text == "Final board"
    # Yukon: no earned column (every win earns 625); take-backs, moves, the difference from par and the time,
    # then the app's score
    assert [th.text for th in board.find("thead").find_all("th")] == ["#", "Player", "Take-backs", "Moves",
                                                                     "Against par", "Time", "Result", "Score"]
    moves = days["ann"]["moves"]
    assert rows(board) == [["1", "ann", "0", str(moves), "+2", "–", "★ won", str(days["ann"]["score"])],
                           ["1", "cid", "0", str(moves), "+2", "–", "★ won", str(days["ann"]["score"])],
                           ["3", "bob", "0", str(days["bob"]["moves"]), "–", "–",
                            f"not won, {days['bob']['score']} points", str(days["bob"]["score"])]]
    solution = document.find("section", data_solution=True)
    assert days["ann"]["canonical"] in solution.find("code").text  # published: the window has closed
    assert days["ann"]["canonical"] in solution.find("details").find("code").text  # the notation, folded away
    assert solution.find("a").attrs["href"] == f"/challenges/{days['won_id']}/solution"
    assert document.find_all("time", data_countdown=True) == []


def test_a_day_nobody_won_names_no_winner(client, days):
    day = (days["yesterday"] - timedelta(days=1)).isoformat()
    document = get(client, f"/challenges/yukon-classic/daily/{day}?lang=fi")
    winners = document.find("section", data_winners=True)
    assert winners.find_all("li") == [] and winners.find("p").text == "Kukaan ei voittanut tätä haastetta."
    assert rows(document.find("section", data_challenge_board=True))[0][:2] == ["1", "bob"]
    past = get(client, "/challenges/yukon-classic").find("table", class_="past-challenges")
    assert [row[2] for row in rows(past)] == ["ann, cid", "Nobody won"]


def test_a_running_challenge_hides_its_solution_and_counts_down(client, days):
    today = days["yesterday"] + timedelta(days=1)
    document = get(client, f"/challenges/yukon-classic/daily/{today.isoformat()}?lang=ko")
    assert "SECRET-LINE" not in document.text
    assert document.find("section", data_solution=True).find("p").text == "풀이는 도전이 끝나면 공개됩니다."
    assert document.find("section", data_winners=True).find("h2").text == "선두"  # leading, not winners yet
    clock = document.find("time", data_countdown=True)
    assert clock.text.startswith("다음 도전까지 ") and clock.attrs["datetime"].startswith(
        (today + timedelta(days=1)).isoformat())
    # the variant page: a date on each panel, weekly time left in days and hours
    page = get(client, "/challenges/yukon-classic")
    weekly = page.find("section", data_challenge="weekly")
    assert weekly.find("p", class_="challenge-date").text.startswith("Weekly challenge from ")
    end = window("weekly", datetime.now(UTC))[1]
    left = end - datetime.now(UTC)
    expected = (f"{left.days} d " if left.days else "") + f"{left.seconds // 3600} h"
    assert weekly.find("time", data_countdown=True).text.startswith(f"Next challenge in {expected}")


def test_your_result_comes_from_the_player_parameter_and_its_form(client, days):
    url = f"/challenges/yukon-classic/daily/{days['yesterday'].isoformat()}"
    mine = get(client, f"{url}?player=BOB").find("section", data_your_result=True)  # any spelling of the name
    assert mine.find("p").text.startswith(f"bob: rank 3 of 3, {days['bob']['moves']} moves.")
    assert mine.find("a").attrs["href"] == f"/records/{days['bob']['id']}"
    form = mine.find("form")
    assert form.attrs["method"] == "get" and form.find("input", name="player").attrs["value"] == "bob"
    other = get(client, f"{url}?player=zed").find("section", data_your_result=True)
    assert other.find("p").text == "zed has no record on this challenge."


def test_the_calendar_links_each_day_and_week_with_a_page(client, days):
    yesterday = days["yesterday"]
    for day in (yesterday, yesterday - timedelta(days=1)):  # each in its own month's calendar: they may differ
        document = get(client, f"/challenges/yukon-classic?month={day.strftime('%Y-%m')}")
        calendar = document.find("section", data_calendar=True)
        links = {a.attrs["href"] for a in calendar.find("table").find_all("a")}
        assert f"/challenges/yukon-classic/daily/{day.isoformat()}" in links
        assert all("/daily/" in link or "/weekly/" in link for link in links)
        assert calendar.find("a", rel="prev") is not None
    for month in ("0001-01", "9999-12", "2026-99", "x"):  # out of range or not a month: still a calendar
        assert get(client, f"/challenges/yukon-classic?month={month}").find("section", data_calendar=True)
    # a week's page by any day of it: its Monday's
    monday = window("weekly", datetime.now(UTC))[0].date()
    response = client.get(f"/challenges/yukon-classic/weekly/{(monday + timedelta(days=3)).isoformat()}")
    assert response.status_code == 308 and response.headers["Location"].endswith(f"/weekly/{monday.isoformat()}")
    for bad in ("/challenges/yukon-classic/monthly/2026-01-01", "/challenges/yukon-classic/daily/2026-13-01",
                f"/challenges/yukon-classic/daily/{(yesterday + timedelta(days=5)).isoformat()}",
                "/challenges/poker/daily/2026-01-01"):
        assert client.get(bad).status_code == 404, bad


def test_deal_and_record_pages_say_which_challenge_with_the_rank(client, days):
    day = days["yesterday"].isoformat()
    note = get(client, f"/deals/{WIN_CODE}").find("ul", data_deal_challenges=True)
    assert note.find("a").attrs["href"] == f"/challenges/yukon-classic/daily/{day}"
    assert note.find("a").text == f"Daily challenge of {day}"
    record = get(client, f"/records/{days['bob']['id']}").find("p", data_record_challenge=True)
    assert "rank 3 of 3" in record.text
    assert record.find("a").attrs["href"] == f"/challenges/yukon-classic/daily/{day}?player=bob"
    finnish = get(client, f"/records/{days['ann']['id']}?lang=fi").find("p", data_record_challenge=True)
    assert "sija 1/3" in finnish.text


def test_the_player_page_pages_records_with_dates_bests_streaks_and_stats_first(client, submit, days, app):
    for n in range(21):
        submit("ann", "FT1-N-AAAAAAB", " ".join(play_greedy("FT1-N-AAAAAAB", n + 1)))
    document = get(client, "/players/ann")
    text = document.text
    assert text.index("Statistics") < text.index("Personal bests") < text.index("To appeal")
    table = document.find("table", class_="player-records")
    first = rows(table)
    assert len(first) == 20 and first[0][2]  # a date on each row
    older = document.find("a", rel="next")
    assert older.attrs["href"].startswith("/players/ann?before=")
    second = get(client, older.attrs["href"])
    rest = rows(second.find("table", class_="player-records"))
    assert {row[0] for row in rest}.isdisjoint(row[0] for row in first)
    with app.extensions["api.platform.db"].sessions() as session:
        total = len(session.scalars(select(Record.id).where(Record.player == "ann")).all())
    assert len(first) + len(rest) == total == 23
    bests = rows(document.find("section", data_bests=True))
    assert [row[0].split(" ★")[0] for row in bests] == ["Yukon, classic rules", "Forty Thieves"]
    assert bests[0][4] == "1 of 3"  # ann's won game ranks first (with cid) of ann, bob and cid
    # the streak calendar: yesterday won
    cell = [td for td in document.find("section", data_streaks=True).find_all("td")
            if td.attrs.get("title", "").startswith(days["yesterday"].isoformat())]
    assert cell and cell[0].attrs["data-state"] == "won"
    # averages are whole moves
    stats = rows(document.find("section", class_="player-stats"))
    assert all("." not in row[5] for row in stats)


def test_the_streak_calendar_says_won_played_missed_and_leaves_today_open(client, days):
    def states(name):
        cells = get(client, f"/players/{name}").find("section", data_streaks=True).find_all("td")
        return {cell.attrs["title"].split(":")[0]: cell.attrs["data-state"] for cell in cells}

    yesterday = days["yesterday"]
    bob = states("bob")
    assert bob[(yesterday - timedelta(days=1)).isoformat()] == "played"  # the day nobody won
    assert bob[yesterday.isoformat()] == "played"
    assert bob[(yesterday + timedelta(days=1)).isoformat()] == "future"  # today: still open, not missed
    assert bob[(yesterday - timedelta(days=2)).isoformat()] == "none"  # no challenge that day
    ann = states("ann")
    assert ann[yesterday.isoformat()] == "won" and ann[(yesterday - timedelta(days=1)).isoformat()] == "missed"
    assert ann[(yesterday + timedelta(days=1)).isoformat()] == "played"  # today's, played and not won yet


def test_boards_and_the_record_header_show_the_time_the_server_measured_first(client, days, app):
    with app.extensions["api.platform.db"].sessions() as session:
        session.execute(update(Record).where(Record.id == days["ann"]["id"]).values(elapsed_ms=999_000,
                                                                                    server_elapsed_ms=447_400))
        session.execute(update(Record).where(Record.id == days["bob"]["id"]).values(elapsed_ms=61_000))
        session.commit()
    board = get(client, f"/challenges/yukon-classic/daily/{days['yesterday'].isoformat()}").find(
        "section", data_challenge_board=True)
    assert [row[5] for row in rows(board)] == ["7:27", "–", "1:01"]  # the attempt's server time, else the client's
    assert get(client, f"/records/{days['ann']['id']}").find("p", data_result=True).text.startswith("★ won in 7:27")
    assert "Time 1:01" in get(client, f"/records/{days['bob']['id']}").find("p", data_result=True).text
    assert "voitettu ajassa 7:27" in get(client, f"/records/{days['ann']['id']}?lang=fi").find("p", data_result=True).text


def test_a_clean_record_has_no_decisions_block_and_a_hidden_win_is_not_gold_and_says_why(client, days, app):
    from api.fairplay import judging as fairplay

    document = get(client, f"/records/{days['ann']['id']}")
    assert document.find_all("section", data_decisions=True) == []  # nothing decided, nothing flagged
    assert document.find("p", data_result=True).find_all("span", class_="won-mark") != []
    with app.extensions["api.platform.db"].sessions() as session:
        fairplay.decide(session, session.get(Record, days["ann"]["id"]), "hidden", "admin-key", "a shared account")
        session.commit()
    document = get(client, f"/records/{days['ann']['id']}")
    result = document.find("p", data_result=True)
    assert result.find_all("span", class_="won-mark") == [] and result.text.startswith("won")
    assert "Reason: a shared account" in document.find("p", data_hidden_reason=True).text
    assert document.find_all("section", data_decisions=True) != []  # the decision and its history


def test_the_streak_calendar_tells_days_by_shape_links_them_for_the_player_and_marks_today(client, days):
    section = get(client, "/players/ann").find("section", data_streaks=True)
    children = [child for child in section.children if not isinstance(child, str)]
    assert [child.tag for child in children][:3] == ["h2", "ul", "h3"]  # the legend before the calendars
    key = section.find("ul", data_streak_key=True).find_all("li")
    assert [li.text.strip() for li in key] == ["won", "played, not won", "missed", "today"]
    assert [li.find("span").attrs["class"] for li in key] == [  # the shapes: pages.css draws them
        "swatch day-won", "swatch day-played", "swatch day-missed", "swatch day-today"]
    cells = {cell.attrs["title"].split(":")[0]: cell for cell in section.find_all("td")}
    yesterday, today = days["yesterday"], days["yesterday"] + timedelta(days=1)
    won, missed, played = (cells[day.isoformat()] for day in (yesterday, yesterday - timedelta(days=1), today))
    assert won.find("a").find("span", aria_hidden="true").text == "★"
    assert played.find("a").find("span", aria_hidden="true").text == "•"
    assert won.find("a").attrs["href"] == f"/challenges/yukon-classic/daily/{yesterday.isoformat()}?player=ann"
    assert missed.find("a").attrs["href"].endswith("?player=ann")  # a missed day links its page too
    assert "day-today" in played.attrs["class"].split() and "today" in played.attrs["title"]
    assert [cell for cell in cells.values() if "day-today" in cell.attrs["class"].split()] == [played]
    assert cells[(yesterday - timedelta(days=2)).isoformat()].find_all("a") == []  # no challenge: no link


def test_the_today_strip_shows_each_games_challenges_your_place_and_a_streak_at_risk(client, days):
    def strip(url):
        section = get(client, url).find("section", data_today=True)
        return {game.attrs["data-today-variant"]: game for game in section.find_all("li", data_today_variant=True)}

    games = strip("/?player=ann")
    assert list(games) == ["yukon-classic", "yukon-relaxed", "forty-thieves"]
    daily, weekly = games["yukon-classic"].find_all("li", data_today_kind=True)
    assert "Par: 60 moves" in daily.text and " left" in daily.text  # today's daily challenge (par 60)
    assert daily.find("a").attrs["href"] == \
        f"/challenges/yukon-classic/daily/{(days['yesterday'] + timedelta(days=1)).isoformat()}?player=ann"
    assert daily.find("span", data_today_status=True).text == "played, rank 1 of 1"  # played, not won yet
    assert weekly.find("span", data_today_status=True).text == "not played yet"
    # ann won yesterday's daily challenge: a streak of 1 that today's, not won yet, would end
    assert "Your 1-day streak is at risk" in games["yukon-classic"].find("p", data_streak_risk=True).text
    assert "being prepared" in games["forty-thieves"].text
    bob = strip("/challenges/yukon-classic?player=bob")["yukon-classic"]
    assert bob.find_all("p", data_streak_risk=True) == []  # bob won nothing: no streak to lose
    assert bob.find_all("li", data_today_kind=True)[0].find("span", data_today_status=True).text == "not played yet"
    anonymous = strip("/")["yukon-classic"]
    assert anonymous.find_all("span", data_today_status=True) == []
    assert not [a for a in anonymous.find_all("a") if "player=" in a.attrs["href"]]
    assert "Sinun 1 päivän" not in get(client, "/?player=ann&lang=fi").text
    assert "1 päivän voittoputkesi on vaarassa" in get(client, "/?player=ann&lang=fi").text


LONG_CODE = "FT1-N-AAAAAAB"


def board_of(game: Game) -> list[str]:
    return str(game.position).split()[:5]


def there_and_back(game: Game) -> tuple[str, str]:
    """Two actions that lead back to the position ``game`` is in."""
    start = board_of(game)
    for there in game.legal_actions():
        game.push(there)
        for back in game.legal_actions():
            game.push(back)
            returned = board_of(game) == start
            game.undo()
            if returned:
                game.undo()
                return str(there), str(back)
        game.undo()
    raise AssertionError("no way there and back")


def long_line() -> list[str]:
    """A legal Forty Thieves line of more than 4 KB: some greedy play, then a card from its
    foundation to a column and back, many times over (as long as the longest solvers' lines)."""
    game = Game.from_code(LONG_CODE)
    line = [str(game.push_text(text)) for text in play_greedy(LONG_CODE, 51)]
    return line + list(there_and_back(game)) * 300


@pytest.fixture
def long_solution(app):
    """A Forty Thieves daily challenge closed the day before yesterday, whose solution is a long line."""
    line = long_line()
    start = window("daily", datetime.now(UTC))[0] - timedelta(days=2)
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = Challenge(variant="forty-thieves", kind="daily", starts_at=start, ends_at=start + timedelta(days=1),
                              code=LONG_CODE, candidate=0, attempts_required=False, par=len(line),
                              par_line=" ".join(line), prepared_at=start)
        session.add(challenge)
        session.commit()
        return {"id": challenge.id, "line": line, "day": start.date().isoformat()}


def test_a_closed_challenges_long_solution_is_a_page_with_the_viewer(client, long_solution):
    line = long_solution["line"]
    assert len(" ".join(line)) > 4096  # too long for a GET of the whole line
    day = get(client, f"/challenges/forty-thieves/daily/{long_solution['day']}?lang=fi")
    link = day.find("section", data_solution=True).find("a").attrs["href"]
    assert link == f"/challenges/{long_solution['id']}/solution?lang=fi" and len(link) < 100
    document = get(client, link)
    assert document.find("h1").text == f"Ratkaisu: {day.find('h1').text}"
    viewer = document.find("section", data_viewer=True)
    assert viewer.attrs["data-total"] == str(len(line)) and viewer.attrs["data-step"] == "0"
    holder = document.find("div", data_record=True)
    notation = document.find("details", data_notation=True)
    assert notation.find("code").text == " ".join(line) and "open" not in notation.attrs  # collapsed
    # a later step by its URL, and the frames the script loads, one window at a time
    later = get(client, f"/challenges/{long_solution['id']}/solution?step=600")
    assert later.find("section", data_viewer=True).attrs["data-step"] == "600"
    frames = client.get(holder.attrs["data-frames"].replace("?lang=fi", "") + "?step=600")
    assert frames.status_code == 200
    data = frames.get_json()
    assert data["error"] is None and data["total"] == len(line)
    assert data["start"] <= 600 < data["start"] + len(data["frames"])


def test_a_running_challenges_solution_is_a_404_that_discloses_nothing(client, days):
    running, missing = (client.get(f"/challenges/{number}/solution") for number in (days["today_id"], 999999))
    assert running.status_code == missing.status_code == 404
    pages = [parse(answer.get_data(as_text=True)) for answer in (running, missing)]
    assert pages[0].find("main").text == pages[1].find("main").text  # not even that it exists
    assert "SECRET-LINE" not in running.get_data(as_text=True) and TODAY_CODE not in running.get_data(as_text=True)
    frames = client.get(f"/challenges/{days['today_id']}/solution/frames.json")
    assert frames.status_code == 404 and "SECRET" not in frames.get_data(as_text=True)
