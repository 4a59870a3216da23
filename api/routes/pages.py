"""Pages for players, outside ``/api/v1``: the home page with the challenge standings,
a deal, a record with its replay, and the log checker.

Every page is complete as the server renders it (Jinja, autoescaped): the
standings and leaderboards, the boards, a record's log and any step of it (``?step=N``), and the
checker's verdict (a plain form, ``GET``/``POST /check?code=…&moves=…``). Plain
JavaScript (``api/static/js``, ES modules) then enhances them: the replay viewer
steps without reloading, copy buttons, times in the reader's zone. It builds the DOM
with ``textContent`` only. Two JSON endpoints are page plumbing, not API: the
positions after each action of a record (``/records/{id}/frames.json``) or of a
posted log (``/frames.json``), computed with the engine, so that the browser knows no rule.

The language is the ``lang`` query parameter, else ``Accept-Language``
(English, Korean, Finnish; English when none fits); links keep an explicit ``lang``.
"""

from __future__ import annotations

import gzip
from collections import deque
from datetime import UTC, datetime, timedelta
from typing import Any

from babel.dates import format_datetime
from flask import Blueprint, Flask, current_app, g, redirect, render_template, request, url_for
from flask.wrappers import Response
from sqlalchemy import select

from engine import Card, Game, GameCode, IllegalActionError, InvalidActionError, InvalidCodeError, Position
from engine.actions import Draw, Move, Undo, item_text, log_items, parse_action, parse_item
from engine.cards import SUIT_CHARS, SUIT_SYMBOLS
from engine.codes import RULES as RULE_LETTERS
from engine.codes import VERSION as CODE_VERSION
from engine.rules import RULE_SETS, UNDO_DEPTH
from engine.rules.registry import GAMES
from verifier import replay

from .. import assets, boards, challenges, db, stats
from ..framecache import FrameCache, accepts_gzip, pack
from ..i18n import LANGUAGE_NAMES, N_, card_name, card_names, gettext, page_language, rule_sentence
from ..models import Record
from ..players import find_player
from ..problems import Problem
from . import PREFIX, json_body
from .challenges import current_or_prepare
from .leaderboard import standing_entries, with_records

bp = Blueprint("pages", __name__)

#: the variants, in the order of the home page's standings
VARIANTS = tuple((rule_set.variant, rule_set.title) for rule_set in RULE_SETS)  # titles: msgids (api.i18n)
VARIANT_TITLES = dict(VARIANTS)
#: the longest log whose positions the replay viewer is given (each position is about half a kilobyte)
MAX_FRAMES = 5000
#: the rows of a leaderboard on a page
LEADERBOARD_ROWS = 10
EXAMPLE_CODE = "YU1-C-AAAAAAB"
#: a year: the cache lifetime of a static file under its hashed name
IMMUTABLE = "public, max-age=31536000, immutable"

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
    "replay_too_long": N_("This log is too long for the replay viewer."),
    "play": N_("Play"),
    "pause": N_("Pause"),
    "copied": N_("Copied."),
    "copy_failed": N_("Could not copy: select the text and copy it yourself."),
    "local_time": N_("{time} (your time)"),
}

#: why a game code is not one, by the part of it that is wrong (``InvalidCodeError.part``)
CODE_PROBLEMS = {
    "format": N_("A game code has three parts joined by hyphens, such as {example}."),
    "game": N_("A game code starts with one of: {games}."),
    "version": N_("Only version 1 of game codes exists: {codes}."),
    "rules": N_("The rule letter after the first hyphen depends on the game: {letters}."),
    "deal": N_("The deal part is seven letters A–Z and digits 2–7."),
}
CODE_PROBLEM_AT = N_("{problem} (character {position})")


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


def module_scripts(entries: list[str]) -> list[str]:
    """The URLs of page scripts (``js/record.js``) and of every module they import, each once,
    a module before what imports it: the page names them all at once (``modulepreload``), so
    they load in parallel."""
    names = _assets().modules(entries[0]) if entries else []
    for entry in entries[1:]:
        names += [name for name in _assets().modules(entry) if name not in names]
    return [url_for("pages.static", filename=name) for name in names]


@bp.context_processor
def _template_helpers() -> dict[str, Any]:
    return {"_": _, "lang": g.lang, "explicit_lang": g.explicit_lang, "languages": LANGUAGE_NAMES, "page_url": page_url,
            "language_url": language_url, "module_scripts": module_scripts,
            "variant_title": lambda variant: _(VARIANT_TITLES.get(variant) or variant), "card_face": card_face,
            "card_short": card_short}


def card_face(text: str) -> dict[str, str]:
    """How a card is drawn: rank (``10``), suit symbol, colour and name (its ``title``)."""
    card = Card.from_text(text)
    return {"rank": card.symbol[:-1], "symbol": SUIT_SYMBOLS[card.suit], "colour": "red" if card.red else "black",
            "name": card_name(g.lang, card)}


def card_short(text: str) -> str:
    """A card as players write it: ``10♦``."""
    return Card.from_text(text).symbol


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
    return _compressed(response)


#: the smallest body worth compressing
GZIP_MIN_BYTES = 1024


def _compressed(response: Response) -> Response:
    """A page or a JSON answer (the replay's frames: a few hundred kilobytes for a long game)
    gzip-compressed for a client that accepts it; static files bring their own copies."""
    if (request.endpoint == "pages.static" or response.status_code != 200 or response.direct_passthrough
            or response.is_streamed or "Content-Encoding" in response.headers
            or response.mimetype not in ("text/html", "application/json", "application/problem+json")):
        return response
    response.vary.add("Accept-Encoding")
    if not accepts_gzip(request):
        return response
    body = response.get_data()
    if len(body) < GZIP_MIN_BYTES:
        return response
    response.set_data(gzip.compress(body, 6))
    response.headers["Content-Encoding"] = "gzip"
    etag, weak = response.get_etag()
    if etag and not weak:  # the same ETag must not name two different bodies
        response.set_etag(etag, weak=True)
    return response


def render(template: str, status: int = 200, **context: Any) -> tuple[str, int]:
    script_data = {"lang": g.lang, "root": request.script_root, "api": request.script_root + PREFIX,
                   "names": card_names(g.lang),
                   "text": {key: _(message) for key, message in SCRIPT_TEXTS.items()}}
    context.setdefault("share_url", request.url)
    return render_template(template, script_data=script_data, **context), status


def error_page(status: int, heading: str, message: str) -> tuple[str, int]:
    return render("error.html", status, title=heading, heading=heading, message=message)


def code_problem(exc: InvalidCodeError) -> str:
    """Why a code is not one, in the page's language (English: the engine's own, more exact sentence)."""
    if g.lang == "en":
        return exc.message
    problem = _(CODE_PROBLEMS.get(exc.part, CODE_PROBLEMS["format"]), example=EXAMPLE_CODE,
                games=", ".join(f"{letters} ({_(game.title)})" for letters, game in GAMES.items()),
                codes=", ".join(f"{letters}{CODE_VERSION}" for letters in GAMES),
                letters="; ".join(f"{_(game.title)}: {', '.join(RULE_LETTERS[letters])}"
                                  for letters, game in GAMES.items()))
    return _(CODE_PROBLEM_AT, problem=problem, position=exc.position) if exc.position else problem


# -- static files ----------------------------------------------------------------------

def _assets() -> assets.Manifest:
    return assets.manifest(reload=current_app.debug)


@bp.url_defaults
def _hashed_static(endpoint: str, values: dict[str, Any]) -> None:
    """``url_for("pages.static", filename="css/pages.css")`` names the file's hashed copy."""
    if endpoint == "pages.static" and "filename" in values:
        asset = _assets().assets.get(values["filename"])
        if asset is not None:
            values["filename"] = asset.hashed


@bp.get("/static/<path:filename>", endpoint="static")
def static_file(filename: str) -> Response:
    """A file of ``api/static``: under its hashed name cached for a year (gzip-compressed when
    the client accepts it), under its plain name as it is and revalidated each time."""
    found = _assets().find(filename)
    if found is None:
        raise Problem(404, f"there is no static file {filename}")
    asset, hashed = found
    response = Response(status=200, mimetype=asset.mimetype)
    if not hashed:
        response.set_data(asset.source)
        response.add_etag()
        response.cache_control.public = True
        response.cache_control.no_cache = True
        response.make_conditional(request)  # changes the response itself
        return response
    response.set_etag(asset.etag)
    response.headers["Cache-Control"] = IMMUTABLE
    response.vary.add("Accept-Encoding")
    if asset.gzipped is not None and accepts_gzip(request):
        response.set_data(asset.gzipped)
        response.headers["Content-Encoding"] = "gzip"
    else:
        response.set_data(asset.body)
    response.make_conditional(request)
    return response


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


def frames(code: GameCode, log: Any, limit: int = MAX_FRAMES) -> dict[str, Any]:
    """The position after each action of ``log`` on ``code``'s deal (the first: the deal),
    up to the first action that is not valid notation or breaks a rule, which is reported
    in ``error`` (its sentence in the page's language). More than ``limit`` actions: 422."""
    items = log_items(log)
    if len(items) > limit:
        raise Problem(422, f"moves: the log has {len(items)} actions; the replay viewer shows at most {limit}",
                      "validation-error", errors=[{"field": "moves", "message": f"more than {limit} actions"}])
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


def position_at(code: str | GameCode, actions: list[str], step: int) -> Game:
    """The game after the first ``step`` actions of a legal canonical log."""
    game = Game.from_code(code)
    for text in actions[:step]:
        game.push(parse_action(text))
    return game


# -- the log, in words ------------------------------------------------------------------

def describe_log(actions: list[str]) -> list[dict[str, Any]]:
    """Each action of a legal canonical log as a player reads it ("5♥ T3 → T1", "Draw",
    "Undo (takes back 5♥ T3 → T1)", "A♠ → foundation") with the piles it takes a card
    from and puts it on, which the viewer highlights (``None`` for nothing moved)."""
    done: deque[dict[str, Any]] = deque(maxlen=UNDO_DEPTH)  # what an undo would take back, as the engine keeps it
    steps = []
    for text in actions:
        action = parse_action(text)
        if isinstance(action, Undo):
            undone = done.pop() if done else None
            if undone is None:
                step = {"label": _("Undo"), "from": None, "to": None, "card": None}
            else:
                step = {"label": _("Undo (takes back {action})", action=undone["label"]),
                        "from": undone["to"], "to": undone["from"], "card": undone["card"]}
        else:
            step = {"label": _("Draw"), "from": "S", "to": "W", "card": None} if isinstance(action, Draw) \
                else describe_move(action)
            done.append(step)
        steps.append({"text": text, **step})
    return steps


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


# -- the pages ------------------------------------------------------------------

def leaderboard_entries(code: str, limit: int = LEADERBOARD_ROWS) -> list[Any]:
    """The top of a deal's board, as ``GET /api/v1/leaderboard?code=…`` answers it: each player's
    best eligible record of that deal, read from the kept board. (No page ranks records of different
    deals against each other by raw score: across a variant, pages show :func:`standings_entries`.)"""
    return with_records(boards.page(db.session().connection(), boards.entry_board(f"deal:{code}"), limit,
                                    None)["ranked"])


def standings_entries(variant: str, limit: int = LEADERBOARD_ROWS) -> list[Any]:
    """The top of a variant's standings, as ``GET /api/v1/standings`` answers it: challenge points
    (3 for each challenge won, 1 for each one played and not won), the like-for-like variant board."""
    return standing_entries(boards.page(db.session().connection(), boards.standings_board(variant), limit,
                                        None)["ranked"])


@bp.get("/")
def home() -> tuple[str, int]:
    return home_page(200, "", None)


def home_page(status: int, code: str, error: str | None) -> tuple[str, int]:
    boards = [(variant, name, standings_entries(variant)) for variant, name in VARIANTS]
    return render("home.html", status, title=_("Solitaire records"), variants=VARIANTS, boards=boards, code=code,
                  code_error=error, example=EXAMPLE_CODE,
                  description=_("Verified games of Yukon and Forty Thieves, replayed action by action."))


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
            error = _("{code} is not a game code: {reason}", code=text, reason=code_problem(exc))
    return home_page(422, text, error)


@bp.get("/deals/<code>")
def deal(code: str) -> Any:
    try:
        game_code = GameCode.from_text(code)
    except InvalidCodeError as exc:
        return error_page(404, _("No such deal"), _("{code} is not a game code: {reason}", code=code,
                                                    reason=code_problem(exc)))
    if str(game_code) != code:
        return redirect(page_url("pages.deal", code=str(game_code)), 308)
    view = board_view(Game.from_code(game_code).position)
    variant = _(VARIANT_TITLES[game_code.variant])
    return render("deal.html", title=_("Deal {code}", code=str(game_code)), code=str(game_code),
                  variant=game_code.variant, board=view, labels=board_labels(g.lang, view),
                  entries=leaderboard_entries(str(game_code)),
                  description=_("{variant}: the deal {code} and its best verified records.", variant=variant,
                                code=str(game_code)))


def find_record(record_id: int) -> Record | None:
    """The record the pages show: one the API serves at ``GET /api/v1/records/{id}``."""
    return db.session().get(Record, record_id) if 0 < record_id < 2 ** 63 else None


def record_summary(stored: Record) -> str:
    """A record in one sentence, for sharing: "ann won YU1-C-AAAAAAB in 88 moves, 625 points"."""
    params = {"player": stored.player, "code": stored.code, "moves": stored.moves, "score": stored.score}
    if stored.won:
        return _("{player} won {code} in {moves} moves, {score} points", **params)
    return _("{player} played {code}: {moves} moves, {score} points, not won", **params)


def requested_step(total: int) -> int:
    """The ``step`` query parameter, within 0 … ``total`` (a missing or bad one: 0)."""
    try:
        step = int(request.args.get("step", "0"))
    except ValueError:
        return 0
    return max(0, min(total, step))


@bp.get("/records/<int:record_id>")
def record(record_id: int) -> Any:
    stored = find_record(record_id)
    if stored is None:
        return error_page(404, _("No such record"), _("There is no record {id}.", id=record_id))
    actions = stored.canonical.split()
    too_long = stored.actions > MAX_FRAMES
    step = 0 if too_long else requested_step(len(actions))
    game = position_at(stored.code, actions, step)
    view = board_view(game.position)
    received = format_datetime(stored.received_at.astimezone(UTC), "medium", tzinfo=UTC,
                               locale=g.lang)
    title = _("{player} on {code} · record {id}", player=stored.player, code=stored.code, id=stored.id)
    return render("record.html", title=title, description=record_summary(stored), page_scripts=["js/record.js"],
                  record=stored, steps=[] if too_long else describe_log(actions), step=step,
                  step_href=lambda number: page_url("pages.record", record_id=stored.id, step=number),
                  score=game.position.score, moves=game.position.moves, won=game.is_won,
                  board=view, labels=board_labels(g.lang, view), received=received, too_long=too_long,
                  hidden=getattr(stored, "status", "visible") == "hidden", flags=flag_texts(stored),
                  share_url=url_for("pages.record", record_id=stored.id, _external=True,
                                    **({"lang": g.explicit_lang} if g.explicit_lang else {})))


#: what each fair-play flag means, for the record and player pages (``api.fairplay``)
FLAG_TEXTS = {
    "assisted": N_("assisted: a hint was taken on this deal before submitting"),
    "copy": N_("copy: the same log was stored earlier as record {id}"),
    "solver-like": N_("solver-like: the log follows the service's solver line"),
    "timing": N_("timing: faster than people play, or the times disagree"),
    "empty-log": N_("empty log: the game has no action"),
}


def flag_texts(stored: Record) -> list[str]:
    """The record's flags in the page's language (one line each)."""
    return [_(FLAG_TEXTS[f["flag"]], id=stored.copy_of or "?") if f.get("flag") in FLAG_TEXTS else str(f.get("flag"))
            for f in stored.flags or []]


#: the most records a player's page lists (newest first)
PLAYER_RECORDS = 100


@bp.get("/players/<path:name>")
def player(name: str) -> Any:
    """A player's profile and their records, newest first, with their flags (so that a flagged
    player sees why, and can appeal: docs/fair-play.md)."""
    found = find_player(db.session(), name) if len(name) <= 256 else None
    if found is None:
        return error_page(404, _("No such player"), _("There is no player {name}.", name=name))
    session = db.session()
    stored = session.scalars(select(Record).where(Record.player_id == found.id)
                             .order_by(Record.id.desc()).limit(PLAYER_RECORDS)).all()
    return render("player.html", title=_("Player {name}", name=found.name), player=found,
                  description=_("The records, statistics and challenge ranks of {name}.", name=found.name),
                  records=[(record, flag_texts(record)) for record in stored],
                  stats=stats.player_stats(session, found.name),
                  challenge_ranks=stats.challenge_ranks(session, found.name))


@bp.get("/records/<int:record_id>/frames.json")
def record_frames(record_id: int) -> Any:
    """A record's frames, from the cache when they are there (:mod:`api.framecache`: ETag,
    304, gzip); a record never changes, so they are computed once per engine version."""
    cache = frame_cache()
    cached = cache.get(record_id) if cache is not None else None
    if cached is None:
        stored = find_record(record_id)
        if stored is None:
            raise Problem(404, f"there is no record {record_id}")
        data = frames(GameCode.from_text(stored.code), stored.canonical)
        if data["error"] is not None:
            # a stored log this engine finds illegal: its sentence is in the page's language; not cached
            response = current_app.json.response(data)
            response.headers["Cache-Control"] = "no-cache"
            return response
        cached = pack(data)
        if cache is not None:
            cache.put(record_id, cached)
    return cached.response(request)


def frame_cache() -> FrameCache | None:
    """This process's cache of records' frames (``None`` when ``FRAMES_CACHE_BYTES`` is 0)."""
    return current_app.extensions.get("api.frames")


def init_app(app: Flask) -> None:
    """The blueprint, and the frames cache of this process."""
    if app.config["FRAMES_CACHE_BYTES"]:
        app.extensions["api.frames"] = FrameCache(app.config["FRAMES_CACHE_BYTES"])
    app.register_blueprint(bp)


@bp.post("/frames.json")
def log_frames() -> dict[str, Any]:
    """The positions of a posted ``{"code", "moves"}`` (the checker's replay), for logs of at
    most ``FRAMES_MAX_ACTIONS`` actions: computed on every request, so kept short."""
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
        return frames(code, body["moves"], current_app.config["FRAMES_MAX_ACTIONS"])
    except InvalidActionError as exc:  # an item that is neither text nor an action object
        raise Problem(422, f"moves: {exc.message}", "validation-error",
                      errors=[{"field": "moves", "message": exc.message}]) from None


@bp.get("/challenges/<variant>")
def challenge_page(variant: str) -> Any:
    """A variant's challenges: today's and this week's deal, its board and the time to the next
    one, and the past daily challenges with their winners (all read from the kept tables)."""
    if variant not in VARIANT_TITLES:
        return error_page(404, _("No such game"), _("There is no game {variant}.", variant=variant))
    session, moment = db.session(), datetime.now(UTC)
    current = []
    for kind in challenges.KINDS:
        challenge = current_or_prepare(variant, kind, moment)
        item: dict[str, Any] = {"kind": kind, "challenge": challenge}
        if challenge is not None:
            left = max(0, int((challenge.ends_at - moment).total_seconds()))
            top = boards.page(session.connection(), boards.entry_board(f"challenge:{challenge.id}"), 10, None)
            item.update(hours=left // 3600, minutes=left % 3600 // 60, entries=with_records(top["ranked"]))
        current.append(item)
    past = []
    for challenge in challenges.past(session, variant, "daily", moment - timedelta(days=1), 7, None):
        top = boards.page(session.connection(), boards.entry_board(f"challenge:{challenge.id}"), 1, None)
        past.append({"challenge": challenge, "winner": next(iter(with_records(top["ranked"])), None)})
    return render("challenge.html", title=_("Challenges: {variant}", variant=_(VARIANT_TITLES[variant])),
                  variant=variant, variants=VARIANTS, current=current, past=past,
                  description=_("The daily and weekly challenge of {variant}: today's deal, its board and past "
                                "challenges.", variant=_(VARIANT_TITLES[variant])))


class _FieldError(Exception):
    """A checker field that is missing or wrong, and why (in the page's language)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


@bp.route("/check", methods=["GET", "POST"])
def check() -> tuple[str, int]:
    """The checker: a plain form. With a code and a log (query or form fields) the page shows
    the verdict, the legal part's log and its last position, and the action that failed."""
    code_text = request.values.get("code", "").strip()
    moves = request.values.get("moves", "")
    context: dict[str, Any] = {"code": code_text, "moves": moves, "example": EXAMPLE_CODE, "verdict": None,
                               "field_error": None, "error_field": None}
    status = 200
    asked = "code" in request.values or "moves" in request.values
    if asked:
        try:
            context.update(check_log(code_text, moves))
        except _FieldError as exc:
            context.update(field_error=exc.message, error_field=exc.field)
            status = 422
    share = url_for("pages.check", code=code_text, moves=moves, _external=True,
                    **({"lang": g.explicit_lang} if g.explicit_lang else {})) if asked else request.url
    title = _("Check a log")
    if context["verdict"] is not None:
        title = _("Check of {code}", code=context["verdict"].code)
    return render("check.html", status, title=title, share_url=share,
                  page_scripts=["js/check.js"] if context["verdict"] is not None else [],
                  description=_("Paste a game code and a move log: the verifier replays it action by action."),
                  **context)


def check_log(code_text: str, moves: str) -> dict[str, Any]:
    """The checker's verdict on ``moves`` played on ``code_text``, and what the page shows of it."""
    if not code_text:
        raise _FieldError("code", _("Enter a game code such as {example}.", example=EXAMPLE_CODE))
    try:
        code = GameCode.from_text(code_text)
    except InvalidCodeError as exc:
        raise _FieldError("code", _("{code} is not a game code: {reason}", code=code_text,
                                    reason=code_problem(exc))) from None
    if not moves.strip():
        raise _FieldError("moves", _("Paste a move log."))
    limit = current_app.config.get("MAX_LOG_ACTIONS", MAX_FRAMES)
    if len(log_items(moves)) > limit:
        raise _FieldError("moves", _("The log has more than {limit} actions.", limit=limit))
    verdict = replay(code, moves)
    game = position_at(code, verdict.canonical, len(verdict.canonical))
    view = board_view(game.position)
    return {"verdict": verdict, "failure": action_error(verdict.error) if verdict.error else None,
            "steps": describe_log(verdict.canonical), "step": len(verdict.canonical),
            "score": game.position.score, "moves_count": game.position.moves, "won": game.is_won,
            "board": view, "labels": board_labels(g.lang, view)}
