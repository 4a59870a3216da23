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
    flags = document.find("section", class_="flags")
    assert [li.text for li in flags.find_all("li")] == [
        f"copy: the same game was stored earlier as record {original['id']}"]
    assert document.find("h1").find("a", href="/players/copycat").text == "copycat"
    assert "Untimed: no per-action times were sent." in document.text
    # a ranked record shows neither
    document, _ = page(client, f"/records/{original['id']}")
    assert document.find_all("section", class_="flags") == []
    assert not [p for p in document.find_all("p", class_="notice") if "Unranked" in p.text]


def test_the_player_page_lists_their_records_with_flags(client, submit):
    log = play_legal("FT1-N-AAAAAAB", 10)
    submit("ann", "FT1-N-AAAAAAB", log)
    copy = submit("copycat", "FT1-N-AAAAAAB", log)
    document, _ = page(client, "/players/copycat")
    assert document.find("h1").text == "Player copycat"
    [row] = document.find("table", class_="player-records").find("tbody").find_all("tr")
    assert row.find("a", href=f"/records/{copy['id']}") is not None
    assert "unranked" in row.text and "copy: the same game" in row.text
    assert "To appeal" in document.text
    # any spelling that reads as the name finds the player; in Finnish too
    document, _ = page(client, "/players/COPYCAT?lang=fi")
    assert document.find("h1").text == "Pelaaja copycat"
    assert "ei sijoitusta" in document.find("table").text


def test_an_unknown_player_is_a_404_page(client):
    document, _ = page(client, "/players/nobody", 404)
    assert document.find("h1").text == "No such player"
