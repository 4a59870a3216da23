"""No page costs in proportion to a log's length (issue 22): a record's page, its frames and the
checker show one page of the log (``LOG_PAGE`` actions) around the step asked for, whatever the
log's length; the record page's viewer is rendered once per record, step and language, and pages
answer ``304`` to a matching ``If-None-Match``. Sizes, rows and frame counts are asserted here,
never times (bench/long_record_bench.py measures those)."""

from __future__ import annotations

import gzip
from unittest import mock

import pytest
from html_tree import parse

from api.pages import views as pages
from api.pages.board import LOG_PAGE, describe_log
from api.pages.views import clock_text
from engine import Game, parse_action
from tests.play import play_greedy

CODE = "FT1-N-AAAAAAB"
#: the longest legal log a player may store: a draw and its undo, 2,500 times (MAX_LOG_ACTIONS)
LONG_LOG = "S U " * 2500
#: what one page of the log may weigh in HTML at most (the whole log was 797 KB)
PAGE_BYTES = 120_000


@pytest.fixture
def long_record(submit):
    return submit("bench", CODE, LONG_LOG)


def items(document):
    return document.find("ol", data_log=True).find_all(class_="action")


@pytest.mark.parametrize("asked, shown, first", [
    (None, 5000, 4801), ("0", 0, 1), ("1", 1, 1), ("200", 200, 1), ("201", 201, 201), ("2500", 2500, 2401),
    ("4999", 4999, 4801), ("5000", 5000, 4801), ("99999999999999999999", 5000, 4801), ("-3", 0, 1), ("x", 5000, 4801)])
def test_a_long_records_page_shows_one_page_of_its_log_around_the_step(client, long_record, asked, shown, first):
    query = {} if asked is None else {"step": asked}
    response = client.get(f"/records/{long_record['id']}", query_string=query)
    assert response.status_code == 200
    body = response.get_data()
    assert len(body) < PAGE_BYTES, len(body)
    document = parse(body.decode())
    log = items(document)
    assert len(log) == min(LOG_PAGE, 5000 - first + 1)
    assert [int(item.attrs["data-step"]) for item in log] == list(range(first, first + len(log)))
    assert document.find("ol", data_log=True).attrs["start"] == str(first)
    current = document.find("ol", data_log=True).find_all(aria_current="step")
    assert [item.attrs["data-step"] for item in current] == ([str(shown)] if shown else [])
    viewer = document.find("section", data_viewer=True)
    assert viewer.find("dd", data_counter="step").text == f"{shown} / 5000"
    assert viewer.find("input", data_slider=True).attrs["max"] == "5000"
    # the pages before and after, as links (they work without scripts)
    nav = document.find("nav", data_log_pages=True)
    earlier, later = nav.find("a", data_log_page="previous"), nav.find("a", data_log_page="next")
    assert ("href" in earlier.attrs) == (first > 1) and ("hidden" in earlier.attrs) == (first == 1)
    if first > 1:
        assert earlier.attrs["href"] == f"/records/{long_record['id']}?step={first - 1}"
    if first + LOG_PAGE <= 5000:
        assert later.attrs["href"] == f"/records/{long_record['id']}?step={first + LOG_PAGE}"
    else:
        assert "hidden" in later.attrs
    assert nav.find("span", data_log_range=True).text == f"Actions {first}–{first + len(log) - 1} of 5000"


def test_a_short_records_page_lists_its_whole_log_without_page_links(client, submit):
    record = submit("ann", CODE, " ".join(play_greedy(CODE, 40)))
    document = parse(client.get(f"/records/{record['id']}?step=7").get_data(as_text=True))
    assert len(items(document)) == record["actions"] == 40
    assert not document.find_all("nav", data_log_pages=True)


def test_a_page_of_the_log_reads_as_the_whole_log_does(app):
    from flask import g

    log = play_greedy("YU1-C-AAAAAAB", 60) + ["U"] * 3 + play_greedy(CODE, 0)
    with app.test_request_context("/"):
        g.lang = "en"
        whole = describe_log(log)
        for first, last in [(1, 10), (20, 63), (61, 63), (63, 63)]:
            assert describe_log(log, first, last) == whole[first - 1:last]


def test_a_long_records_frames_come_a_window_at_a_time_with_cursors(client, long_record):
    url = f"/records/{long_record['id']}/frames.json"
    first = client.get(url).get_json()
    assert (first["start"], first["total"], first["previous"], first["next"]) == (0, 5000, None, 201)
    assert len(first["frames"]) == LOG_PAGE + 1 and first["error"] is None
    middle = client.get(url, query_string={"step": 2450}).get_json()
    assert (middle["start"], middle["previous"], middle["next"]) == (2400, 2400, 2601)
    assert len(middle["frames"]) == LOG_PAGE + 1
    assert [f["action"] for f in middle["frames"]] == ["U", *(["S", "U"] * 100)]  # actions 2400 … 2600
    assert [f["label"] for f in middle["frames"][:3]] == ["Undo (takes back Draw)", "Draw", "Undo (takes back Draw)"]
    assert (middle["frames"][1]["from"], middle["frames"][1]["to"]) == ("S", "W")
    last = client.get(url, query_string={"step": 5000})
    assert last.get_json()["next"] is None and len(last.get_json()["frames"]) == LOG_PAGE + 1
    assert len(last.get_data()) < 400_000  # one window, not 4.6 MB of every position
    # any step of a window gives that window (the same bytes and tag, one cache entry)
    again = client.get(url, query_string={"step": 4801})
    assert again.get_data() == last.get_data() and again.headers["ETag"] == last.headers["ETag"]
    assert client.get(url, query_string={"step": 4900}, headers={"If-None-Match": last.headers["ETag"]}) \
        .status_code == 304


def test_a_windows_frames_are_the_engines_positions(client, submit):
    log = play_greedy("YU1-C-AAAAAAB", 260)
    record = submit("ann", "YU1-C-AAAAAAB", " ".join(log))
    total = record["actions"]
    data = client.get(f"/records/{record['id']}/frames.json?step={total}").get_json()
    assert data["start"] == 200 and len(data["frames"]) == total - 200 + 1
    game = Game.from_code("YU1-C-AAAAAAB")
    for text in record["canonical"].split()[:200]:
        game.push(parse_action(text))
    for index, frame in enumerate(data["frames"]):
        if index:
            game.push(parse_action(frame["action"]))
        assert (frame["score"], frame["moves"]) == (game.position.score, game.position.moves)
        assert [c["up"] for c in frame["board"]["columns"]] == [
            [str(card) for card in column[down:]] for column, down in zip(game.position.columns, game.position.down)]
    assert data["frames"][0]["action"] == record["canonical"].split()[199]


def test_the_checker_shows_one_page_of_a_long_log(client):
    response = client.post("/check", data={"code": CODE, "moves": LONG_LOG})
    assert response.status_code == 200
    body = response.get_data()
    # the log sent comes back twice (the form's field, the viewer's data), then one page: no more
    assert len(body) < 2 * len(LONG_LOG) + PAGE_BYTES, len(body)
    document = parse(body.decode())
    log = items(document)
    assert [int(item.attrs["data-step"]) for item in log] == list(range(4801, 5001))
    assert document.find("dd", data_counter="step").text == "5000 / 5000"
    # the other pages: the checker's form posted again at their step (no URL holds the log)
    earlier = document.find("nav", data_log_pages=True).find("button", data_log_page="previous")
    assert (earlier.attrs["form"], earlier.attrs["formmethod"], earlier.attrs["name"], earlier.attrs["value"]) == \
        ("checker", "post", "step", "4800")
    assert document.find("form", data_checker=True).attrs["id"] == "checker"
    at = parse(client.post("/check", data={"code": CODE, "moves": LONG_LOG, "step": "4800"}).get_data(as_text=True))
    assert [int(item.attrs["data-step"]) for item in items(at)][::199] == [4601, 4800]
    assert at.find("dd", data_counter="step").text == "4800 / 5000"


def test_an_illegal_logs_failing_action_ends_the_last_page_of_its_log(client):
    moves = "S U " * 150 + "T1>T2"
    document = parse(client.get("/check", query_string={"code": CODE, "moves": moves}).get_data(as_text=True))
    ends = document.find("ol", data_log=True).find_all("li", data_log_end=True)
    assert len(ends) == 2 and not any("hidden" in end.attrs for end in ends)
    earlier = parse(client.get("/check", query_string={"code": CODE, "moves": moves, "step": "3"})
                    .get_data(as_text=True))
    assert all("hidden" in end.attrs for end in earlier.find("ol", data_log=True).find_all("li", data_log_end=True))


def test_a_posted_long_logs_frames_are_one_window(client):
    data = client.post("/frames.json", json={"code": CODE, "moves": LONG_LOG, "step": 3000}).get_json()
    assert (data["start"], data["total"], len(data["frames"])) == (2800, 5000, LOG_PAGE + 1)
    illegal = client.post("/frames.json", json={"code": CODE, "moves": LONG_LOG + " T1>T2", "step": 0})
    assert illegal.status_code == 422  # 5,001 actions: more than FRAMES_MAX_ACTIONS
    broken = client.post("/frames.json", json={"code": CODE, "moves": "S U " * 300 + "T1>T2 S"}).get_json()
    assert broken["total"] == 600 and broken["error"]["index"] == 600 and len(broken["frames"]) == LOG_PAGE + 1


# -- caching and validators ------------------------------------------------------------------

def test_the_record_pages_viewer_is_rendered_once_per_step_and_language(client, long_record):
    url = f"/records/{long_record['id']}"
    with mock.patch.object(pages, "viewer_state", wraps=pages.viewer_state) as made:
        first = client.get(url, query_string={"step": 2500})
        again = client.get(url, query_string={"step": 2500})
        client.get(url, query_string={"step": 2500, "lang": "fi"})
        client.get(url, query_string={"step": 2501})
    assert made.call_count == 3
    assert first.get_data() == again.get_data()


def test_a_record_page_has_a_strong_etag_and_answers_304(client, long_record):
    url = f"/records/{long_record['id']}?step=17"
    first = client.get(url)
    tag = first.headers["ETag"]
    assert tag.startswith('"') and first.headers["Cache-Control"] == "no-cache"
    not_modified = client.get(url, headers={"If-None-Match": tag})
    assert not_modified.status_code == 304 and not_modified.get_data() == b""
    zipped = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip" and zipped.headers["ETag"].startswith("W/")
    assert gzip.decompress(zipped.get_data()) == first.get_data()
    assert client.get(url, headers={"If-None-Match": zipped.headers["ETag"], "Accept-Encoding": "gzip"}) \
        .status_code == 304
    assert client.get(f"/records/{long_record['id']}?step=18", headers={"If-None-Match": tag}).status_code == 200


def test_a_records_page_follows_a_change_of_its_status_while_its_viewer_is_cached(app, client, long_record):
    from sqlalchemy import update

    from api.platform.models import Record

    url = f"/records/{long_record['id']}"
    before = client.get(url)
    with app.extensions["api.platform.db"].sessions() as session:
        session.execute(update(Record).where(Record.id == long_record["id"]).values(status="hidden"))
        session.commit()
    after = client.get(url, headers={"If-None-Match": before.headers["ETag"]})
    assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
    assert "This record is hidden" in after.get_data(as_text=True)


# -- what the viewer shows at a step --------------------------------------------------------------

def test_each_step_shows_the_players_clock_when_times_were_sent(client):
    moves = play_greedy("YU1-C-AAAAAAB", 30)
    times = [61_500 * (i + 1) for i in range(len(moves))]
    response = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAB", "player": "ann",
                                                    "moves": " ".join(moves), "times": times})
    record = response.get_json()
    document = parse(client.get(f"/records/{record['id']}?step=3").get_data(as_text=True))
    assert document.find("dd", data_counter="clock").text == "3:04" == clock_text(times[2])
    start = parse(client.get(f"/records/{record['id']}?step=0").get_data(as_text=True))
    assert start.find("dd", data_counter="clock").text == "0:00"
    end = parse(client.get(f"/records/{record['id']}").get_data(as_text=True))  # the finished game
    assert end.find("dd", data_counter="clock").text == clock_text(times[-1])
    frames = client.get(f"/records/{record['id']}/frames.json").get_json()["frames"]
    assert [f["time"] for f in frames] == [None, *times]
    assert clock_text(3_723_000) == "1:02:03"
    untimed = client.post("/api/v1/records", json={"code": "YU1-C-AAAAAAB", "player": "bo",
                                                   "moves": " ".join(moves)}).get_json()
    document = parse(client.get(f"/records/{untimed['id']}?step=3").get_data(as_text=True))
    assert not document.find_all("dd", data_counter="clock")


def test_the_moved_card_and_what_it_carried_glow_on_the_servers_board(client, submit):
    log = play_greedy("YU1-C-AAAAAAB", 40)
    record = submit("ann", "YU1-C-AAAAAAB", " ".join(log))
    canonical = record["canonical"].split()
    frames = client.get(f"/records/{record['id']}/frames.json").get_json()["frames"]
    checked = 0
    for step, text in enumerate(canonical, 1):
        frame = frames[step]
        if not frame["card"] or not frame["to"].startswith("T"):
            continue
        document = parse(client.get(f"/records/{record['id']}?step={step}").get_data(as_text=True))
        board = document.find("div", data_board=True)
        assert board.find("div", data_pile=frame["from"]).attrs["class"].split()[-1] == "moved-from"
        column = board.find("div", data_pile=frame["to"])
        assert "moved-to" in column.attrs["class"]
        up = next(c["up"] for i, c in enumerate(frame["board"]["columns"], 1) if f"T{i}" == frame["to"])
        glowing = [card.attrs["data-card"] for card in column.find_all(class_="moved")]
        assert glowing == up[up.index(frame["card"]):], (text, glowing)  # the moved card, not the column's top
        checked += len(glowing) > 1
    assert checked  # a group move was among them


def test_a_board_tells_the_css_how_long_its_longest_column_is(client):
    from api.pages.board import board_view
    from api.pages.views import LONGEST_BUCKETS, longest_bucket

    view = board_view(Game.from_code("YU1-C-AAAAAAB").position)
    assert longest_bucket(view) == 12  # 6 face-down and 5 face-up cards
    view["columns"][0]["up"] = ["KS"] * 21
    assert longest_bucket(view) == 26 and 26 in LONGEST_BUCKETS
    document = parse(client.get("/deals/YU1-C-AAAAAAB").get_data(as_text=True))
    assert document.find("div", data_board=True).attrs["data-longest"] == "12"
