"""Browser tests: the pages in a real headless Chromium (Debian's, driven by
Playwright for Python), against a live server on a free port of 127.0.0.1 with
a temporary SQLite database and a few records stored through the REST API.

Without Playwright or Chromium the tests fail when ``CI`` is set and are
skipped otherwise. Screenshots go to ``test-artifacts/e2e/``; with
``DOCS_SCREENSHOTS=1`` the ones docs/pages.md shows are also written to ``docs/``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.e2e_helpers import LONG_NAME, MARKUP_NAME
from tests.play import play_greedy

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
DOCS = ROOT / "docs"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def unavailable(reason: str) -> None:
    """Fail under CI (the browser tests must run there), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the browser tests", pytrace=False)
    pytest.skip(reason)


@dataclass
class LiveServer:
    url: str
    #: the stored records by a short name: the API's record objects
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: yesterday (a closed daily challenge of Forty Thieves) and this week's Monday, ISO dates
    yesterday: str = ""
    monday: str = ""
    #: the id of the challenge closed the day before yesterday, whose solution has a page
    solution: int = 0
    #: the application (for a test that changes what is stored, and puts it back)
    app: Any = None


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from werkzeug.serving import make_server

    from api import create_app

    database = tmp_path_factory.mktemp("e2e") / "records.sqlite3"
    # no searches: the pages show what is stored, and a window left unprepared here stays so
    # (as behind a worker tier that has not answered yet) instead of being prepared by a page;
    # the games are sent without times, and rank (as from a backend that sends none)
    app = create_app({"DATABASE_URL": f"sqlite:///{database}", "RATELIMIT_ENABLED": False,
                      "API_KEYS_REQUIRED": False, "LOG_LEVEL": "WARNING", "SOLVER_ENABLED": False,
                      "FAIRPLAY_TIMES_REQUIRED": False})
    server = LiveServer("", app=app)
    client = app.test_client()
    for name, player, code, length in [
        ("ann", "ann", "YU1-C-AAAAAAB", 30),
        ("markup", MARKUP_NAME, "YU1-C-AAAAAAB", 12),
        ("pekka", "pekka", "FT1-N-AAAAAAB", 45),
        ("kim", "김민지", "YU1-R-AAAAAB7", 20),
        # long names: words that must wrap, and one word as long as a name may be
        ("vaino", "Väinö Mäkinen-Virtanen", "FT1-N-AAAAAAC", 30),
        ("long", LONG_NAME, "YU1-C-AAAAAAC", 10),
    ]:
        response = client.post("/api/v1/records", json={"code": code, "player": player,
                                                        "moves": " ".join(play_greedy(code, length))})
        assert response.status_code == 201, response.get_data(as_text=True)
        server.records[name] = response.get_json()
    flagged_records(client, server)
    viewer_records(client, server)
    prepare_challenges(app, server)
    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, name="e2e-server", daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{http.server_port}"
    try:
        yield server
    finally:
        http.shutdown()
        thread.join(timeout=10)
        http.server_close()
        app.extensions["api.platform.db"].dispose()


def flagged_records(client: Any, server: LiveServer) -> None:
    """Two flagged records of the long-named player: a copy of ann's log (unranked) and a game
    played faster than people play (in review)."""
    response = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAB", "player": LONG_NAME,
                                                    "moves": server.records["ann"]["canonical"]})
    assert response.status_code == 201 and response.get_json()["ranked"] is False, response.get_data(as_text=True)
    server.records["copy"] = response.get_json()
    moves = play_greedy("YU1-C-AAAAAAD", 12)
    response = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAD", "player": LONG_NAME,
                                                    "moves": " ".join(moves),
                                                    "times": [40 * (i + 1) for i in range(len(moves))]})
    assert response.status_code == 201 and response.get_json()["status"] == "review", response.get_data(as_text=True)
    server.records["fast"] = response.get_json()


#: the timed record's times: a move every 1.5 s, from the game's start
def timed_times(actions: int) -> list[int]:
    return [1500 * (i + 1) for i in range(actions)]


def viewer_records(client: Any, server: LiveServer) -> None:
    """For the viewer's own tests: a timed Yukon game whose last position has a long column, and
    the longest log a player may store ("S U" x 2,500: 5,000 actions), both on deals no challenge uses."""
    moves = play_greedy("YU1-R-AAAAAB5", 60)  # its last position has a column of 39 cards
    response = client.post("/api/v1/records", json={"code": "YU1-R-AAAAAB5", "player": "tiina",
                                                    "moves": " ".join(moves), "times": timed_times(len(moves))})
    assert response.status_code == 201, response.get_data(as_text=True)
    server.records["timed"] = response.get_json()
    response = client.post("/api/v1/records", json={"code": "FT1-N-AAAAAAG", "player": "tiina",
                                                    "moves": "S U " * 2500})
    assert response.status_code == 201, response.get_data(as_text=True)
    server.records["longest"] = response.get_json()


def prepare_challenges(app: Any, server: LiveServer) -> None:
    """What the worker tier keeps ready: today's and this week's challenges on the deals played
    above (none for Yukon relaxed's week: "being prepared"), and two past daily challenges of
    Forty Thieves, yesterday's won by a record moved into its window."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from api.boards import upkeep
    from api.challenges.windows import window
    from api.platform.models import BoardEntry, Challenge, Record

    now = datetime.now(UTC)
    yesterday = window("daily", now)[0] - timedelta(days=1)
    server.yesterday, server.monday = yesterday.date().isoformat(), window("weekly", now)[0].date().isoformat()
    response = app.test_client().post("/api/v1/records", json={
        "code": "FT1-N-AAAAAAD", "player": "Väinö Mäkinen-Virtanen",
        "moves": " ".join(play_greedy("FT1-N-AAAAAAD", 25))})
    assert response.status_code == 201, response.get_data(as_text=True)
    server.records["past"] = past = response.get_json()
    plan = [("yukon-classic", "daily", "YU1-C-AAAAAAC"), ("yukon-classic", "weekly", "YU1-C-AAAAAAB"),
            ("yukon-relaxed", "daily", "YU1-R-AAAAAB7"),
            ("forty-thieves", "daily", "FT1-N-AAAAAAB"), ("forty-thieves", "weekly", "FT1-N-AAAAAAC")]
    with app.extensions["api.platform.db"].sessions() as session:
        moved = yesterday + timedelta(hours=12)
        session.execute(update(Record).where(Record.id == past["id"]).values(received_at=moved))
        session.execute(update(BoardEntry).where(BoardEntry.record_id == past["id"]).values(received_at=moved))
        # (prepared before attempts existed: the codes are public and the boards count every record in the window)
        challenges = [Challenge(variant=variant, kind=kind, starts_at=window(kind, now)[0],
                                ends_at=window(kind, now)[1], code=code, candidate=0, par=40, par_line="",
                                prepared_at=now, attempts_required=False)
                      for variant, kind, code in plan]
        challenges += [Challenge(variant="forty-thieves", kind="daily", starts_at=start,
                                 ends_at=start + timedelta(days=1), code=code, candidate=0, par=60,
                                 par_line=" ".join(play_greedy(code, 30)) if code == "FT1-N-AAAAAAE" else "",
                                 prepared_at=start, attempts_required=False)
                       for start, code in [(yesterday, "FT1-N-AAAAAAD"),
                                           (yesterday - timedelta(days=1), "FT1-N-AAAAAAE")]]
        session.add_all(challenges)
        session.flush()
        for challenge in challenges:
            upkeep.fill_challenge(session.connection(), challenge.id)
        server.solution = next(challenge.id for challenge in challenges if challenge.par_line)
        session.commit()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright for Python is not installed (pip install playwright)")
    if not os.access(CHROMIUM, os.X_OK):
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def expect(browser: Any) -> Any:
    """Playwright's ``expect``, waiting up to 10 s."""
    from playwright.sync_api import expect

    expect.set_options(timeout=10_000)
    return expect


@pytest.fixture
def open_page(browser: Any, live_server: LiveServer) -> Iterator[Callable[..., Any]]:
    """``open_page(path, locale="en-US")``: a new tab at ``path`` of the live server.
    The test fails if a page raises a script error, logs one, opens a dialog, or gets an
    error answer for anything but an API call (whose errors the pages show), a page that explains
    bad input (422), or the page opened with the ``status`` it is meant to have."""
    contexts = []
    problems: list[str] = []
    expected: dict[str, int] = {}  # a page's URL → the status it is meant to answer with

    def open_(path: str, locale: str = "en-US", width: int = 1280, height: int = 900, status: int = 200,
              **options: Any) -> Any:
        """``options``: more of Playwright's ``new_context`` (``java_script_enabled``, ``reduced_motion``,
        ``has_touch``, ``is_mobile``, ``permissions``); ``status``: the page's own expected status."""
        context = browser.new_context(viewport={"width": width, "height": height}, locale=locale,
                                      base_url=live_server.url, **options)
        contexts.append(context)
        page = context.new_page()
        expected[live_server.url + path] = status
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: message.type == "error" and not message.text.startswith(
            "Failed to load resource") and problems.append(f"console: {message.text}"))
        page.on("response", lambda response: response.status >= 400 and "/api/v1/" not in response.url and
                expected.get(response.url) != response.status and
                not (response.status == 422 and response.request.resource_type == "document") and
                problems.append(f"HTTP {response.status}: {response.url}"))
        page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.goto(path)
        return page

    yield open_
    for context in contexts:
        context.close()
    assert not problems, problems


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    """``screenshot(page, name, element=None, docs=False)``: the whole page (or one element), saved
    as ``test-artifacts/e2e/<name>.png``; with ``docs`` and ``DOCS_SCREENSHOTS=1`` also as ``docs/<name>.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str, element: Any = None, docs: bool = False) -> Path:
        path = ARTIFACTS / f"{name}.png"
        if element is not None:
            element.screenshot(path=str(path), animations="disabled")
        else:
            page.screenshot(path=str(path), full_page=True, animations="disabled")
        assert path.stat().st_size > 10_000, f"{path} looks empty"
        if docs and os.environ.get("DOCS_SCREENSHOTS") == "1":
            (DOCS / path.name).write_bytes(path.read_bytes())
        return path

    return take
