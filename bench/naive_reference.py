"""The naive reference for the cold batch figure: a straightforward replay of the normative
spec in Python, written from the spec alone (it imports nothing of the engine).

Each line of JSON Lines in gives one verdict line out (legal, won, score, moves, actions,
undos, take-backs, cards on foundations, final position, and the first illegal action's
index and rule id). It does what the spec says in the order it says it: the deal by
SplitMix64 and Fisher–Yates, each action parsed by the notation's grammar, checked and
applied on a position of plain lists (cards as text, face-down cards counted per column),
and undo as a copy of the position before each action (the last 100 kept). No caching, no compiled actions, one process.

    python -m bench.naive_reference games.jsonl > verdicts.jsonl
"""

from __future__ import annotations

import json
import re
import sys

RANKS, SUITS = "A23456789TJQK", "SHDC"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
MASK = (1 << 64) - 1
GAMES = {  # cards per column, face-down cards per column, foundation suits, decks, group limit
    "YU": ((1, 6, 7, 8, 9, 10, 11), (0, 1, 2, 3, 4, 5, 6), "SHDC", 1, 20),
    "FT": ((4,) * 10, (0,) * 10, "SHDCSHDC", 2, 1),
}
ACTION = re.compile(r"(T\d+|W|F\d+)(?::(10|[A2-9TJQK])([SHDC♠♥♦♣]))?>(T\d+|F\d*)\Z")
SUIT_SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}


class Illegal(Exception):
    def __init__(self, rule: str) -> None:
        self.rule = rule


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def red(card: str) -> bool:
    return card[1] in "HD"


def deal(game: str, number: int) -> dict:
    columns, face_down, suits, decks, _ = GAMES[game]
    deck = [r + s for s in SUITS for r in RANKS] * decks
    state = number
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        threshold = ((1 << 64) - n) % n
        while True:
            state = (state + 0x9E3779B97F4A7C15) & MASK
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            r = z ^ (z >> 31)
            if r >= threshold:
                break
        j = r % n
        deck[i], deck[j] = deck[j], deck[i]
    at, cols = 0, []
    for size in columns:
        cols.append(deck[at : at + size])
        at += size
    return {"columns": cols, "down": list(face_down), "foundations": [[] for _ in suits], "stock": deck[at:],
            "waste": [], "score": 0, "moves": 0, "takebacks": 0}


def parse(text: str) -> tuple:
    """An action: ("S",), ("U",) or (source, card or None, target); ValueError on bad syntax."""
    text = text.strip().upper()
    if text in ("S", "S>W"):
        return ("S",)
    if text == "U":
        return ("U",)
    m = ACTION.match(text)
    if not m or any(part[1:].startswith("0") for part in (m.group(1), m.group(4)) if len(part) > 1):
        raise ValueError(text)
    card = None if m.group(2) is None else ("T" if m.group(2) == "10" else m.group(2)) + SUIT_SYMBOLS.get(
        m.group(3), m.group(3))
    return (m.group(1), card, m.group(4))


def from_json(item: object) -> tuple:
    if isinstance(item, str):
        return parse(item)
    if not isinstance(item, dict):
        raise ValueError(item)
    if "action" in item:
        if len(item) == 1 and item["action"] in ("draw", "undo"):
            return ("S",) if item["action"] == "draw" else ("U",)
        raise ValueError(item)
    if set(item) - {"from", "card", "to"} or not isinstance(item.get("from"), str) or not isinstance(
            item.get("to"), str):
        raise ValueError(item)
    card = item.get("card")
    return parse(f"{item['from']}{'' if card is None else ':' + str(card)}>{item['to']}")


def fits(game: str, rules: str, card: str, column: list) -> bool:
    """The tableau build rule for ``card`` (the bottom of what moves) onto ``column``."""
    if not column:
        return game == "FT" or rank(card) == 13
    onto = column[-1]
    if game == "FT":
        return onto[1] == card[1] and rank(onto) == rank(card) + 1
    return rank(onto) == rank(card) + 1 and (rules == "R" or red(onto) != red(card))


def play(game: str, rules: str, s: dict, action: tuple) -> None:
    """Check ``action`` in position ``s`` and apply it; raise :class:`Illegal` naming the rule."""
    suits, limit = GAMES[game][2], GAMES[game][4]
    if action == ("S",):
        if game != "FT":
            raise Illegal("stock.none")
        if not s["stock"]:
            raise Illegal("stock.empty")
        s["waste"].append(s["stock"].pop(0))
        return
    source, card, target = action
    n = int(source[1:]) if source[0] in "TF" else 0
    if source == "W" and game != "FT":
        raise Illegal("stock.none")
    if source[0] == "T" and not 1 <= n <= len(s["columns"]):
        raise Illegal("pile.no-such-column")
    if source[0] == "F" and not 1 <= n <= len(suits):
        raise Illegal("pile.no-such-foundation")
    pile = s["waste"] if source == "W" else s["columns"][n - 1] if source[0] == "T" else s["foundations"][n - 1]
    if not pile:
        raise Illegal("source.empty")
    top = pile[-1]
    start = len(pile) - 1
    if card is not None and card != top:
        if source[0] != "T":
            raise Illegal("card.mismatch")
        where = [k for k, c in enumerate(pile) if c == card]
        if not where:
            raise Illegal("card.mismatch")
        if game == "FT":
            raise Illegal("move.single-card")
        if where[-1] < s["down"][n - 1]:
            raise Illegal("card.face-down")
        start = where[-1]
    moving = pile[start:]
    bottom = moving[0]
    if target[0] == "F":
        if source[0] == "F":
            raise Illegal("foundation.to-foundation")
        if len(moving) > 1:
            raise Illegal("foundation.one-card")
        slots = [int(target[1:]) - 1] if len(target) > 1 else [k for k, suit in enumerate(suits) if suit == bottom[1]]
        if slots[0] >= len(suits):
            raise Illegal("pile.no-such-foundation")
        ok = [k for k in slots if suits[k] == bottom[1] and len(s["foundations"][k]) == rank(bottom) - 1]
        if not ok:
            raise Illegal("foundation.suit" if suits[slots[0]] != bottom[1] else "foundation.build")
        del pile[start:]
        s["foundations"][ok[0]].append(bottom)
        s["score"] += 10
    else:
        t = int(target[1:])
        if not 1 <= t <= len(s["columns"]):
            raise Illegal("pile.no-such-column")
        if source[0] == "T" and t == n:
            raise Illegal("move.same-column")
        if len(moving) > limit:
            raise Illegal("group.max-20")
        dest = s["columns"][t - 1]
        if not fits(game, rules, bottom, dest):
            raise Illegal(_refusal(game, rules, bottom, dest))
        del pile[start:]
        dest.extend(moving)
        s["score"] += 5 if source == "W" else -15 if source[0] == "F" and game == "FT" else 0
        s["takebacks"] += source[0] == "F"
    if source[0] == "T" and pile and len(pile) == s["down"][n - 1]:
        s["down"][n - 1] -= 1
        s["score"] += 5
    s["score"] = max(s["score"], 0)


def _refusal(game: str, rules: str, card: str, dest: list) -> str:
    if not dest:
        return "empty-column.king-only"
    onto = dest[-1]
    if game == "FT":
        return "tableau.nothing-on-ace" if rank(onto) == 1 else "tableau.same-suit" if onto[1] != card[1] else (
            "tableau.build")
    return "tableau.build" if rank(onto) != rank(card) + 1 else "tableau.alternate-colour"


def copy(s: dict) -> dict:
    return {"columns": [list(col) for col in s["columns"]], "down": list(s["down"]),
            "foundations": [list(f) for f in s["foundations"]], "stock": list(s["stock"]),
            "waste": list(s["waste"]), "score": s["score"], "moves": s["moves"], "takebacks": s["takebacks"]}


def replay(code: str, log: object) -> dict:
    code = code.strip().upper()
    m = re.fullmatch(r"(YU|FT)1-([CRN])-([A-Z2-7]{7})", code)
    if not m or (m.group(1) == "YU") != (m.group(2) in "CR"):
        raise ValueError(f"bad code {code!r}")
    game, rules = m.group(1), m.group(2)
    s = deal(game, sum(BASE32.index(ch) * 32 ** (6 - k) for k, ch in enumerate(m.group(3))))
    items = re.split(r"[\s,;]+", re.sub(r"#[^\n]*", "", log)) if isinstance(log, str) else list(log)
    items = [item for item in items if item != ""] if isinstance(log, str) else items
    history: list[dict] = []
    actions = undos = in_effect = 0
    error = None
    won = False
    for index, item in enumerate(items):
        try:
            action = from_json(item)
            if won:
                raise Illegal("game.over")
            if action == ("U",):
                if not history:
                    raise Illegal("undo.max-100" if in_effect else "undo.nothing-to-undo")
                moves = s["moves"]
                s = history.pop()
                s["moves"] = moves
                undos += 1
                in_effect -= 1
            else:
                before = copy(s)
                play(game, rules, s, action)
                history = (history + [before])[-100:]
                s["moves"] += 1
                in_effect += 1
            actions += 1
            won = sum(map(len, s["foundations"])) == 52 * GAMES[game][3]
        except ValueError:
            error = {"index": index, "rule": "syntax"}
            break
        except Illegal as exc:
            error = {"index": index, "rule": exc.rule}
            break
    return {"code": code, "legal": error is None, "won": won, "score": s["score"], "moves": s["moves"],
            "actions": actions, "undos": undos, "takebacks": s["takebacks"],
            "foundation_cards": sum(map(len, s["foundations"])), "position": json.dumps(s), "error": error}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                item = json.loads(line)
                print(json.dumps({"line": number, **replay(item["code"], item["moves"])}))


if __name__ == "__main__":
    main()
