"""Share images (issue 24): each record, deal and challenge page names an ``og:image``, a PNG
drawn on the server (Pillow) of the record's final position or the deal, with the player, the
result and the code; small, cached, with a strong ETag and ``304``."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from html_tree import parse
from PIL import Image
from test_pages_challenges import add_challenge
from tests.play import play_greedy

from api import sharecard

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


def test_the_image_shows_the_final_position(client, submit, monkeypatch):
    record = submit("ann", "FT1-N-AAAAAAB", " ".join(play_greedy("FT1-N-AAAAAAB", 40)))
    drawn = []
    original = sharecard.share_image
    monkeypatch.setattr(sharecard, "share_image", lambda *args: drawn.append(args) or original(*args))
    png(client, f"/records/{record['id']}/card.png")
    title, line, footer, board = drawn[0]
    final = client.get(f"/records/{record['id']}/frames.json?step={record['actions']}").get_json()["frames"][-1]
    assert board == final["board"]
    assert title == "ann · FT1-N-AAAAAAB" and line.startswith(("won · Score", "not won · Score"))
    assert f"Moves {record['moves']}" in line and footer == "Solitaire records"


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
        image = sharecard.share_image("김민지 · YU1-C-AAAAAAB", "won", "Solitaire records",
                                      client.get("/records/%d/frames.json" % record["id"]).get_json()["frames"][0]
                                      ["board"])
    finally:
        sharecard.font.cache_clear()
    assert Image.open(io.BytesIO(image)).size == sharecard.SIZE


def test_the_same_inputs_give_the_same_bytes(client):
    board = client.post("/frames.json", json={"code": "FT1-N-AAAAAAB", "moves": "S"}).get_json()
    view = board["frames"][-1]["board"]
    assert sharecard.share_image("a", "b", "c", view) == sharecard.share_image("a", "b", "c", view)
