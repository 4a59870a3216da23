"""The board and the log as the templates and the page scripts draw them: a position's view
and its labels, the frames of a replay a window at a time, and each action in words."""

from __future__ import annotations

from collections import deque
from typing import Any

from flask import g

from api.pages.i18n import card_name, gettext, rule_sentence
from api.pages.words import _
from api.platform.marks import N_
from api.platform.problems import Problem
from engine import Game, GameCode, Position
from engine.actions import Draw, Move, Undo, log_items, parse_action
from engine.cards import SUIT_CHARS, SUIT_SYMBOLS
from engine.rules import UNDO_DEPTH
from verifier import replay

#: the actions one page of a log lists, and so the steps one window of the viewer's frames covers:
#: what a request renders stays this size whatever the log's length
LOG_PAGE = 200
#: what the page scripts say, translated on the server and handed to them as JSON
SCRIPT_TEXTS = {
    "column": N_("column {number}: {cards}"),
    "column_empty": N_("column {number}: empty"),
    "face_down": N_("face-down card"),
    "foundation": N_("foundation {number}: {card}"),
    "foundation_empty": N_("foundation {number}: empty"),
    "stock": N_("stock, cards left: {count}"),
    "waste": N_("waste: {card} on top, cards: {count}"),
    "waste_empty": N_("waste: empty"),
    "step_start": N_("Start position. Score {score}, moves {moves}."),
    "step": N_("Action {step} of {total}: {action}. Score {score}, moves {moves}."),
    "step_won": N_("The game is won."),
    "load_failed": N_("The replay could not be loaded. Reload the page to try again."),
    "log_range": N_("Actions {first}–{last} of {total}"),
    "replay_too_long": N_("This log is too long for the replay viewer."),
    "play": N_("Play"),
    "pause": N_("Pause"),
    "copied": N_("Copied."),
    "copy_failed": N_("Could not copy: select the text and copy it yourself."),
    "local_time": N_("{time} (your time)"),
    "countdown": N_("Next challenge in {left} ({time} UTC)"),
    "countdown_done": N_("The next challenge is ready: reload the page."),
    "left_days": N_("{days} d {hours} h"),
    "left_hours": N_("{hours} h {minutes} min"),
}

# -- the board, as the templates and the scripts draw it -----------------------

def board_view(position: Position) -> dict[str, Any]:
    """What a board shows: each column's face-down count and face-up cards, each
    foundation's suit, top card and size, the stock's size and the waste's top
    card (``None`` for games without stock and waste)."""
    rules = position.rules
    has_stock = rules.has_stock
    return {
        "columns": [{"down": down, "up": [str(card) for card in column[down:]]}
                    for column, down in zip(position.columns, position.down)],
        "foundations": [{"suit": SUIT_CHARS[suit], "symbol": SUIT_SYMBOLS[suit],
                         "top": str(pile[-1]) if pile else None, "count": len(pile)}
                        for suit, pile in zip(rules.foundation_suits, position.foundations)],
        "stock": len(position.stock) if has_stock else None,
        "waste": {"top": str(position.waste[-1]) if position.waste else None, "count": len(position.waste)}
        if has_stock else None,
    }


def board_labels(lang: str, view: dict[str, Any]) -> dict[str, Any]:
    """The text alternatives of a board's piles, such as ``column 1: ace of diamonds,
    three of spades`` (``static/js/board.js`` builds the same from the same words)."""
    face_down = gettext(lang, SCRIPT_TEXTS["face_down"])
    columns = []
    for number, column in enumerate(view["columns"], 1):
        cards = [face_down] * column["down"] + [card_name(lang, card) for card in column["up"]]
        columns.append(gettext(lang, SCRIPT_TEXTS["column"], number=number, cards=", ".join(cards)) if cards
                       else gettext(lang, SCRIPT_TEXTS["column_empty"], number=number))
    foundations = [gettext(lang, SCRIPT_TEXTS["foundation"], number=number, card=card_name(lang, pile["top"]))
                   if pile["top"] else gettext(lang, SCRIPT_TEXTS["foundation_empty"], number=number)
                   for number, pile in enumerate(view["foundations"], 1)]
    stock = waste = None
    if view["stock"] is not None:
        stock = gettext(lang, SCRIPT_TEXTS["stock"], count=view["stock"])
        top = view["waste"]["top"]
        waste = (gettext(lang, SCRIPT_TEXTS["waste"], card=card_name(lang, top), count=view["waste"]["count"])
                 if top else gettext(lang, SCRIPT_TEXTS["waste_empty"]))
    return {"columns": columns, "foundations": foundations, "stock": stock, "waste": waste}


def frame(game: Game, step: dict[str, Any] | None, time: int | None) -> dict[str, Any]:
    """The position ``game`` is at, after the action ``step`` describes (``None``: the deal) and
    played at ``time`` (ms from the game's start, when times were sent)."""
    position = game.position
    described = step or {"text": None, "label": None, "from": None, "to": None, "card": None}
    return {"action": described["text"], "label": described["label"], "from": described["from"],
            "to": described["to"], "card": described["card"], "time": time, "score": position.score,
            "moves": position.moves, "takebacks": position.takebacks, "won": game.is_won,
            "board": board_view(position)}


def log_page(step: int, total: int) -> tuple[int, int]:
    """The first and last action of the page of the log that shows ``step`` (step 0: the first
    page): pages of ``LOG_PAGE`` actions, 1–200, 201–400, …"""
    first = max(0, step - 1) // LOG_PAGE * LOG_PAGE + 1
    return first, min(total, first + LOG_PAGE - 1)


def frames(code: GameCode, log: Any, limit: int, step: int = 0, times: list[int] | None = None) -> dict[str, Any]:
    """The window of positions of ``log`` on ``code``'s deal that holds ``step``: from the one
    before its page of the log to its last action (:func:`log_page`), each with its action in
    words. The log is played up to the first action that is not valid notation or breaks a
    rule, which is reported in ``error`` (its sentence in the page's language); ``total`` is the
    number of actions played, ``previous``/``next`` the steps that open the neighbouring
    windows (``None`` at either end). More than ``limit`` actions: 422."""
    items = log_items(log)
    if len(items) > limit:
        raise Problem(422, f"moves: the log has {len(items)} actions; the replay viewer shows at most {limit}",
                      "validation-error", errors=[{"field": "moves", "message": f"more than {limit} actions"}])
    verdict = replay(code, log)  # the whole log (the engine is fast), for its length and its first error
    actions, failed = verdict.canonical, verdict.error
    error = None if failed is None else {
        "index": failed.index, "action": failed.action, "rule": failed.rule, "kind": failed.kind,
        "message": failed.message if failed.kind == "syntax" else rule_sentence(g.lang, failed.key, failed.params,
                                                                                failed.message)}
    total = len(actions)
    first, last = log_page(max(0, min(total, step)), total)
    game = position_at(code, actions, first - 1)
    before = max(1, first - 1)  # the window's first position is after the previous page's last action
    described = describe_log(actions, before, last)
    out = [frame(game, described[0] if first > 1 else None, times[first - 2] if times and first > 1 else None)]
    for number in range(first, last + 1):
        game.push(parse_action(actions[number - 1]))
        out.append(frame(game, described[number - before], times[number - 1] if times else None))
    return {"code": str(code), "variant": code.variant, "total": total, "start": first - 1, "frames": out,
            "previous": first - 1 if first > 1 else None, "next": last + 1 if last < total else None,
            "error": error}


def position_at(code: str | GameCode, actions: list[str], step: int) -> Game:
    """The game after the first ``step`` actions of a legal canonical log (played as the
    verifier plays a log: far faster than action by action)."""
    game = Game.from_code(code)
    game.push_items(actions[:step], [], text_log=True)
    return game


# -- the log, in words ------------------------------------------------------------------

def describe_log(actions: list[str], first: int = 1, last: int | None = None) -> list[dict[str, Any]]:
    """Actions ``first`` … ``last`` (1-based) of a legal canonical log as a player reads them
    ("5♥ T3 → T1", "Draw", "Undo (takes back 5♥ T3 → T1)", "A♠ → foundation") with the piles
    each takes a card from and puts it on, which the viewer highlights (``None`` for nothing
    moved). The actions before ``first`` are only parsed, for what an undo takes back."""
    done: deque[Draw | Move] = deque(maxlen=UNDO_DEPTH)  # what an undo would take back, as the engine keeps it
    steps = []
    for number, text in enumerate(actions[:last], 1):
        action = parse_action(text)
        if isinstance(action, Undo):
            undone = done.pop() if done else None
            if number >= first:
                steps.append({"text": text, **describe_undo(undone)})
        else:
            done.append(action)
            if number >= first:
                steps.append({"text": text, **describe_action(action)})
    return steps


def describe_action(action: Draw | Move) -> dict[str, Any]:
    if isinstance(action, Draw):
        return {"label": _("Draw"), "from": "S", "to": "W", "card": None}
    return describe_move(action)


def describe_undo(undone: Draw | Move | None) -> dict[str, Any]:
    if undone is None:
        return {"label": _("Undo"), "from": None, "to": None, "card": None}
    taken_back = describe_action(undone)
    return {"label": _("Undo (takes back {action})", action=taken_back["label"]),
            "from": taken_back["to"], "to": taken_back["from"], "card": taken_back["card"]}


def describe_move(move: Move) -> dict[str, Any]:
    card = move.card.symbol if move.card is not None else ""
    source, target = move.source_name, move.target_name
    if move.source == "F":
        label = _("Take-back: {card} {source} → {target}", card=card, source=source, target=target)
    elif move.source == "W":
        label = (_("{card} from the waste → foundation", card=card) if move.target == "F"
                 else _("{card} from the waste → {target}", card=card, target=target))
    elif move.target == "F":
        label = _("{card} {source} → foundation", card=card, source=source)
    else:
        label = f"{card} {source} → {target}"
    return {"label": label, "from": source, "to": target, "card": str(move.card) if move.card else None}


def action_error(error: Any) -> dict[str, str]:
    """An action that could not be played, in the page's language: what went wrong in a
    sentence; the rule id only as a detail."""
    if error.kind == "syntax":
        head = _("Action {number} ({action}) is not a move the app knows.", number=error.index + 1,
                 action=error.action)
        sentence = _("Write actions such as T2:TD>T5, T7>F, W>T4, S (draw) or U (undo).")
    else:
        head = _("Action {number} ({action}) breaks a rule.", number=error.index + 1, action=error.action)
        sentence = rule_sentence(g.lang, error.key, error.params, error.message)
    return {"head": head, "sentence": sentence, "rule": error.rule if error.kind == "rule" else None,
            "action": error.action}
