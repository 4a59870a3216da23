"""Helpers for the engine and verifier tests: positions built from a few piles,
pushing actions that must pass or be refused, card counts, and a small
depth-first search that finds a won game.

Not a test module (pytest collects ``test_*.py``); the verifier tests import it
too (their ``conftest.py`` puts this folder on the path).
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from engine import DECK, DRAW, Card, Game, IllegalActionError, Move, Position, parse_action
from engine.rules import rules_for_tag


def cards(text: str) -> list[Card]:
    """``"AS 10♦ kd"`` → cards (case and face-down state ignored)."""
    return [Card.from_text(t) for t in text.split()]


def is_canonical(action: object) -> bool:
    """A move in canonical form: it names its card and the foundation's index (the form
    ``Game.push`` returns and ``format_log`` writes; docs/move-notation.md)."""
    return isinstance(action, Move) and action.card is not None and action.target_index is not None


def build_position(
    tag: str,
    columns: list[str | None],
    foundations: str | None = None,
    stock: str | None = None,
    waste: str = "",
    score: int = 0,
    moves: int = 0,
    takebacks: int = 0,
) -> str:
    """The text form of a position with the given piles.

    ``columns`` lists each column bottom to top as space-separated cards, face-down
    ones in lower case (``"9s 4h 8D"``); ``""`` is an empty column. Every card not
    placed explicitly goes to the filler: in Yukon the one column given as
    ``None`` (all face down except its last card), in Forty Thieves the stock
    (when ``stock`` is None; otherwise the ``None`` column, face up). ``stock``
    is listed first drawn first.
    """
    rules = rules_for_tag(tag)
    foundations = foundations or "-" * rules.n_foundations
    used: Counter = Counter()
    for text in columns:
        used.update(cards(text or ""))
    for slot, ch in enumerate(foundations):
        if ch != "-":
            suit = rules.foundation_suits[slot]
            used.update(Card(rank, suit) for rank in range(1, "A23456789TJQK".index(ch) + 2))
    used.update(cards(stock or ""))
    used.update(cards(waste))
    if any(used[card] > rules.decks for card in DECK):
        raise ValueError(f"a card is placed too often: {used.most_common(1)}")
    rest = [card for card in DECK for _ in range(rules.decks - used[card])]
    if rules.has_stock and stock is None:
        stock_cards, filler = rest, []
    else:
        stock_cards, filler = cards(stock or ""), rest
    if filler and None not in columns:
        raise ValueError(f"{len(filler)} cards are not placed and no filler column is given")

    def column_text(text: str | None) -> str:
        if text is None:
            hidden = "".join(str(c).lower() if rules.has_face_down else str(c) for c in filler[:-1])
            return hidden + str(filler[-1]) if filler else "-"
        return "".join(t if t[-1].islower() else str(Card.from_text(t)) for t in text.split()) or "-"

    col_field = "/".join(column_text(text) for text in columns)
    stock_field = "".join(map(str, stock_cards)) or "-"
    waste_field = "".join(map(str, cards(waste))) or "-"
    return f"{tag} {col_field} {foundations} {stock_field} {waste_field} {score} {moves} {takebacks}"


def played(game: Game, text: str) -> str:
    """Push the action ``text``; return its canonical form."""
    return str(game.push(parse_action(text)))


def refused(game: Game, text: str) -> IllegalActionError:
    """Push the action ``text``, expecting a refusal with a sentence that changes nothing."""
    before = (str(game.position), game.actions, game.undos)
    with pytest.raises(IllegalActionError) as exc:
        game.push(parse_action(text))
    assert (str(game.position), game.actions, game.undos) == before
    assert exc.value.message
    return exc.value


def column(game: Game, number: int) -> str:
    """Column ``T<number>`` bottom to top, e.g. ``"KS QH"``."""
    return " ".join(map(str, game.position.columns[number - 1]))


def card_counts(pos: Position) -> Counter:
    """How often each card lies anywhere in ``pos``."""
    counts: Counter = Counter()
    for pile in (*pos.columns, *pos.foundations, pos.stock, pos.waste):
        counts.update(pile)
    return counts


def without_counters(text: str) -> str:
    """A position's text without score, move counter and take-backs: where the cards lie."""
    return text.rsplit(" ", 3)[0]


def _preference(pos: Position, action) -> int | None:
    """Lower is tried first; ``None`` for moves not worth trying."""
    if action is DRAW:
        return 6
    if action.source == "F":
        return None  # no take-backs: a win without them
    if action.target == "F":
        return 0
    if action.source == "W":
        return 1
    pile = pos.columns[action.source_index - 1]
    start = max(i for i, c in enumerate(pile) if c is action.card)  # Forty Thieves: two of each
    if not pos.columns[action.target_index - 1]:
        if start == 0:
            return None  # a whole column onto an empty one changes nothing
        return 4
    if start and start == pos.down[action.source_index - 1]:
        return 1  # turns a face-down card up
    return 2


@cache
def find_win(code: str, max_nodes: int = 5000) -> tuple | None:
    """A winning list of canonical actions for the deal of ``code`` without
    take-backs, found by depth-first search over ``legal_actions()`` with a
    transposition set, or None when ``max_nodes`` positions were not enough."""
    start = Game.from_code(code)
    stack = [(str(start.position), [])]
    seen: set[str] = set()
    while stack and len(seen) < max_nodes:
        text, path = stack.pop()
        key = without_counters(text)
        if key in seen:
            continue
        seen.add(key)
        game = Game.from_position(text)
        if game.is_won:
            return tuple(path)
        ranked = []
        for action in game.legal_actions():
            rank = _preference(game.position, action)
            if rank is not None:
                ranked.append((rank, -len(ranked), action))
        for _, _, action in sorted(ranked, reverse=True):  # best last: popped first
            child = Game.from_position(text)
            child.push(action)
            stack.append((str(child.position), path + [action]))
    return None
