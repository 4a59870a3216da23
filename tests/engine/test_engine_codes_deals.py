"""Game codes, cards, SplitMix64 and the deals: the vectors of spec/game-codes.md."""

from __future__ import annotations

import pytest

from engine import Card, Game, GameCode, InvalidCardError, InvalidCodeError
from engine.codes import MAX_DEAL
from engine.shuffle import SplitMix64, shuffle

# -- SplitMix64 -----------------------------------------------------------------


def test_splitmix64_from_zero_gives_the_spec_vector():
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


class _Scripted(SplitMix64):
    """A generator whose outputs are given, to see which ones the bounded draw keeps."""

    def __init__(self, outputs):
        super().__init__(0)
        self.outputs = list(outputs)

    def next(self):
        return self.outputs.pop(0)


@pytest.mark.pure_only
def test_bounded_draw_rejects_outputs_under_the_threshold():
    # n = 3: threshold = (2^64 - 3) mod 3 = 1, so 0 is redrawn and 5 gives 5 mod 3 = 2.
    assert ((1 << 64) - 3) % 3 == 1
    rng = _Scripted([0, 5])
    assert rng.below(3) == 2
    assert rng.outputs == []


@pytest.mark.pure_only
def test_bounded_draw_keeps_the_threshold_itself():
    rng = _Scripted([1, 99])
    assert rng.below(3) == 1
    assert rng.outputs == [99]


def test_bounded_draw_needs_a_positive_bound():
    with pytest.raises(ValueError):
        SplitMix64(0).below(0)


@pytest.mark.pure_only
def test_fisher_yates_runs_from_the_end():
    # i = 3, 2, 1 draw below 4, 3, 2: outputs 1, 3, 1 give j = 1, 0, 1
    items = ["a", "b", "c", "d"]
    shuffle(items, _Scripted([1, 3, 1]))
    assert items == ["c", "d", "a", "b"]


def _reference_deck(number: int, decks: int) -> list[str]:
    """The spec's algorithm written out again, independently of the engine."""
    mask = (1 << 64) - 1
    state = number

    def next_value():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    def below(n):
        threshold = ((1 << 64) - n) % n
        while True:
            r = next_value()
            if r >= threshold:
                return r % n

    deck = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"] * decks
    for i in range(len(deck) - 1, 0, -1):
        j = below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize("number", [0, 1, 2, 31, 32, 12345, 2**32 + 7, MAX_DEAL])
def test_deals_follow_the_spec_algorithm(number):
    deck = _reference_deck(number, 1)
    yukon = Game.from_code(GameCode("YU", "C", number)).position
    expected, at = [[deck[0]]], 1
    for k in range(2, 8):
        expected.append(deck[at : at + k + 4])
        at += k + 4
    assert [[str(c) for c in col] for col in yukon.columns] == expected
    assert yukon.down == [0, 1, 2, 3, 4, 5, 6]

    deck = _reference_deck(number, 2)
    forty = Game.from_code(GameCode("FT", "N", number)).position
    assert [[str(c) for c in col] for col in forty.columns] == [deck[4 * i : 4 * i + 4] for i in range(10)]
    assert [str(c) for c in reversed(forty.stock)] == deck[40:]


# -- the deal vectors ------------------------------------------------------------

YUKON_AAAAAAB = """
T1: 7H
T2: (9S) 4H 8D 8H 5C JH
T3: (6H) (9C) JS 5H KH 3S 2H
T4: (JD) (5D) (7D) 4D 2S AH 6C KS
T5: (KD) (TD) (TC) (JC) TH 8C QS 4C 6S
T6: (7S) (AC) (5S) (AD) (KC) 6D QC QD QH 9H
T7: (3H) (3C) (AS) (4S) (2D) (8S) TS 3D 2C 9D 7C
"""

FORTY_AAAAAAB_COLUMNS = [
    "6D 7D JS 8S",
    "KC 7H 6C 8S",
    "6S 9S 5S TD",
    "KH JD AD QC",
    "TC 4H 3S 4S",
    "JS 9C JC KS",
    "5C 3C 7C AS",
    "8C 9S 8H 9H",
    "QH 3H 6S 7H",
    "AC AH AC 6H",
]
FORTY_AAAAAAB_STOCK = """
6D KD 3D KS JC TH 5C 5H 2H 3C 2S 8D 7S 4C 8D 2D
JD 2C 9D 2S 5S 9C 5D 7S 3S 6C 2C AD TD 4C 9D QD 4S 4H QC QD 2D 9H 4D QS
KC TS 7D 6H 5H 5D AH TC 2H KD QH 3D 8C QS 3H 8H TH KH JH TS JH AS 4D 7C
"""


def _spec_columns(layout: str) -> list[list[tuple[str, bool]]]:
    """``T2: (9S) 4H`` -> [("9S", False), ("4H", True)] per column (card, face up)."""
    columns = []
    for line in layout.strip().splitlines():
        _, cells = line.split(":")
        columns.append([(cell.strip("()"), not cell.startswith("(")) for cell in cells.split()])
    return columns


def _dealt(pos) -> list[list[tuple[str, bool]]]:
    return [[(str(card), i >= down) for i, card in enumerate(col)] for col, down in zip(pos.columns, pos.down)]


@pytest.mark.parametrize("code", ["YU1-C-AAAAAAB", "YU1-R-AAAAAAB"])
def test_yukon_vector_card_by_card(code):
    pos = Game.from_code(code).position
    assert _dealt(pos) == _spec_columns(YUKON_AAAAAAB)
    assert [len(c) for c in pos.columns] == [1, 6, 7, 8, 9, 10, 11]
    assert sum(pos.down) == 21
    assert sum(len(c) for c in pos.columns) - sum(pos.down) == 31
    assert pos.foundations == [[], [], [], []]
    assert pos.stock == [] and pos.waste == []
    assert (pos.score, pos.moves, pos.takebacks) == (0, 0, 0)


def test_forty_thieves_vector_card_by_card():
    pos = Game.from_code("FT1-N-AAAAAAB").position
    assert _dealt(pos) == [[(card, True) for card in col.split()] for col in FORTY_AAAAAAB_COLUMNS]
    # the stock is kept with the next card to draw last
    assert [str(c) for c in reversed(pos.stock)] == FORTY_AAAAAAB_STOCK.split()
    assert len(pos.stock) == 64
    assert pos.foundations == [[] for _ in range(8)]
    assert pos.waste == []
    assert (pos.score, pos.moves, pos.takebacks) == (0, 0, 0)


@pytest.mark.parametrize("deal", ["AAAAAAA", "AAAAAAB", "QWERTY2", "7777777"])
def test_the_rule_letter_does_not_change_the_deal(deal):
    classic = Game.from_code(f"YU1-C-{deal}").position
    relaxed = Game.from_code(f"YU1-R-{deal}").position
    assert _dealt(classic) == _dealt(relaxed)
    assert str(classic).split(" ", 1)[1] == str(relaxed).split(" ", 1)[1]
    assert str(classic).startswith("YU1-C ") and str(relaxed).startswith("YU1-R ")


# -- game codes ----------------------------------------------------------------


@pytest.mark.parametrize(
    "deal, number",
    [("AAAAAAA", 0), ("AAAAAAB", 1), ("AAAAABA", 32), ("AAAAAB7", 63), ("7777777", 34359738367), ("BAAAAAA", 32**6)],
)
def test_base32_deal_numbers(deal, number):
    code = GameCode.from_text(f"YU1-C-{deal}")
    assert code.number == number
    assert str(code) == f"YU1-C-{deal}"
    assert str(GameCode("YU", "C", number)) == f"YU1-C-{deal}"
    assert code.deal == deal


def test_largest_deal_number_is_2_to_the_35_minus_1():
    assert MAX_DEAL == 2**35 - 1 == 34359738367
    with pytest.raises(InvalidCodeError) as exc:
        GameCode("YU", "C", MAX_DEAL + 1)
    assert exc.value.part == "deal"
    with pytest.raises(InvalidCodeError):
        GameCode("YU", "C", -1)


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("YU1-C-AAAAAAB", "YU1-C-AAAAAAB"),
        ("yu1-c-aaaaaab", "YU1-C-AAAAAAB"),
        ("  Yu1-r-AaAaAb7\n", "YU1-R-AAAAAB7"),
        ("\tft1-n-aaaaaab ", "FT1-N-AAAAAAB"),
    ],
)
def test_codes_are_case_insensitive_and_trimmed(text, canonical):
    code = GameCode.from_text(text)
    assert str(code) == canonical
    assert GameCode.from_text(str(code)) == code


def test_code_fields():
    code = GameCode.from_text("yu1-r-aaaaaab")
    assert (code.game, code.rules, code.number, code.version) == ("YU", "R", 1, 1)
    assert (code.game_name, code.rules_name, code.variant) == ("yukon", "relaxed", "yukon-relaxed")
    ft = GameCode.from_text("FT1-N-AAAAAAB")
    assert (ft.game_name, ft.rules_name, ft.variant) == ("forty-thieves", "normal", "forty-thieves")
    assert GameCode.from_text("YU1-C-AAAAAAB").variant == "yukon-classic"


def _code_error(text: str) -> InvalidCodeError:
    with pytest.raises(InvalidCodeError) as exc:
        GameCode.from_text(text)
    assert isinstance(exc.value, ValueError)
    return exc.value


@pytest.mark.parametrize(
    "text, part, position, words",
    [
        ("YU2-C-AAAAAAB", "version", 3, "unsupported version 2"),
        ("FT7-N-AAAAAAB", "version", 3, "unsupported version 7"),
        ("YU10-C-AAAAAAB", "version", 3, "unsupported version 10"),
        ("YU-C-AAAAAAB", "version", 3, "version"),
        ("FT1-R-AAAAAAB", "rules", 5, "rule letter R is not valid for FT"),
        ("FT1-C-AAAAAAB", "rules", 5, "rule letter C is not valid for FT"),
        ("YU1-N-AAAAAAB", "rules", 5, "rule letter N is not valid for YU"),
        ("YU1-X-AAAAAAB", "rules", 5, "rule letter X is not valid for YU"),
        ("YU1-C-AAAA0AB", "deal", 11, "character 5 '0' is not base32"),
        ("YU1-C-1AAAAAA", "deal", 7, "character 1 '1' is not base32"),
        ("YU1-C-AAAAAA8", "deal", 13, "character 7 '8' is not base32"),
        ("YU1-C-AA9AAAA", "deal", 9, "character 3 '9' is not base32"),
        ("YU1-C-AAAAA-B", "format", None, "three parts"),
        ("XX1-C-AAAAAAB", "game", 1, "unknown game 'XX'"),
        ("KL1-N-AAAAAAB", "game", 1, "unknown game 'KL'"),
        ("YU1-C-AAAAAA", "deal", 7, "7 characters, found 6"),
        ("YU1-C-AAAAAAAA", "deal", 7, "7 characters, found 8"),
        ("YU1-C-", "deal", 7, "found 0"),
        ("YU1-C", "format", None, "three parts"),
        ("", "format", None, "empty"),
        ("   ", "format", None, "empty"),
    ],
)
def test_code_errors_name_the_part_and_the_position(text, part, position, words):
    error = _code_error(text)
    assert error.part == part
    assert error.position == position
    assert words in str(error)
    if position is not None:
        assert f"position {position}" in str(error)


@pytest.mark.parametrize("char", "0189")
def test_digits_0_1_8_9_are_not_base32(char):
    error = _code_error(f"FT1-N-AAA{char}AAA")
    assert error.part == "deal"
    assert error.position == 10
    assert f"character 4 '{char}' is not base32" in str(error)


@pytest.mark.parametrize("text, position", [("yu1-c-aaaaaaı", 13), ("yu1-c-aaaaaaſ", 13)])
def test_non_ascii_letters_are_not_base32_even_if_they_upper_case_to_one(text, position):
    # 'ı'.upper() == 'I' and 'ſ'.upper() == 'S': only A-Z and 2-7 are base32
    error = _code_error(text)
    assert (error.part, error.position) == ("deal", position)


def test_a_ligature_is_not_two_deal_characters():
    # 'ﬀ'.upper() == 'FF': six characters must stay six
    error = _code_error("yu1-c-aaaaaﬀ")
    assert error.part == "deal"
    assert "found 6" in str(error)


def test_a_code_must_be_text():
    with pytest.raises(InvalidCodeError):
        GameCode.from_text(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("game, rules", [("XX", "C"), ("YU", "N"), ("FT", "C")])
def test_code_constructor_checks_its_fields(game, rules):
    with pytest.raises(InvalidCodeError):
        GameCode(game, rules, 1)


def test_game_from_code_accepts_text_and_codes():
    assert str(Game.from_code(" ft1-n-aaaaaab ").code) == "FT1-N-AAAAAAB"
    with pytest.raises(InvalidCodeError):
        Game.from_code("FT1-R-AAAAAAB")


# -- cards -----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["TD", "10♦", "td", "tD", "10d", "T♦", " TD ", "t♦"])
def test_ten_of_diamonds_in_every_spelling(text):
    card = Card.from_text(text)
    assert card is Card.from_text("TD")
    assert (card.rank, card.suit) == (10, 2)
    assert str(card) == "TD"


def test_every_card_prints_and_parses_back():
    for rank_char, rank in zip("A23456789TJQK", range(1, 14)):
        for suit_char, symbol, suit in zip("SHDC", "♠♥♦♣", range(4)):
            card = Card.from_text(rank_char + suit_char)
            assert (card.rank, card.suit) == (rank, suit)
            assert str(card) == rank_char + suit_char
            assert Card.from_text(rank_char.lower() + symbol) is card
            assert Card.from_text(card.symbol) is card
            assert card.red == (suit_char in "HD")


@pytest.mark.parametrize(
    "text", ["", "1D", "0D", "11D", "1X", "TX", "TDD", "D", "T", "XD", "ZZ", "10", "♦10", "T D", "Aſ", "ıS"]
)
def test_bad_cards_raise(text):
    with pytest.raises(InvalidCardError) as exc:
        Card.from_text(text)
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize("rank, suit", [(0, 0), (14, 0), (1, 4), (1, -1)])
def test_cards_outside_the_deck_raise(rank, suit):
    with pytest.raises(InvalidCardError):
        Card(rank, suit)


def test_a_card_must_be_text():
    with pytest.raises(InvalidCardError):
        Card.from_text(None)  # type: ignore[arg-type]
