"""Fair play: players and their names, tokens, who submits for whom, what solvability
discloses, hints, the flags on records (assisted, copy, solver-like, timing), empty logs,
and the review queue with its decisions."""

from __future__ import annotations

from datetime import UTC

import pytest

from tests.play import play_greedy

API = "/api/v1"
PROBLEMS = "https://solitaire-verifier.example/problems/"
FT = "FT1-N-AAAAAAB"
YU = "YU1-C-AAAAAAB"  # winnable within the suite's node budget


def register(client, name):
    return client.post(f"{API}/players", json={"name": name})


def token_of(client, name) -> str:
    response = register(client, name)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def submit(client, token=None, **body):
    headers = bearer(token) if token else {}
    return client.post(f"{API}/records", json={"code": FT, "moves": "T7>F S", **body}, headers=headers)


# -- registration and names ----------------------------------------------------

def test_registering_answers_the_token_once_and_stores_only_its_hash(client, app):
    response = register(client, "  ann  ")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"id", "name", "token"} and body["name"] == "ann" and body["token"].startswith("svp_")
    assert response.headers["Location"] == f"{API}/players/ann"
    from api.platform.auth import hash_token
    from api.platform.models import Player

    with app.extensions["api.platform.db"].sessions() as session:
        [player] = session.query(Player).all()
    assert player.token_hash == hash_token(body["token"]) and body["token"] not in repr(vars(player))
    profile = client.get(f"{API}/players/ann").get_json()
    assert profile["name"] == "ann" and profile["registered"] is True and set(profile) == {
        "id", "name", "registered", "created_at"}


@pytest.mark.parametrize("first, second, holder", [
    ("René", "Rene\u0301", "René"),                     # NFC and NFD
    ("Rene\u0301", "René", "René"),                     # stored in NFC whichever came first
    ("coe", "\u0441\u043e\u0435", "coe"),                # Cyrillic с, о, е (one script: allowed, reads as coe)
    ("ann", "\uff41nn", "ann"),                          # full-width a
    ("ann", "\U0001d41a\U0001d427\U0001d427", "ann"),    # mathematical bold
    ("ann", "ANN", "ann"),                               # case
    ("\u0441\u043e\u0435", "coe", "\u0441\u043e\u0435"),  # whichever came first holds the skeleton
    ("bill", "bi\u217c\u217c", "bill"),                  # small roman numeral fifty reads as l
])
def test_a_name_that_reads_as_a_taken_one_is_409_naming_the_player(client, first, second, holder):
    assert register(client, first).status_code == 201
    response = register(client, second)
    assert response.status_code == 409
    problem = response.get_json()
    assert problem["type"] == PROBLEMS + "name-taken" and problem["player"] == holder
    assert repr(holder) in problem["detail"]
    # the profile is found by any spelling that reads as the name
    assert client.get(f"{API}/players/{second}").get_json()["name"] == holder


def test_names_are_stored_in_nfc(client):
    assert register(client, "Zoe\u0308").get_json()["name"] == "Zoë"


@pytest.mark.parametrize("name, words", [
    ("\u3164", "looks blank"),                    # Hangul filler (a "letter" to Unicode)
    ("\u2800", "looks blank"),                    # blank Braille pattern
    ("\u3164\u3164\u3164", "looks blank"),
    ("a\u3164b", "character 2 (U+3164) looks blank"),
    ("a\u3000b", "(U+3000) is not printable"),          # ideographic space
    ("---", "must contain a letter or a digit"),
    ("!!", "must contain a letter or a digit"),
    ("a" + "\u0301" * 4, "more than 3 combining marks"),
    ("z" + "\u0300\u0301\u0302\u0303\u0304" * 5, "more than 3 combining marks"),
    ("\u0301abc", "must not start with a combining mark"),
    ("", "Must not be empty"),
    ("a\u200db", "not printable"),                # zero-width joiner
    ("\u0430nn", "character 2 ('n', U+006E) mixes scripts (Cyrillic, Latin)"),  # Cyrillic a, Latin nn
])
def test_names_that_cannot_be_a_players_are_422(client, name, words):
    response = register(client, name)
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["type"] == PROBLEMS + "validation-error" and problem["errors"][0]["field"] == "name"
    assert words in problem["detail"]


@pytest.mark.parametrize("name", ["Nguyễn", "क्षत्रिय", "李雷", "Ångström", "x1", "김민준"])
def test_names_in_any_script_are_fine(client, name):
    assert register(client, name).status_code == 201


@pytest.mark.parametrize("body", [{}, {"name": 5}, {"name": None}, {"name": "x" * 33}, {"name": "a", "extra": 1}])
def test_bad_registration_bodies_are_422(client, body):
    assert register(client, None).status_code in (400, 415, 422)
    response = client.post(f"{API}/players", json=body)
    assert response.status_code == 422


def test_an_unknown_player_is_404(client):
    response = client.get(f"{API}/players/nobody")
    assert response.status_code == 404 and "nobody" in response.get_json()["detail"]


# -- tokens, and submitting for someone else -------------------------------------

def test_a_player_token_submits_as_its_player(client):
    token = token_of(client, "ann")
    response = submit(client, token)
    assert response.status_code == 201
    record = response.get_json()
    assert record["player"] == "ann" and record["submitted_by"] is None and record["vouched_by"] is None
    assert (record["ranked"], record["flags"], record["status"], record["times"]) == (True, [], "visible", None)
    # naming yourself, in any spelling that reads as your name, is fine; the stored name is yours
    again = submit(client, token, player="ＡＮＮ", moves="T7>F S S")
    assert again.status_code == 201 and again.get_json()["player"] == "ann"


def test_a_player_token_cannot_submit_for_someone_else(client, count_records):
    token = token_of(client, "ann")
    token_of(client, "bob")
    for other in ("bob", "carol"):
        response = submit(client, token, player=other)
        assert response.status_code == 403
        problem = response.get_json()
        assert problem["type"] == PROBLEMS + "wrong-player" and "'ann'" in problem["detail"]
    assert count_records() == 0


def test_a_plain_key_cannot_submit_for_a_registered_player_in_any_spelling(make_empty_app, make_key, count_records):
    app = make_empty_app(API_KEYS_REQUIRED=True)
    client = app.test_client()
    token_of(client, "ann")
    key = make_key("backend")
    for name in ("ann", "\u0391\u039d\u039d", "ANN"):  # (Greek capitals: one script, reads as ANN)
        response = client.post(f"{API}/records", json={"code": FT, "player": name, "moves": "S"}, headers=bearer(key))
        assert response.status_code == 403 and response.get_json()["type"] == PROBLEMS + "wrong-player"
    # names nobody registered are still the key's to use
    response = client.post(f"{API}/records", json={"code": FT, "player": "dora", "moves": "S"}, headers=bearer(key))
    assert response.status_code == 201 and response.get_json()["submitted_by"] == "backend"
    assert count_records() == 1


def test_a_key_allowed_to_vouch_submits_for_registered_players_and_the_record_says_so(client, app):
    from api.platform.auth import create_key

    with app.extensions["api.platform.db"].sessions() as session:
        key = create_key(session, "game-server", vouch=True)[1]
    token_of(client, "ann")
    response = submit(client, key, player="ann")
    assert response.status_code == 201
    record = response.get_json()
    assert (record["player"], record["submitted_by"], record["vouched_by"]) == ("ann", "game-server", "game-server")


def test_tokens_that_are_not_valid_are_401(client):
    for token in ("svp_" + "x" * 43, "svp_bad token", "svp_" + "y" * 300):
        response = submit(client, token, player="ann")
        assert response.status_code == 401 and "WWW-Authenticate" in response.headers


def test_without_a_player_field_an_api_key_or_no_key_is_422(client):
    response = client.post(f"{API}/records", json={"code": FT, "moves": "S"})
    assert response.status_code == 422 and response.get_json()["errors"][0]["field"] == "player"


def test_a_player_token_cannot_use_admin_endpoints(client, records):
    token = token_of(client, "ann")
    record = records.create()
    response = client.post(f"{API}/records/{record.id}/status", json={"status": "hidden", "reason": "mine"},
                           headers=bearer(token))
    assert response.status_code == 403 and "player token" in response.get_json()["detail"]
    assert client.get(f"{API}/review", headers=bearer(token)).status_code == 403


# -- disclosure and hints ----------------------------------------------------------

def test_the_public_solvability_answer_has_no_line_and_the_admin_answer_has_it(client, make_key):
    admin, writer = make_key("boss", admin=True), make_key("writer")
    token = token_of(client, "ann")
    public = client.get(f"{API}/deals/{YU}/solvability")
    assert public.status_code == 200
    body = public.get_json()
    assert body["status"] == "winnable" and "solution" not in body
    assert body["solution_actions"] > 0 and "coverage" in body
    for headers in (bearer(writer), bearer(token)):  # a plain key or a player token: no line either
        assert "solution" not in client.get(f"{API}/deals/{YU}/solvability", headers=headers).get_json()
    full = client.get(f"{API}/deals/{YU}/solvability", headers=bearer(admin)).get_json()
    assert len(full["solution"].split()) == full["solution_actions"] == body["solution_actions"]
    assert {k: v for k, v in full.items() if k != "solution"} == body
    assert client.get(f"{API}/deals/{YU}/solvability", headers=bearer("svk_unknown")).status_code == 401


def test_a_hint_needs_a_player_token_and_is_logged(client, app, make_key):
    body = {"code": YU, "moves": "T7:TS>T2"}
    response = client.post(f"{API}/hint", json=body)
    assert response.status_code == 401 and "player token" in response.get_json()["detail"]
    assert client.post(f"{API}/hint", json=body, headers=bearer(make_key("boss", admin=True))).status_code == 403
    token = token_of(client, "ann")
    assert client.post(f"{API}/hint", json=body, headers=bearer(token)).status_code == 200
    from api.platform.models import Hint

    with app.extensions["api.platform.db"].sessions() as session:
        [hint] = session.query(Hint).all()
        assert (hint.code, hint.actions) == (YU, 1) and hint.position.startswith("YU1-C ")
        assert hint.player_id == client.get(f"{API}/players/ann").get_json()["id"] and hint.at is not None


def test_a_record_after_a_hint_on_that_deal_is_assisted_and_unranked(client, legal_log):
    token = token_of(client, "ann")
    other = token_of(client, "bob")
    assert client.post(f"{API}/hint", json={"code": YU, "moves": ""}, headers=bearer(token)).status_code == 200
    log = legal_log(YU, 6)
    record = submit(client, token, code=YU, moves=log).get_json()
    assert record["ranked"] is False and record["status"] == "visible"
    assert [f["flag"] for f in record["flags"]] == ["assisted"] and record["flags"][0]["review"] is False
    # the same player on another deal, and another player on this deal, are not assisted
    assert submit(client, token).get_json()["ranked"] is True
    assert submit(client, other, code=YU, moves=legal_log(YU, 6, skip=1)).get_json()["ranked"] is True


# -- copies, solver lines, times, empty logs ---------------------------------------

def copyable(code):
    """An honest game long enough that sending its very log again is a copy (its line holds
    ``min_positions`` settled positions; two players' same few moves are not)."""
    return play_greedy(code, 80)


def fast_times(count):
    """Times faster than people play: 10 ms apart."""
    return [10 * (n + 1) for n in range(count)]


def test_a_copied_log_is_stored_unranked_pointing_to_the_original(client, legal_log):
    ann, copycat = token_of(client, "ann"), token_of(client, "copycat")
    log = copyable(FT)
    original = submit(client, ann, moves=log).get_json()
    response = submit(client, copycat, moves=" ".join(log).lower())  # the same canonical log, written otherwise
    assert response.status_code == 201
    copy = response.get_json()
    assert copy["ranked"] is False and copy["copy_of"] == original["id"] and copy["status"] == "visible"
    [flag] = copy["flags"]
    assert flag["flag"] == "copy" and flag["evidence"]["original"] == original["id"] and flag["evidence"]["share_of_original"] == 1
    assert str(original["id"]) in flag["reason"]
    assert client.get(f"{API}/records/{original['id']}").get_json()["ranked"] is True  # the first keeps its rank
    board = client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"]
    assert [e["player"] for e in board] == ["ann"]
    # the copy stays readable by id, with its flags
    assert client.get(f"{API}/records/{copy['id']}").get_json() == copy


def test_every_later_copy_points_to_the_first_record_of_the_log(client, legal_log):
    log = copyable(FT)
    first = submit(client, token_of(client, "ann"), moves=log).get_json()
    copies = [submit(client, token_of(client, name), moves=log).get_json() for name in ("bob", "cat", "dan")]
    assert [(c["copy_of"], c["ranked"]) for c in copies] == [(first["id"], False)] * 3


def test_the_services_own_solver_line_goes_to_review(client, make_key):
    admin = make_key("boss", admin=True)
    line = client.get(f"{API}/deals/{YU}/solvability", headers=bearer(admin)).get_json()["solution"]
    token = token_of(client, "cheater")
    record = submit(client, token, code=YU, moves=line).get_json()
    assert record["won"] is True and record["ranked"] is False and record["status"] == "review"
    [flag] = record["flags"]
    assert flag["flag"] == "solver-like" and flag["review"] is True and flag["evidence"]["solver_share"] == 1.0
    assert client.get(f"{API}/leaderboard?variant=yukon-classic").get_json()["entries"] == []


def test_superhuman_times_go_to_review(client, legal_log):
    token = token_of(client, "bot")
    log = legal_log(FT, 30)
    times = [60 * (i + 1) for i in range(30)]  # one action every 60 ms
    record = submit(client, token, moves=log, times=times, elapsed_ms=1900).get_json()
    assert record["status"] == "review" and record["ranked"] is False and record["times"] == times
    [flag] = record["flags"]
    assert flag["flag"] == "timing" and flag["evidence"]["median_gap_ms"] == 60


def test_elapsed_ms_that_disagrees_with_the_times_goes_to_review(client, legal_log):
    token = token_of(client, "fibber")
    log = legal_log(FT, 10)
    times = [1500 * (i + 1) for i in range(10)]
    record = submit(client, token, moves=log, times=times, elapsed_ms=2000).get_json()
    assert record["status"] == "review" and "elapsed_ms (2000 ms) disagrees" in record["flags"][0]["reason"]
    human = submit(client, token, moves=log[:9], times=times[:9], elapsed_ms=14000).get_json()
    assert (human["status"], human["ranked"], human["flags"]) == ("visible", True, [])


def test_a_game_without_times_is_accepted_and_shown_untimed(client):
    record = submit(client, token_of(client, "ann")).get_json()
    assert record["times"] is None and record["ranked"] is True


@pytest.mark.parametrize("times, field, words", [
    ([100], "times", "1 times for a log of 2 actions"),
    ([100, 50], "times.1", "earlier than the time before it"),
    ([-1, 5], "times.0", "greater than or equal to 0"),
    ([1, "2"], "times.1", "Not a valid integer"),
    ("fast", "times", "Not a valid list"),
])
def test_bad_times_are_422_naming_the_place(client, count_records, times, field, words):
    response = submit(client, token_of(client, "ann"), times=times)
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["errors"][0]["field"] == field and words in problem["detail"]
    assert count_records() == 0


@pytest.mark.parametrize("moves", ["", "   ", []])
def test_an_empty_log_is_refused(client, count_records, moves):
    response = submit(client, token_of(client, "spam"), moves=moves)
    assert response.status_code == 422 and response.get_json()["type"] == PROBLEMS + "empty-log"
    assert count_records() == 0


# -- review ----------------------------------------------------------------------

def flagged(client, legal_log, count=3):
    """``count`` records sent to review by their times, oldest first."""
    ids = []
    for i in range(count):
        token = token_of(client, f"fast{i}")
        log = legal_log(FT, 10, skip=i)
        ids.append(submit(client, token, moves=log, times=list(range(10, 110, 10))).get_json()["id"])
    return ids


def test_the_review_queue_lists_flagged_records_oldest_first_for_admin_keys(client, make_key, legal_log):
    admin, writer = make_key("boss", admin=True), make_key("writer")
    ids = flagged(client, legal_log)
    submit(client, token_of(client, "human"))  # not flagged
    assert client.get(f"{API}/review").status_code == 401
    assert client.get(f"{API}/review", headers=bearer(writer)).status_code == 403
    page = client.get(f"{API}/review?limit=2", headers=bearer(admin)).get_json()
    assert [r["id"] for r in page["items"]] == ids[:2] and page["next"] == ids[1]
    assert all(r["flags"][0]["flag"] == "timing" and r["flags"][0]["evidence"] for r in page["items"])
    rest = client.get(f"{API}/review?limit=2&after={page['next']}", headers=bearer(admin)).get_json()
    assert [r["id"] for r in rest["items"]] == ids[2:] and rest["next"] is None
    assert client.get(f"{API}/review?limit=0", headers=bearer(admin)).status_code == 422
    assert client.get(f"{API}/review?after=-1", headers=bearer(admin)).status_code == 422
    listed = client.get(f"{API}/records?status=review").get_json()
    assert sorted(r["id"] for r in listed["items"]) == ids


def test_review_decisions_keep_their_history_and_clear_or_confirm(client, make_key, legal_log):
    admin = make_key("boss", admin=True)
    cleared, confirmed, _ = flagged(client, legal_log)

    def decide(record_id, status, reason):
        response = client.post(f"{API}/records/{record_id}/status", json={"status": status, "reason": reason},
                               headers=bearer(admin))
        assert response.status_code == 200
        return response.get_json()

    record = decide(cleared, "visible", "a speedrunner: checked the video")
    assert (record["status"], record["ranked"]) == ("visible", True)
    assert record["flags"][0]["flag"] == "timing"  # the evidence stays on the record
    assert [(c["status"], c["actor"], c["reason"]) for c in record["history"]] == [
        ("visible", "boss", "a speedrunner: checked the video")]
    record = decide(confirmed, "hidden", "a bot")
    assert (record["status"], record["ranked"]) == ("hidden", False)
    record = decide(confirmed, "review", "appeal received")
    record = decide(confirmed, "visible", "appeal granted")
    assert [c["status"] for c in record["history"]] == ["hidden", "review", "visible"]
    board = client.get(f"{API}/leaderboard?variant=forty-thieves").get_json()["entries"]
    assert sorted(e["record_id"] for e in board) == sorted([cleared, confirmed])
    queue = client.get(f"{API}/review", headers=bearer(admin)).get_json()["items"]
    assert len(queue) == 1


def test_clearing_a_review_keeps_a_copy_unranked(client, make_key, legal_log):
    admin = make_key("boss", admin=True)
    log = copyable(FT)
    submit(client, token_of(client, "ann"), moves=log)
    copy = submit(client, token_of(client, "bob"), moves=log, times=fast_times(len(log))).get_json()
    assert sorted(f["flag"] for f in copy["flags"]) == ["copy", "timing"] and copy["status"] == "review"
    record = client.post(f"{API}/records/{copy['id']}/status", json={"status": "visible", "reason": "human"},
                         headers=bearer(admin)).get_json()
    assert (record["status"], record["ranked"]) == ("visible", False)


def test_review_cli_lists_and_decides(app, client, legal_log):
    ids = flagged(client, legal_log, count=2)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["review", "list"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [int(line.split()[0]) for line in lines if line[:1].isdigit()] == ids
    assert "timing" in result.stdout
    result = runner.invoke(args=["review", "decide", str(ids[0]), "visible", "--reason", "looked at it",
                                 "--actor", "moderator-ann"])
    assert result.exit_code == 0, result.output
    record = client.get(f"{API}/records/{ids[0]}").get_json()
    assert record["status"] == "visible" and record["ranked"] is True
    assert [(c["actor"], c["reason"]) for c in record["history"]] == [("moderator-ann", "looked at it")]
    assert runner.invoke(args=["review", "decide", "999999", "hidden", "--reason", "x"]).exit_code != 0
    assert runner.invoke(args=["review", "decide", str(ids[1]), "gone", "--reason", "x"]).exit_code != 0
    assert runner.invoke(args=["review", "decide", str(ids[1]), "hidden", "--reason", "  "]).exit_code != 0
    result = runner.invoke(args=["review", "list"])
    assert [int(line.split()[0]) for line in result.stdout.splitlines() if line[:1].isdigit()] == ids[1:]


def test_a_player_token_is_enough_where_keys_are_required(make_empty_app):
    client = make_empty_app(API_KEYS_REQUIRED=True).test_client()
    token = token_of(client, "ann")
    assert submit(client, token).status_code == 201
    assert submit(client, None, player="ann").status_code == 401


def test_a_legacy_look_alike_is_found_by_its_exact_name(app, client):
    """A player kept from before registration (no skeleton: it read as an older player's name) is
    still found by its own name; any other spelling finds the older one."""
    from datetime import datetime

    from api.platform.models import Player
    from api.players.accounts import skeleton_hash

    with app.extensions["api.platform.db"].sessions() as session:
        session.add_all([Player(name="ann", skeleton_hash=skeleton_hash("ann"), created_at=datetime.now(UTC)),
                         Player(name="\u0430nn", skeleton_hash=None, created_at=datetime.now(UTC))])
        session.commit()
    assert client.get(f"{API}/players/\u0430nn").get_json()["name"] == "\u0430nn"
    assert client.get(f"{API}/players/ANN").get_json()["name"] == "ann"


def test_players_token_hands_a_kept_name_a_token_once(app, client, records):
    records.create(player="oldtimer")
    from api.platform.models import Player
    from api.players.accounts import adopt

    with app.extensions["api.platform.db"].sessions() as session:
        adopt(session, "oldtimer")
        session.commit()
        assert session.query(Player).filter_by(name="oldtimer").one().token_hash is None
    runner = app.test_cli_runner()
    result = runner.invoke(args=["players", "token", "OLDTIMER"])
    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert token.startswith("svp_") and "oldtimer" in result.stderr
    record = submit(client, token).get_json()
    assert record["player"] == "oldtimer"
    assert client.get(f"{API}/players/oldtimer").get_json()["registered"] is True
    again = runner.invoke(args=["players", "token", "oldtimer"])
    assert again.exit_code != 0 and "has a token already" in again.output
    replaced = runner.invoke(args=["players", "token", "oldtimer", "--replace"]).stdout.strip()
    assert submit(client, token, moves="S").status_code == 401  # the old token stops working
    assert submit(client, replaced, moves="S").status_code == 201
    assert runner.invoke(args=["players", "token", "nobody"]).exit_code != 0


def test_a_name_with_a_slash_has_a_page(client):
    assert register(client, "a/b").status_code == 201
    assert client.get("/players/a%2Fb").status_code == 200


def test_export_and_import_keep_the_fair_play_fields(client, app, make_app, empty_database_url, legal_log, tmp_path):
    log = copyable(FT)
    submit(client, token_of(client, "ann"), moves=log)
    submit(client, token_of(client, "bob"), moves=log, times=fast_times(len(log)))
    backup = tmp_path / "records.jsonl"
    assert app.test_cli_runner().invoke(args=["records", "export", str(backup)]).exit_code == 0
    restored = make_app(DATABASE_URL=empty_database_url)
    result = restored.test_cli_runner().invoke(args=["records", "import", str(backup)])
    assert result.exit_code == 0, result.output
    before = client.get(f"{API}/records?status=all").get_json()["items"]
    after = restored.test_client().get(f"{API}/records?status=all").get_json()["items"]
    assert after == before and after[0]["flags"] and after[0]["copy_of"] == after[1]["id"]
    assert restored.test_client().get(f"{API}/players/bob").get_json()["registered"] is True  # the token came along
