"""Player names per UTS #39: look-alike names (the whole of confusables.txt), invisible
characters, mixed scripts, and names that must still register."""

from __future__ import annotations

import unicodedata

import pytest

from api.fairplay.names import DEFAULT_IGNORABLE, invisible, prototypes, skeleton
from api.players.accounts import BadName, NameTaken, register

API = "/api/v1"
PROBLEMS = "https://solitaire-verifier.example/problems/"
#: base names that hold every ASCII letter between them
BASES = ("kate", "bill", "leo", "ann", "chuck", "dave", "fritz", "gwyn", "jim", "pax", "quinn", "sam")


def ascii_letter_confusables() -> list[tuple[str, str]]:
    """Every single-character confusable of an ASCII letter in the shipped confusables.txt."""
    return sorted((source, target) for source, target in prototypes().items()
                  if len(source) == 1 and len(target) == 1 and target.isascii() and target.isalpha())


def test_the_shipped_file_has_the_confusables_the_issue_counted():
    found = ascii_letter_confusables()
    assert len(found) == 1264
    assert set("".join(BASES)) == set("abcdefghijklmnopqrstuvwxyz")


def test_no_confusable_of_an_ascii_letter_registers_beside_the_original(app):
    """For each of the 1,264 confusables and each base name holding its letter (in either
    case), every one-character substitution is refused or answered name-taken."""
    outcomes = {"refused": 0, "taken": 0}
    with app.extensions["api.platform.db"].sessions() as session:
        for base in BASES:
            register(session, base)
        session.commit()
        for source, target in ascii_letter_confusables():
            for base in BASES:
                for at, letter in enumerate(base):
                    if letter != target.lower():
                        continue
                    name = base[:at] + source + base[at + 1:]
                    try:
                        register(session, name)
                    except BadName:
                        outcomes["refused"] += 1
                    except NameTaken as taken:
                        assert taken.player.name == base, name
                        outcomes["taken"] += 1
                    else:
                        pytest.fail(f"{name!r} (U+{ord(source):04X} for {target!r}) registered beside {base!r}")
                    finally:
                        session.rollback()
    assert outcomes["refused"] > 300 and outcomes["taken"] > 300  # both ways of being stopped are exercised


@pytest.mark.parametrize("original, look_alike", [
    ("KATE", "\u039a\u0391\u03a4\u0395"),    # Greek capitals
    ("bill", "\u0392ILL"),                   # Greek capital beta, then Latin
    ("leo", "Ieo"),                          # capital I for small l
    ("bill", "biII"),
    ("bill", "BILL"),                        # case
    ("ivan", "Ivan"),                        # case, with the I that reads as l
])
def test_the_issues_look_alikes_do_not_register(client, original, look_alike):
    assert client.post(f"{API}/players", json={"name": original}).status_code == 201
    response = client.post(f"{API}/players", json={"name": look_alike})
    assert response.status_code in (409, 422), response.get_json()
    if response.status_code == 409:
        assert response.get_json()["player"] == original


@pytest.mark.parametrize("char", ["\u034f", *map(chr, range(0xFE00, 0xFE10)), "\U000e0100",
                                  *map(chr, range(0x180B, 0x1810)), "\u17b4", "\u17b5", "\u00ad", "\u2064"])
def test_invisible_characters_are_refused_naming_the_position_and_the_character(client, char):
    assert client.post(f"{API}/players", json={"name": "ann"}).status_code == 201
    for name in ("a" + char + "nn", "ann" + char):
        response = client.post(f"{API}/players", json={"name": name})
        assert response.status_code == 422
        problem = response.get_json()
        assert problem["type"] == PROBLEMS + "validation-error" and problem["errors"][0]["field"] == "name"
        position = name.index(char) + 1
        if char.isprintable():  # (the request schema refuses format characters first, naming them too)
            assert f"character {position} (U+{ord(char):04X})" in problem["detail"]
            assert "does not show" in problem["detail"] or "looks blank" in problem["detail"]
        else:
            assert f"Character {position} (U+{ord(char):04X})" in problem["detail"]


def test_variation_selectors_and_tags_are_named_as_such():
    assert invisible("\ufe0f") == invisible("\U000e0100") == invisible("\u180b") == "a variation selector"
    assert invisible("\U000e0041") == invisible("\U000e0001") == "a tag character"
    assert invisible("a") is None and invisible("\u0301") is None


def test_the_default_ignorable_table_is_ordered_and_holds_only_invisible_code_points():
    previous = -1
    for first, last, _ in DEFAULT_IGNORABLE:
        assert previous < first <= last
        previous = last
        for code in range(first, min(last, first + 64) + 1):
            assert unicodedata.category(chr(code)) in ("Cf", "Mn", "Lo", "Cn", "Zs"), hex(code)
            assert not unicodedata.category(chr(code)).startswith(("L", "N")) or chr(code) in \
                "\u115f\u1160\u3164\uffa0", hex(code)  # letters only where Unicode calls fillers letters


@pytest.mark.parametrize("name, scripts", [
    ("\u0430nn", "Cyrillic, Latin"),          # Latin may not go with Cyrillic …
    ("k\u03b1te", "Greek, Latin"),            # … nor Greek
    ("\u0391\u0430", "Cyrillic, Greek"),      # two non-Latin scripts
    ("abc\u0915\u0a95", "Devanagari, Gujarati, Latin"),  # Latin and two others
])
def test_names_that_mix_scripts_are_refused(client, name, scripts):
    response = client.post(f"{API}/players", json={"name": name})
    assert response.status_code == 422
    assert f"mixes scripts ({scripts})" in response.get_json()["detail"]


@pytest.mark.parametrize("name", [
    "김민준", "Jääskeläinen", "Nguyễn", "Ångström", "李雷", "Tanaka田中たなかタナカ", "Li李ㄅ", "Kim김金",
    "Ravi रवि", "Иван", "Σοφία", "ΚΑΤΕ", "anna-maria_2", "Zoë 3",
])
def test_names_in_one_script_or_an_allowed_mix_register(client, name):
    response = client.post(f"{API}/players", json={"name": name})
    assert response.status_code == 201, response.get_json()


def test_the_skeleton_is_case_blind_and_settles():
    # (Latin only: Greek capitals map to Latin letters and their small forms do not, so Greek is not case-blind)
    for word in ("ivan", "bill", "kate", "jääskeläinen", "quinn"):
        assert len({skeleton(w) for w in (word, word.upper(), word.capitalize(), word.swapcase())}) == 1
    for source in prototypes():
        once = skeleton(source)
        assert skeleton(once) == once, hex(ord(source[0]))  # a skeleton is its own skeleton


def test_an_imported_look_alike_name_is_kept_and_flagged_for_review(app):
    from api.players.accounts import adopt

    with app.extensions["api.platform.db"].sessions() as session:
        leo, look_alike = adopt(session, "leo"), adopt(session, "Ieo")
        session.commit()
        assert (leo.name_review, leo.skeleton_hash is not None) == (None, True)
        assert look_alike.skeleton_hash is None
        assert look_alike.name_review == f"the name reads as 'leo' (player {leo.id}), an older player's"
