"""The pages show fair play: a record's flags and "unranked" plainly, and each player's
name links to their profile page, which lists their records with their flags."""

from __future__ import annotations

from test_pages import page

from tests.api.conftest import play_legal


def test_a_copy_shows_its_flag_and_unranked_and_links_its_player(client, submit):
    log = play_legal("FT1-N-AAAAAAB", 10)
    original = submit("ann", "FT1-N-AAAAAAB", log)
    copy = submit("copycat", "FT1-N-AAAAAAB", log)
    document, _ = page(client, f"/records/{copy['id']}")
    notices = [p.text for p in document.find_all("p", class_="notice")]
    assert "Unranked: this record does not count on the leaderboards." in notices
    flags = document.find("ul", data_flags_in_force=True)
    assert [li.text for li in flags.find_all("li")] == [
        f"copy: the game goes through 100 % of the positions of record {original['id']}, stored earlier by "
        "another player"]
    assert "Visible but unranked" in document.find("section", data_decisions=True).text
    assert document.find("h1").find("a", href="/players/copycat").text == "copycat"
    assert "Untimed: no per-action times were sent." in document.text
    # a clean record (ranked, nothing decided) shows neither, and no decisions block at all
    document, _ = page(client, f"/records/{original['id']}")
    assert document.find_all("ul", data_flags_in_force=True) == []
    assert document.find_all("section", data_decisions=True) == []
    assert not [p for p in document.find_all("p", class_="notice") if "Unranked" in p.text]


def test_the_player_page_lists_their_records_with_flags(client, submit):
    log = play_legal("FT1-N-AAAAAAB", 10)
    submit("ann", "FT1-N-AAAAAAB", log)
    copy = submit("copycat", "FT1-N-AAAAAAB", log)
    document, _ = page(client, "/players/copycat")
    assert document.find("h1").text == "Player copycat"
    [row] = document.find("table", class_="player-records").find("tbody").find_all("tr")
    assert row.find("a", href=f"/records/{copy['id']}") is not None
    assert "unranked" in row.text and "copy: the game goes through 100 % of the positions of record" in row.text
    assert "To appeal" in document.text
    # any spelling that reads as the name finds the player; in Finnish too
    document, _ = page(client, "/players/COPYCAT?lang=fi")
    assert document.find("h1").text == "Pelaaja copycat"
    assert "ei sijoitusta" in document.find("table", class_="player-records").text
    assert "kopio: peli kulkee 100 % toisen pelaajan" in document.find("table", class_="player-records").text


def test_an_unknown_player_is_a_404_page(client):
    document, _ = page(client, "/players/nobody", 404)
    assert document.find("h1").text == "No such player"


def test_a_record_cleared_by_review_shows_its_history_and_the_flag_as_cleared(client, submit, app):
    from api.fairplay import judging as fairplay
    from api.platform.models import Record

    moves = play_legal("YU1-C-AAAAAAD", 12)
    fast = submit("quick", "YU1-C-AAAAAAD", " ".join(moves), times=[40 * (i + 1) for i in range(len(moves))])
    assert fast["status"] == "review"
    document, _ = page(client, f"/records/{fast['id']}")
    decisions = document.find("section", data_decisions=True)
    assert "In review" in decisions.find("p", data_status_text=True).text
    assert "timing" in decisions.find("ul", data_flags_in_force=True).text
    assert decisions.find_all("ul", data_flags_cleared=True) == []
    assert "No decision has been made" in decisions.text
    with app.extensions["api.platform.db"].sessions() as session:
        stored = session.get(Record, fast["id"])
        fairplay.decide(session, stored, "visible", "reviewer-key", "watched the video: played by hand")
        session.commit()
    document, _ = page(client, f"/records/{fast['id']}?lang=fi")
    decisions = document.find("section", data_decisions=True)
    assert decisions.find_all("ul", data_flags_in_force=True) == []  # only the flags in force …
    cleared = decisions.find("ul", data_flags_cleared=True)  # … and the cleared one, marked
    assert cleared.find("span", class_="cleared-mark").text == "poistettu" and "ajoitus" in cleared.find("del").text
    [row] = decisions.find("table", data_history=True).find("tbody").find_all("tr")
    cells = [td.text for td in row.find_all("td")]
    assert cells[1:] == ["tehty näkyväksi", "reviewer-key", "watched the video: played by hand"]
    assert cells[0].endswith("UTC")
    # the player page lists only flags in force: none is left on this record
    document, _ = page(client, "/players/quick")
    assert "timing" not in document.find("table", class_="player-records").text
