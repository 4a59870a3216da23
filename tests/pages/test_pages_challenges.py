"""The challenge page of a variant, and the player statistics partial."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flask import render_template

from api.boards import upkeep
from api.platform.models import Challenge
from api.players.stats import challenge_ranks, player_stats

UTC = UTC


def add_challenge(app, kind, start, code="FT1-N-AAAAAAB", attempts_required=False):
    """A challenge; by default one from before attempts existed (its code public, its board
    counting every record in the window). Its id."""
    with app.extensions["api.platform.db"].sessions() as session:
        challenge = Challenge(variant="forty-thieves", kind=kind, starts_at=start,
                              ends_at=start + timedelta(days=1 if kind == "daily" else 7), code=code, candidate=0,
                              par=123, par_line="S", prepared_at=start, attempts_required=attempts_required)
        session.add(challenge)
        session.flush()
        upkeep.fill_challenge(session.connection(), challenge.id)
        session.commit()
        return challenge.id


def test_the_challenge_page_shows_todays_deal_its_board_the_countdown_and_past_challenges(client, app, submit,
                                                                                        monkeypatch):
    from api import tasks

    asked = []  # a worker tier that has not prepared the weekly window yet (the embedded mode would do it now)
    monkeypatch.setattr(tasks, "ask_to_prepare", lambda *args: asked.append(args[1:3]))
    now = datetime.now(UTC)
    today = datetime.combine(now.date(), datetime.min.time(), UTC)
    daily = add_challenge(app, "daily", today, attempts_required=True)
    add_challenge(app, "daily", today - timedelta(days=1), "FT1-N-AAAAAAC")
    token = client.post("/api/v1/players", json={"name": "ann"}).get_json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    attempt = client.post(f"/api/v1/challenges/{daily}/attempts", headers=headers).get_json()["attempt"]
    stored = client.post("/api/v1/records", json={"code": "FT1-N-AAAAAAB", "moves": "S", "attempt": attempt},
                         headers=headers)
    assert stored.status_code == 201
    page = client.get("/challenges/forty-thieves")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Daily challenge" in html and "Par: 123 moves" in html
    assert "FT1-N-AAAAAAB" not in html and "Start the challenge in the app" in html  # secret while it runs
    left = (today + timedelta(days=1)) - now
    assert f"Next challenge in {int(left.total_seconds()) // 3600} h" in html
    assert "ann" in html  # on today's board
    assert "Weekly challenge" in html and "is being prepared" in html  # no weekly one prepared …
    assert asked == [("forty-thieves", "weekly")]                     # … so the page asked for it
    assert "Past challenges" in html and "FT1-N-AAAAAAC" in html
    finnish = client.get("/challenges/forty-thieves?lang=fi").get_data(as_text=True)
    assert "Päivän haaste" in finnish and "Ihannetulos: 123 siirtoa" in finnish
    assert client.get("/challenges/poker").status_code == 404


def test_the_player_statistics_partial_renders_the_stats_and_the_rank_on_each_challenge(client, app, submit):
    now = datetime.now(UTC)
    add_challenge(app, "daily", datetime.combine(now.date(), datetime.min.time(), UTC))
    submit("amy", "FT1-N-AAAAAAB", "S S")
    submit("bob", "FT1-N-AAAAAAB", "S")
    with app.extensions["api.platform.db"].sessions() as session:
        stats = player_stats(session, "bob")
        ranks = challenge_ranks(session, "bob")
    assert [(r["code"], r["kind"], r["entries"]) for r in ranks] == [("FT1-N-AAAAAAB", "daily", 2)]
    with app.test_request_context("/?lang=ko"):
        from flask import g

        from api.pages import views as pages

        g.lang, g.explicit_lang = "ko", "ko"
        html = render_template("_player_stats.html", stats=stats, challenge_ranks=ranks,
                               **pages._template_helpers())
    assert "통계" in html and "<td class=\"num\" data-label=\"게임 수\">1</td>" in html
    assert "도전별 순위" in html and f"2명 중 {ranks[0]['rank']}위" in html


def attempt_record(client, app, today):
    """Today's Forty Thieves daily (attempts required) and ann's record of an attempt at it: its id and the record."""
    daily = add_challenge(app, "daily", today, attempts_required=True)
    token = client.post("/api/v1/players", json={"name": "ann"}).get_json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    attempt = client.post(f"/api/v1/challenges/{daily}/attempts", headers=headers).get_json()["attempt"]
    stored = client.post("/api/v1/records", json={"code": "FT1-N-AAAAAAB", "moves": "S S", "attempt": attempt},
                         headers=headers).get_json()
    return daily, stored


def test_a_record_of_a_running_challenge_has_a_spoiler_safe_page_until_the_window_closes(client, app):
    now = datetime.now(UTC)
    today = datetime.combine(now.date(), datetime.min.time(), UTC)
    daily, stored = attempt_record(client, app, today)
    link = f"/records/{stored['id']}"
    board = client.get("/challenges/forty-thieves").get_data(as_text=True)
    assert f'href="{link}"' in board  # the running board links it …
    page = client.get(link)
    assert page.status_code == 200       # … to a page that says how it went, not "no such record"
    html = page.get_data(as_text=True)
    assert "FT1-N-AAAAAAB" not in html and "data-viewer" not in html and "data-board" not in html
    assert "frames.json" not in html  # its share image has the result alone (tests/pages/test_pages_share_cards.py)
    assert f'property="og:image" content="http://localhost/records/{stored["id"]}/card.png"' in html
    assert "rank 1 of 1" in html and "not won" in html and "Moves 2" in html
    assert "Time 0:0" in html  # the server's measure of the attempt: started a moment ago
    unlocks = (today + timedelta(days=1)).strftime("%-m/%-d/%y")
    assert "Replay unlocks at" in html and unlocks in html and "Daily challenge of" in html
    assert client.get(f"/api/v1/records/{stored['id']}").status_code == 404  # the API still hides it
    assert client.get(f"{link}/frames.json?step=1").status_code == 404
    finnish = client.get(f"{link}?lang=fi").get_data(as_text=True)
    assert "Toisto avautuu" in finnish and "FT1-N-AAAAAAB" not in finnish
    korean = client.get(f"{link}?lang=ko").get_data(as_text=True)
    assert "재생은" in korean and "FT1-N-AAAAAAB" not in korean
    assert client.get("/records/999999").status_code == 404
    with app.extensions["api.platform.db"].sessions() as session:  # the window closes: the whole record
        challenge = session.get(Challenge, daily)
        challenge.starts_at -= timedelta(days=2)
        challenge.ends_at -= timedelta(days=2)
        session.commit()
    html = client.get(link).get_data(as_text=True)
    assert "FT1-N-AAAAAAB" in html and "data-viewer" in html and "Replay unlocks" not in html


def test_the_challenge_pages_links_keep_the_visitors_name(client, app):
    now = datetime.now(UTC)
    today = datetime.combine(now.date(), datetime.min.time(), UTC)
    add_challenge(app, "daily", today - timedelta(days=1), "FT1-N-AAAAAAC")
    html = client.get("/challenges/forty-thieves?player=ann").get_data(as_text=True)
    assert "Results for ann" in html and "data-forget-player" in html
    day = (today - timedelta(days=1)).date().isoformat()
    assert f'href="/challenges/forty-thieves/daily/{day}?player=ann"' in html  # the calendar and past days
    assert 'href="/challenges/yukon-classic?player=ann"' in html  # the other games' challenge pages
    assert "?player=ann&amp;month=" in html  # the month pager
    day_page = client.get(f"/challenges/forty-thieves/daily/{day}?player=ann").get_data(as_text=True)
    assert 'href="/challenges/forty-thieves?player=ann"' in day_page
    anonymous = client.get("/challenges/forty-thieves").get_data(as_text=True)
    assert "player=" not in anonymous and "Results for" not in anonymous
    assert "Pelaajan ann tulokset" in client.get("/challenges/forty-thieves?player=ann&lang=fi").get_data(as_text=True)

