"""Player names per UTS #39 (Unicode Security Mechanisms): the skeleton two look-alike
names share, the invisible characters a name may not hold, and the mix of scripts it
may use.

- **Skeleton** (:func:`skeleton`): on the NFD form, each character is mapped to its
  confusable prototype (``api/fairplay/data/confusables.txt``, Unicode's published file), then
  the text is casefolded (with NFKC, so that compatibility forms such as circled or
  full-width letters fold too), then mapped again, and so on until nothing changes
  (two or three rounds). Mapping *before* casefolding is what makes Greek "ΚΑΤΕ" read
  as "KATE" (Greek capitals map to Latin capitals; their small forms do not map to
  Latin letters); mapping again after it catches prototypes that casefold to another
  confusable. One fold is added: capital "I" maps to small "l" but casefolds to
  "i", so "i" becomes "l" after casefolding, and "bill", "BILL", "biII" and "Bili"
  share one skeleton (the price of names being both case-blind and "I"/"l"-blind).
- **Invisible characters** (:func:`invisible`): default-ignorable code points
  (``Default_Ignorable_Code_Point`` of ``DerivedCoreProperties.txt``), which include
  the variation selectors and the tag characters, are refused outright: they render
  as nothing, so "ann" with one of them looks like "ann".
- **Scripts** (:func:`mixed_scripts`): UTS #39's *moderately restrictive* profile
  (section 5.2). With each character's ``Script_Extensions`` (Common and Inherited
  go with any script), augmented for Han (Han also counts as Japanese, Korean and
  Han-with-Bopomofo, Hiragana and Katakana as Japanese, Hangul as Korean, Bopomofo
  as Han-with-Bopomofo), a name is allowed when it is single-script, or Latin with
  Han and Hiragana and Katakana, or Latin with Han and Bopomofo, or Latin with Han
  and Hangul, or Latin with one other *recommended* script (UAX #31) other than
  Cyrillic and Greek.

The script data is fontTools' copy of the Unicode Character Database
(``fontTools.unicodedata``, kept current by its maintainers): Python's
``unicodedata`` has no script property.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from functools import lru_cache
from pathlib import Path

from fontTools import unicodedata as ucd

CONFUSABLES = Path(__file__).resolve().parent / "data" / "confusables.txt"

#: ``Default_Ignorable_Code_Point`` (``DerivedCoreProperties.txt``, Unicode 15.1; unchanged since 9.0
#: but for U+061C added in 6.3): (first, last, what it is), in code point order
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD, "a soft hyphen"),
    (0x034F, 0x034F, "a combining grapheme joiner"),
    (0x061C, 0x061C, "a bidirectional mark"),
    (0x115F, 0x1160, "a Hangul filler"),
    (0x17B4, 0x17B5, "an invisible Khmer vowel"),
    (0x180B, 0x180D, "a variation selector"),
    (0x180E, 0x180E, "a Mongolian vowel separator"),
    (0x180F, 0x180F, "a variation selector"),
    (0x200B, 0x200F, "a zero-width or bidirectional character"),
    (0x202A, 0x202E, "a bidirectional control"),
    (0x2060, 0x206F, "an invisible operator or control"),
    (0x3164, 0x3164, "a Hangul filler"),
    (0xFE00, 0xFE0F, "a variation selector"),
    (0xFEFF, 0xFEFF, "a zero-width no-break space"),
    (0xFFA0, 0xFFA0, "a Hangul filler"),
    (0xFFF0, 0xFFF8, "an unassigned specials character"),
    (0x1BCA0, 0x1BCA3, "a shorthand format control"),
    (0x1D173, 0x1D17A, "a musical format control"),
    (0xE0000, 0xE007F, "a tag character"),
    (0xE0080, 0xE00FF, "a reserved default-ignorable code point"),
    (0xE0100, 0xE01EF, "a variation selector"),
    (0xE01F0, 0xE0FFF, "a reserved default-ignorable code point"),
)
_IGNORABLE_STARTS = [first for first, _, _ in DEFAULT_IGNORABLE]

#: UAX #31 table 5, the recommended scripts (ISO 15924 codes, as ``Script_Extensions`` gives them)
RECOMMENDED = frozenset({
    "Arab", "Armn", "Beng", "Bopo", "Cyrl", "Deva", "Ethi", "Geor", "Grek", "Gujr", "Guru", "Hang", "Hani",
    "Hebr", "Hira", "Kana", "Knda", "Khmr", "Laoo", "Latn", "Mlym", "Mymr", "Orya", "Sinh", "Taml", "Telu",
    "Thaa", "Thai", "Tibt"})
#: the scripts Latin may not be mixed with under the moderately restrictive profile
NOT_WITH_LATIN = frozenset({"Cyrl", "Grek"})
#: UTS #39 section 5.1: the writing systems a Han, kana, Hangul or Bopomofo character belongs to as well
AUGMENTED = {"Hani": {"Hanb", "Jpan", "Kore"}, "Hira": {"Jpan"}, "Kana": {"Jpan"}, "Hang": {"Kore"},
             "Bopo": {"Hanb"}}
#: the writing systems that make Latin + Han + … highly restrictive
HAN_SYSTEMS = frozenset({"Hanb", "Jpan", "Kore"})
#: rounds of mapping and casefolding at most (confusables.txt settles in three)
MAX_ROUNDS = 6
#: after casefolding: capital I's prototype is small l, its case fold is small i (see the module's docstring)
CASE_FOLDS = str.maketrans({"i": "l"})
#: Script_Extensions that go with any script
ANY_SCRIPT = frozenset({"Zyyy", "Zinh"})


@lru_cache(maxsize=1)
def prototypes() -> dict[str, str]:
    """Each confusable character's prototype, from Unicode's ``confusables.txt``."""
    table: dict[str, str] = {}
    with CONFUSABLES.open(encoding="utf-8-sig") as data:
        for line in data:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 3:
                continue
            source = "".join(chr(int(c, 16)) for c in fields[0].split())
            table[source] = "".join(chr(int(c, 16)) for c in fields[1].split())
    return table


def _map(text: str) -> str:
    """UTS #39's mapping: each character of an NFD ``text`` to its prototype, then NFD again."""
    table = prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(char, char) for char in text))


def skeleton(name: str) -> str:
    """The form two look-alike names share (see the module's docstring).

    >>> skeleton("René") == skeleton("Rene\\u0301") == skeleton("RENÉ")
    True
    >>> len({skeleton(n) for n in ("ann", "\\u0430nn", "\\uff41nn", "\\U0001d41a\\U0001d427\\U0001d427")})
    1
    >>> skeleton("\\u039a\\u0391\\u03a4\\u0395") == skeleton("kate"), skeleton("biII") == skeleton("bill")
    (True, True)
    """
    text = unicodedata.normalize("NFD", name)
    for _ in range(MAX_ROUNDS):
        folded = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", _map(text)).casefold()
                                       .translate(CASE_FOLDS))
        if folded == text:
            break
        text = folded
    return text


def invisible(char: str) -> str | None:
    """What a default-ignorable ``char`` is (``"a variation selector"``, …), else None.

    >>> invisible("\\ufe0f"), invisible("a")
    ('a variation selector', None)
    """
    code = ord(char)
    index = bisect_right(_IGNORABLE_STARTS, code) - 1
    if index >= 0 and code <= DEFAULT_IGNORABLE[index][1]:
        return DEFAULT_IGNORABLE[index][2]
    return None


def scripts_of(char: str) -> frozenset[str]:
    """The augmented ``Script_Extensions`` of ``char`` (empty for Common and Inherited: any script)."""
    found = set(ucd.script_extension(char))
    if found & ANY_SCRIPT:
        return frozenset()
    for script in list(found):
        found |= AUGMENTED.get(script, set())
    return frozenset(found)


def _allowed(sets: list[frozenset[str]]) -> bool:
    """Whether characters with these augmented script sets make a moderately restrictive string."""
    if not sets:
        return True
    resolved = frozenset.intersection(*sets)
    if resolved:
        return True  # single script
    others = [s for s in sets if "Latn" not in s]
    if len(others) == len(sets):
        return False  # no Latin at all, and no common script: e.g. Greek with Cyrillic
    rest = frozenset.intersection(*others)
    return bool(rest & HAN_SYSTEMS) or bool(rest & (RECOMMENDED - NOT_WITH_LATIN - {"Latn"}))


def mixed_scripts(text: str) -> tuple[int, str, list[str]] | None:
    """None if ``text`` is moderately restrictive; else the position (1-based) and the
    character at which it stops being so, and the names of the scripts it mixes.

    >>> mixed_scripts("Jääskeläinen"), mixed_scripts("김민준"), mixed_scripts("Tanaka田中たなか")
    (None, None, None)
    >>> mixed_scripts("\\u039aate")
    (2, 'a', ['Greek', 'Latin'])
    """
    sets: list[frozenset[str]] = []
    for position, char in enumerate(text, 1):
        scripts = scripts_of(char)
        if not scripts:
            continue
        sets.append(scripts)
        if not _allowed(sets):
            names = sorted({ucd.script_name(ucd.script(c)) for c in text[:position] if scripts_of(c)})
            return position, char, names
    return None
