"""The home page's boards: each variant's challenge standings (the like-for-like board of
``GET /api/v1/standings``), rendered on the server, in English, Korean and Finnish; no
board there ranks records of different deals against each other by raw score."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from html_tree import parse

from api.boards import upkeep
from api.challenges.windows import window
from api.platform.models import Challenge
from tests.engine.engine_helpers import find_win
from tests.play import play_greedy

WIN_CODE = "YU1-C-AAAAAAB"  # today's daily challenge of Yukon classic, which the test search wins
WEEK_CODE = "YU1-C-AAAAAAC"  # this week's


def prepare(app, variant, kind, code):
    """A challenge of the current window, as the worker tier prepared it before attempts existed (its
    board counts every record received in the window: the standings of these tests need no attempts)."""
    start, end = window(kind, datetime.now(UTC))
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = Challenge(variant=variant, kind=kind, starts_at=start, ends_at=end, code=code, candidate=0,
                              par=100, par_line="", prepared_at=start, attempts_required=False)
        session.add(challenge)
        session.flush()
        upkeep.fill_challenge(session.connection(), challenge.id)
        session.commit()


def home(client, url="/"):
    response = client.get(url)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return parse(response.get_data(as_text=True))


def rows_of(document, variant):
    panel = document.find("section", data_standings=True, data_variant=variant)
    return [[td.text for td in row.find_all("td")] for row in panel.find("tbody").find_all("tr")]


@pytest.fixture
def played(app, submit):
    """Yukon classic: Väinö wins today's challenge (3 points); ann plays today's and this week's and
    wins neither (2); bob plays today's (1) and cid this week's (1): bob and cid share third place.
    dora plays a deal that is no challenge: she has no points."""
    prepare(app, "yukon-classic", "daily", WIN_CODE)
    prepare(app, "yukon-classic", "weekly", WEEK_CODE)
    line = find_win(WIN_CODE)
    assert line is not None
    won = submit("Väinö Mäkinen", WIN_CODE, " ".join(str(action) for action in line))
    assert won["won"] is True and won["ranked"] is True
    submit("ann", WIN_CODE, " ".join(play_greedy(WIN_CODE, 30)))
    submit("ann", WEEK_CODE, " ".join(play_greedy(WEEK_CODE, 20)))
    submit("bob", WIN_CODE, " ".join(play_greedy(WIN_CODE, 10)))
    submit("cid", WEEK_CODE, " ".join(play_greedy(WEEK_CODE, 10)))
    submit("dora", "YU1-C-AAAAAAD", " ".join(play_greedy("YU1-C-AAAAAAD", 40)))
    return won


def test_the_home_page_ranks_each_variant_by_challenge_points_as_the_api_does(client, played):
    document = home(client)
    rows = rows_of(document, "yukon-classic")
    assert rows == [["1", "Väinö Mäkinen", "3", "1", "1"], ["2", "ann", "2", "0", "2"],
                    ["3", "bob", "1", "0", "1"], ["3", "cid", "1", "0", "1"]]  # equal points, one rank
    api = client.get("/api/v1/standings?variant=yukon-classic&limit=10").get_json()["entries"]
    assert rows == [[str(e["rank"]), e["player"], str(e["points"]), str(e["challenges_won"]),
                     str(e["challenges_played"])] for e in api]
    panel = document.find("section", data_standings=True, data_variant="yukon-classic")
    assert [th.text for th in panel.find("thead").find_all("th")] == \
        ["#", "Player", "Points", "Challenges won", "Challenges played"]
    first = panel.find("tbody").find("tr")
    assert [td.attrs["data-label"] for td in first.find_all("td")] == \
        ["#", "Player", "Points", "Challenges won", "Challenges played"]
    assert first.find("td", class_="rank") and first.find("td", class_="primary") is first.find("td", class_="player")
    assert first.find("td", class_="player").find("a").attrs["href"] == "/players/V%C3%A4in%C3%B6%20M%C3%A4kinen"
    assert panel.find("p", class_="hint").text == \
        "Challenge points: 3 for each challenge won, 1 for each challenge played and not won."
    assert panel.find("p", class_="panel-link").find("a").attrs["href"] == "/challenges/yukon-classic"


def test_no_board_on_the_home_page_ranks_raw_scores_across_deals(client, played):
    document = home(client)
    assert not document.find_all(data_leaderboard=True)
    assert not document.find_all("td", class_="result") and not document.find_all("td", class_="code")
    shown = [td.text for td in document.find_all("td", class_="player")]
    assert shown == ["Väinö Mäkinen", "ann", "bob", "cid"]
    assert "dora" not in shown  # her deal is no challenge …
    raw = client.get("/api/v1/leaderboard?variant=yukon-classic").get_json()["entries"]
    assert "dora" in [e["player"] for e in raw]  # … though the API's raw board (kept for clients) has her
    assert not document.find_all("a", href=f"/records/{played['id']}")


def test_a_variant_without_challenge_points_invites_to_todays_challenge(client):
    document = home(client)
    for variant in ("yukon-classic", "yukon-relaxed", "forty-thieves"):
        panel = document.find("section", data_standings=True, data_variant=variant)
        [row] = panel.find("tbody").find_all("tr")
        assert row.attrs["class"] == "placeholder-row"
        assert row.text == "No challenge has been played yet. Play today's challenge"
        assert row.find("td").attrs["colspan"] == "5"
        assert row.find("a").attrs["href"] == f"/challenges/{variant}"


@pytest.mark.parametrize("lang, heading, labels, hint, empty", [
    ("ko", "도전 순위표", ["#", "플레이어", "도전 점수", "승리한 도전", "플레이한 도전"],
     "도전 점수: 승리한 도전마다 3점, 플레이했지만 승리하지 못한 도전마다 1점.",
     "아직 플레이한 도전이 없습니다. 오늘의 도전 플레이하기"),
    ("fi", "Haasteiden sarjataulukko", ["#", "Pelaaja", "Haastepisteet", "Voitetut haasteet", "Pelatut haasteet"],
     "Haastepisteet: 3 jokaisesta voitetusta haasteesta, 1 jokaisesta pelatusta haasteesta, jota ei voitettu.",
     "Yhtään haastetta ei ole vielä pelattu. Pelaa päivän haaste"),
])
def test_the_standings_in_korean_and_finnish(client, played, lang, heading, labels, hint, empty):
    document = home(client, f"/?lang={lang}")
    assert document.find("h2", id="standings-heading").text == heading
    panel = document.find("section", data_standings=True, data_variant="yukon-classic")
    first = panel.find("tbody").find("tr")
    assert [td.attrs["data-label"] for td in first.find_all("td")] == labels
    assert [th.text for th in panel.find("thead").find_all("th")] == labels
    assert [td.text for td in first.find_all("td")] == ["1", "Väinö Mäkinen", "3", "1", "1"]
    assert first.find("td", class_="player").find("a").attrs["href"] == \
        f"/players/V%C3%A4in%C3%B6%20M%C3%A4kinen?lang={lang}"
    assert panel.find("p", class_="hint").text == hint
    assert panel.find("p", class_="panel-link").find("a").attrs["href"] == f"/challenges/yukon-classic?lang={lang}"
    nobody = document.find("section", data_standings=True, data_variant="forty-thieves").find("tbody")
    assert nobody.text == empty
    assert nobody.find("a").attrs["href"] == f"/challenges/forty-thieves?lang={lang}"
