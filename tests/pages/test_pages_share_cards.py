"""Share images (issue 24): each record, deal and challenge page names an ``og:image``, a PNG
drawn on the server (Pillow) of the record's final position or the deal, with the player, the
result and the code; small, cached, with a strong ETag and ``304``."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from html_tree import parse
from PIL import Image
from test_pages_challenges import add_challenge, attempt_record

from api.pages import sharecard
from api.platform.models import Challenge
from tests.engine.engine_helpers import find_win
from tests.play import play_greedy

#: the most a share image may weigh
MOST_BYTES = 60_000


def og_image(client, url):
    document = parse(client.get(url).get_data(as_text=True))
    meta = {m.attrs.get("property") or m.attrs.get("name"): m.attrs["content"] for m in document.find_all("meta")
            if "content" in m.attrs}
    return meta


def png(client, url):
    response = client.get(url)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert response.mimetype == "image/png" and len(response.get_data()) < MOST_BYTES, len(response.get_data())
    image = Image.open(io.BytesIO(response.get_data()))
    image.verify()  # a whole, valid PNG
    assert image.format == "PNG" and image.size == sharecard.SIZE
    return response


def test_a_records_page_names_its_share_image_which_is_a_small_png(client, submit):
    record = submit("ann", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 30)))
    meta = og_image(client, f"/records/{record['id']}?step=4")
    assert meta["og:image"] == f"http://localhost/records/{record['id']}/card.png"
    assert (meta["og:image:width"], meta["og:image:height"]) == ("1200", "630")
    assert meta["og:image:alt"] == meta["og:description"] and meta["twitter:card"] == "summary_large_image"
    first = png(client, f"/records/{record['id']}/card.png")
    tag = first.headers["ETag"]
    assert tag.startswith('"') and first.headers["Cache-Control"] == "public, max-age=86400"
    again = client.get(f"/records/{record['id']}/card.png", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.get_data() == b""
    assert og_image(client, f"/records/{record['id']}?lang=fi")["og:image"].endswith("/card.png?lang=fi")
    finnish = png(client, f"/records/{record['id']}/card.png?lang=fi")
    assert finnish.get_data() != first.get_data()  # its words are Finnish


@pytest.fixture
def drawn(monkeypatch):
    """The cards drawn, and the size in pixels of each of their words as drawn."""
    cards, sizes = [], []
    original, fitted = sharecard.share_image, sharecard.fitted

    def fitting(*args, **kwargs):
        text, face = fitted(*args, **kwargs)
        sizes.append((text, face.size))
        return text, face

    monkeypatch.setattr(sharecard, "share_image", lambda card: cards.append(card) or original(card))
    monkeypatch.setattr(sharecard, "fitted", fitting)
    return {"cards": cards, "sizes": sizes}


def test_the_image_of_a_game_not_won_shows_its_final_position(client, submit, drawn):
    record = submit("ann", "FT1-N-AAAAAAB", " ".join(play_greedy("FT1-N-AAAAAAB", 40)))
    png(client, f"/records/{record['id']}/card.png")
    card = drawn["cards"][0]
    final = client.get(f"/records/{record['id']}/frames.json?step={record['actions']}").get_json()["frames"][-1]
    assert not record["won"] and card.board == final["board"]
    assert card.title == "ann · FT1-N-AAAAAAB" and card.result == "not won"
    assert card.details == [f"{record['moves']} moves", f"Score {record['score']}", "Forty Thieves"]
    assert card.footer == "Solitaire records"


def test_a_won_game_shows_its_opening_not_an_empty_tableau(client, submit, drawn):
    line = " ".join(str(action) for action in find_win("YU1-C-AAAAAAB"))
    record = submit("ann", "YU1-C-AAAAAAB", line)
    png(client, f"/records/{record['id']}/card.png")
    card = drawn["cards"][0]
    opening = client.get(f"/records/{record['id']}/frames.json?step=0").get_json()["frames"][0]["board"]
    assert record["won"] and card.board == opening and card.result == "★ won"
    assert sum(len(column["up"]) + column["down"] for column in card.board["columns"]) == 52


def test_every_word_of_a_card_is_at_least_24_px_at_1200_by_630(client, app, submit, drawn):
    """Legible in a 360 px preview: 24 px at 1200×630 is 7 px there; the result is much larger."""
    name = "Väinö Mäkinen-Virtanen-Kallioinen"  # with the code, a title too long for its place: cut, never tiny
    record = submit(name[:32], "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 10)))
    korean = submit("김민지", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 12)))
    for url in (f"/records/{record['id']}/card.png", f"/records/{korean['id']}/card.png?lang=ko",
                f"/records/{korean['id']}/card.png?lang=fi", "/deals/FT1-N-AAAAAAB/card.png"):
        png(client, url)
    assert len(drawn["cards"]) == 4 and len(drawn["sizes"]) >= 4 * 4
    assert min(size for _text, size in drawn["sizes"]) >= sharecard.MIN_TEXT == 24
    assert any(text.endswith("…") for text, _size in drawn["sizes"])  # the long title, cut
    results = [size for text, size in drawn["sizes"] if text in ("not won", "won", "★ won")]
    assert results and min(results) >= 60  # the result in large type


def test_a_record_of_a_running_challenge_has_a_card_with_its_result_and_no_board(client, app, drawn):
    today = datetime.combine(datetime.now(UTC).date(), datetime.min.time(), UTC)
    daily, stored = attempt_record(client, app, today)
    png(client, f"/records/{stored['id']}/card.png")
    card = drawn["cards"][0]
    assert card.board is None  # the deal is secret: no board at all
    assert card.title == f"Daily challenge of {today.date().isoformat()} · Forty Thieves"
    assert card.result == "ann: rank 1 of 1" and card.details[0] == "not won · 2 moves"
    assert card.details[1].startswith("Time 0:0")  # the server's measure of the attempt
    assert "FT1-N-AAAAAAB" not in " ".join([card.title, card.result, *card.details, card.footer])
    # the day's card too, with and without the visitor
    page = og_image(client, f"/challenges/forty-thieves/daily/{today.date().isoformat()}?player=ann")
    assert page["og:image"] == f"http://localhost/challenges/{daily}/card.png?player=ann"
    png(client, f"/challenges/{daily}/card.png?player=ann")
    png(client, f"/challenges/{daily}/card.png")
    mine, anyone = drawn["cards"][1:]
    assert mine.board is None and anyone.board is None
    assert mine.result == "ann: rank 1 of 1" and anyone.result == "Par: 123 moves"
    assert anyone.details == ["Nobody has won this challenge yet."]
    with app.extensions["api.platform.db"].sessions() as session:  # the window closes: the opening
        challenge = session.get(Challenge, daily)
        challenge.starts_at -= timedelta(days=2)
        challenge.ends_at -= timedelta(days=2)
        session.commit()
    png(client, f"/records/{stored['id']}/card.png")
    png(client, f"/challenges/{daily}/card.png")
    record_card, day_card = drawn["cards"][3:]
    opening = client.post("/frames.json", json={"code": "FT1-N-AAAAAAB", "moves": "S S"}).get_json()["frames"]
    assert record_card.board == opening[-1]["board"]  # not won: its final position
    assert day_card.board == opening[0]["board"] and day_card.details == ["Nobody won this challenge."]
    assert client.get("/challenges/999999/card.png").status_code == 404


def test_a_deal_and_a_challenge_page_name_the_deals_image(client, app):
    assert og_image(client, "/deals/FT1-N-AAAAAAB")["og:image"] == "http://localhost/deals/FT1-N-AAAAAAB/card.png"
    png(client, "/deals/FT1-N-AAAAAAB/card.png")
    png(client, "/deals/YU1-R-AAAAAB7/card.png?lang=ko")
    today = datetime.combine(datetime.now(UTC).date(), datetime.min.time(), UTC)
    add_challenge(app, "daily", today, "FT1-N-AAAAAAE")
    add_challenge(app, "weekly", today - timedelta(days=today.weekday()), "FT1-N-AAAAAAF")
    assert og_image(client, "/challenges/forty-thieves")["og:image"] == \
        "http://localhost/deals/FT1-N-AAAAAAE/card.png"


@pytest.mark.parametrize("url", ["/records/424242/card.png", "/deals/YU9-C-AAAAAAB/card.png"])
def test_no_image_for_what_does_not_exist(client, url):
    response = client.get(url)
    assert response.status_code == 404 and response.mimetype == "application/problem+json"


def test_a_korean_name_is_drawn_with_a_cjk_font_and_any_font_may_be_missing(client, submit, monkeypatch):
    record = submit("김민지", "YU1-C-AAAAAAB", " ".join(play_greedy("YU1-C-AAAAAAB", 10)))
    assert sharecard.needs_cjk("김민지 · YU1-C-AAAAAAB") and not sharecard.needs_cjk("Väinö · ♠")
    png(client, f"/records/{record['id']}/card.png")
    # without the fonts: Pillow's own, and still a whole image
    monkeypatch.setattr(sharecard, "FONT_DIRS", ("/nowhere",))
    sharecard.font.cache_clear()
    try:
        image = sharecard.share_image(sharecard.Card(
            "김민지 · YU1-C-AAAAAAB", "won", "Solitaire records",
            board=client.get("/records/%d/frames.json" % record["id"]).get_json()["frames"][0]["board"]))
    finally:
        sharecard.font.cache_clear()
    assert Image.open(io.BytesIO(image)).size == sharecard.SIZE


def test_the_same_inputs_give_the_same_bytes(client):
    board = client.post("/frames.json", json={"code": "FT1-N-AAAAAAB", "moves": "S"}).get_json()
    view = board["frames"][-1]["board"]
    card = sharecard.Card("a", "b", "c", ["d"], view)
    assert sharecard.share_image(card) == sharecard.share_image(sharecard.Card("a", "b", "c", ["d"], view))
