"""Pages for players, outside ``/api/v1``: the home page with the leaderboards,
a deal, a record with its replay, and the log checker.

The pages are server-rendered Jinja templates (autoescaped) with a little plain
JavaScript (``api/static/js``) that reads the REST API and builds the DOM with
``textContent``. Two JSON endpoints are page plumbing, not API: the positions
after each action of a record (``/records/{id}/frames.json``) or of a posted log
(``/frames.json``), computed with the engine, so that the browser knows no rule.

The language is the ``lang`` query parameter, else ``Accept-Language``
(English, Korean, Finnish; English when none fits); links keep an explicit ``lang``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from babel.dates import format_datetime
from flask import Blueprint, g, redirect, render_template, request, url_for
from flask.wrappers import Response

from engine import Card, Game, GameCode, IllegalActionError, InvalidActionError, InvalidCodeError, Position
from engine.actions import item_text, log_items, parse_item
from engine.cards import SUIT_CHARS, SUIT_SYMBOLS

from .. import boards, challenges, db
from ..i18n import LANGUAGE_NAMES, N_, card_name, card_names, gettext, page_language, rule_sentence
from ..models import Record
from ..problems import Problem
from . import PREFIX, json_body
from .leaderboard import with_records

bp = Blueprint("pages", __name__, static_folder="../static", static_url_path="/static")

#: the leaderboards of the home page, in this order
VARIANTS = (
    ("yukon-classic", N_("Yukon, classic rules")),
    ("yukon-relaxed", N_("Yukon, relaxed rules")),
    ("forty-thieves", N_("Forty Thieves")),
)
VARIANT_TITLES = dict(VARIANTS)
#: the longest log whose positions the replay viewer is given (each position is about half a kilobyte)
MAX_FRAMES = 5000
EXAMPLE_CODE = "YU1-C-AAAAAAB"

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
    "loading": N_("Loading…"),
    "load_failed": N_("Could not load this: {reason}"),
    "no_records": N_("No verified records yet."),
    "won": N_("won"),
    "not_won": N_("not won"),
    "legal": N_("Legal log"),
    "illegal": N_("Illegal log"),
    "verified": N_("Legal, and every claim matches the replay."),
    "claims_mismatch": N_("Legal, but a claim does not match the replay."),
    "breaks_rule": N_("Action {number} ({action}) breaks the rule {rule}:"),
    "syntax_error": N_("Action {number} ({action}) is not valid notation:"),
    "not_played": N_("The actions after it were not played."),
    "claim": N_("{name}: claimed {claimed}, the replay gives {actual}"),
    "need_code": N_("Enter a game code."),
    "need_log": N_("Paste a move log."),
    "illegal_action": N_("illegal: {rule}"),
    "score": N_("Score"),
    "moves": N_("Moves"),
    "actions": N_("Actions"),
    "undos": N_("Undos"),
    "takebacks": N_("Take-backs"),
    "foundation_cards": N_("Cards on the foundations"),
    "result": N_("Result"),
    "replay_too_long": N_("This log is too long for the replay viewer."),
}


# -- request set-up -----------------------------------------------------------

@bp.before_request
def _choose_language() -> None:
    g.lang = page_language()
    #: the language the ``lang`` parameter chose, which links and forms carry on (else ``None``)
    g.explicit_lang = g.lang if request.args.get("lang", "").strip().lower() == g.lang else None


def _(message: str, **params: Any) -> str:
    """``message`` in the page's language (plain text: Jinja escapes it)."""
    return gettext(g.lang, message, **params)


def page_url(endpoint: str, **values: Any) -> str:
    """``url_for``, keeping an explicitly chosen ``lang``."""
    if g.explicit_lang:
        values.setdefault("lang", g.explicit_lang)
    return url_for(endpoint, **values)


def language_url(lang: str) -> str:
    """This page in ``lang``."""
    values = {**request.args.to_dict(), **(request.view_args or {}), "lang": lang}
    return url_for(request.endpoint or "pages.home", **values)


@bp.context_processor
def _template_helpers() -> dict[str, Any]:
    return {"_": _, "lang": g.lang, "explicit_lang": g.explicit_lang, "languages": LANGUAGE_NAMES, "page_url": page_url, "language_url": language_url,
            "variant_title": lambda variant: _(VARIANT_TITLES.get(variant, variant)), "card_face": card_face}


def card_face(text: str) -> dict[str, str]:
    """How a card is drawn: rank (``10``), suit symbol, colour and name (its ``title``)."""
    card = Card.from_text(text)
    return {"rank": card.symbol[:-1], "symbol": SUIT_SYMBOLS[card.suit], "colour": "red" if card.red else "black",
            "name": card_name(g.lang, card)}


@bp.after_request
def _headers(response: Response) -> Response:
    response.headers["Content-Language"] = g.get("lang", "en")
    response.vary.add("Accept-Language")
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


def render(template: str, status: int = 200, **context: Any) -> tuple[str, int]:
    script_data = {"lang": g.lang, "root": request.script_root, "api": request.script_root + PREFIX,
                   "names": card_names(g.lang),
                   "text": {key: _(message) for key, message in SCRIPT_TEXTS.items()}}
    return render_template(template, script_data=script_data, **context), status


def error_page(status: int, heading: str, message: str) -> tuple[str, int]:
    return render("error.html", status, title=heading, heading=heading, message=message)


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


def frame(game: Game, action: str | None) -> dict[str, Any]:
    position = game.position
    return {"action": action, "score": position.score, "moves": position.moves, "takebacks": position.takebacks,
            "won": game.is_won, "board": board_view(position)}


def frames(code: GameCode, log: Any) -> dict[str, Any]:
    """The position after each action of ``log`` on ``code``'s deal (the first: the deal),
    up to the first action that is not valid notation or breaks a rule, which is reported
    in ``error`` (its sentence in the page's language)."""
    items = log_items(log)
    if len(items) > MAX_FRAMES:
        raise Problem(422, f"moves: the log has {len(items)} actions; the replay viewer shows at most {MAX_FRAMES}",
                      "validation-error", errors=[{"field": "moves", "message": f"more than {MAX_FRAMES} actions"}])
    game = Game.from_code(code)
    out = [frame(game, None)]
    error = None
    for index, item in enumerate(items):
        try:
            action = game.push(parse_item(item))
        except InvalidActionError as exc:
            error = {"index": index, "action": item_text(item), "rule": "syntax", "kind": "syntax",
                     "message": exc.message}
            break
        except IllegalActionError as exc:
            error = {"index": index, "action": item_text(item), "rule": exc.rule, "kind": "rule",
                     "message": rule_sentence(g.lang, exc.key, exc.params, exc.message)}
            break
        out.append(frame(game, str(action)))
    return {"code": str(code), "variant": code.variant, "frames": out, "error": error}


# -- the pages ------------------------------------------------------------------

@bp.get("/")
def home() -> tuple[str, int]:
    return render("home.html", title=_("Solitaire records"), variants=VARIANTS, code="", code_error=None,
                  example=EXAMPLE_CODE)


@bp.get("/deals")
def find_deal() -> Any:
    """The home page's form: go to the deal of the code entered."""
    text = request.args.get("code", "").strip()
    if not text:
        error = _("Enter a game code such as {example}.", example=EXAMPLE_CODE)
    else:
        try:
            return redirect(page_url("pages.deal", code=str(GameCode.from_text(text))))
        except InvalidCodeError as exc:
            error = _("{code} is not a game code: {reason}", code=text, reason=exc.message)
    return render("home.html", 422, title=_("Solitaire records"), variants=VARIANTS, code=text, code_error=error,
                  example=EXAMPLE_CODE)


@bp.get("/deals/<code>")
def deal(code: str) -> Any:
    try:
        game_code = GameCode.from_text(code)
    except InvalidCodeError as exc:
        return error_page(404, _("No such deal"), _("{code} is not a game code: {reason}", code=code,
                                                    reason=exc.message))
    if str(game_code) != code:
        return redirect(page_url("pages.deal", code=str(game_code)), 308)
    view = board_view(Game.from_code(game_code).position)
    return render("deal.html", title=_("Deal {code}", code=str(game_code)), code=str(game_code),
                  variant=game_code.variant, board=view, labels=board_labels(g.lang, view))


def find_record(record_id: int) -> Record | None:
    """The record the pages show: one the API serves at ``GET /api/v1/records/{id}``."""
    return db.session().get(Record, record_id) if 0 < record_id < 2 ** 63 else None


@bp.get("/records/<int:record_id>")
def record(record_id: int) -> Any:
    stored = find_record(record_id)
    if stored is None:
        return error_page(404, _("No such record"), _("There is no record {id}.", id=record_id))
    view = board_view(Game.from_code(stored.code).position)
    received = format_datetime(stored.received_at.astimezone(timezone.utc), "medium", tzinfo=timezone.utc,
                               locale=g.lang)
    return render("record.html", title=_("Record {id}", id=stored.id), record=stored,
                  actions=stored.canonical.split(), board=view, labels=board_labels(g.lang, view),
                  received=received, too_long=stored.actions > MAX_FRAMES,
                  hidden=getattr(stored, "status", "visible") == "hidden")


@bp.get("/records/<int:record_id>/frames.json")
def record_frames(record_id: int) -> dict[str, Any]:
    stored = find_record(record_id)
    if stored is None:
        raise Problem(404, f"there is no record {record_id}")
    return frames(GameCode.from_text(stored.code), stored.canonical)


@bp.post("/frames.json")
def log_frames() -> dict[str, Any]:
    """The positions of a posted ``{"code", "moves"}`` (the checker's replay)."""
    body = json_body()
    if not isinstance(body, dict) or not isinstance(body.get("code"), str) \
            or not isinstance(body.get("moves"), (str, list)):
        raise Problem(422, "body: expected {\"code\": a game code, \"moves\": a log as text or an array}",
                      "validation-error", errors=[{"field": "body", "message": "expected code and moves"}])
    try:
        code = GameCode.from_text(body["code"])
    except InvalidCodeError as exc:
        raise Problem(422, f"code: {exc.message}", "invalid-code",
                      errors=[{"field": "code", "message": exc.message, "part": exc.part}]) from None
    try:
        return frames(code, body["moves"])
    except InvalidActionError as exc:  # an item that is neither text nor an action object
        raise Problem(422, f"moves: {exc.message}", "validation-error",
                      errors=[{"field": "moves", "message": exc.message}]) from None


@bp.get("/challenges/<variant>")
def challenge_page(variant: str) -> Any:
    """A variant's challenges: today's and this week's deal, its board and the time to the next
    one, and the past daily challenges with their winners (all read from the kept tables)."""
    if variant not in VARIANT_TITLES:
        return error_page(404, _("No such game"), _("There is no game {variant}.", variant=variant))
    session, moment = db.session(), datetime.now(timezone.utc)
    current = []
    for kind in challenges.KINDS:
        challenge = challenges.current(session, variant, kind, moment)
        item: dict[str, Any] = {"kind": kind, "challenge": challenge}
        if challenge is not None:
            left = max(0, int((challenge.ends_at - moment).total_seconds()))
            top = boards.page(session.connection(), boards.entry_board(f"challenge:{challenge.id}"), 10, None)
            item.update(hours=left // 3600, minutes=left % 3600 // 60, entries=with_records(top["ranked"]))
        current.append(item)
    past = []
    for challenge in challenges.past(session, variant, "daily", moment - timedelta(days=1), 7, None):
        top = boards.page(session.connection(), boards.entry_board(f"challenge:{challenge.id}"), 1, None)
        past.append({"challenge": challenge, "winner": (with_records(top["ranked"]) or [None])[0]})
    return render("challenge.html", title=_("Challenges: {variant}", variant=_(VARIANT_TITLES[variant])),
                  variant=variant, current=current, past=past)


@bp.get("/check")
def check() -> tuple[str, int]:
    return render("check.html", title=_("Check a log"), code=request.args.get("code", ""),
                  moves=request.args.get("moves", ""), example=EXAMPLE_CODE)
