"""Pages for players, outside ``/api/v1``: the home page with the challenge standings,
a deal, a record with its replay, and the log checker.

Every page is complete as the server renders it (Jinja, autoescaped): the
standings and leaderboards, the boards, a record's log and any step of it (``?step=N``), and the
checker's verdict (a plain form, ``GET``/``POST /check?code=…&moves=…``). Plain
JavaScript (``api/pages/static/js``, ES modules) then enhances them: the replay viewer
steps without reloading, copy buttons, times in the reader's zone. It builds the DOM
with ``textContent`` only. Two JSON endpoints are page plumbing, not API: the
positions after each action of a record (``/records/{id}/frames.json``) or of a
posted log (``/frames.json``), computed with the engine, so that the browser knows no rule.

The language is the ``lang`` query parameter, else ``Accept-Language``
(English, Korean, Finnish; English when none fits); links keep an explicit ``lang``.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from datetime import UTC
from typing import Any

from babel.dates import format_datetime
from flask import Blueprint, Flask, current_app, g, redirect, render_template, request, url_for
from flask.wrappers import Response
from markupsafe import Markup

from api.boards import reads as boards
from api.fairplay.flags import FLAGS, page_values
from api.pages import assets, sharecard
from api.pages.board import SCRIPT_TEXTS, board_labels, board_view, describe_log, frames, log_page, position_at
from api.pages.framecache import FrameCache, Picture, accepts_gzip, pack
from api.pages.i18n import LANGUAGE_NAMES, card_names, page_language
from api.pages.words import _, card_face, card_short, day_text, games_in_words, month_text, week_text
from api.platform import db
from api.platform.marks import N_
from api.platform.models import Record
from api.platform.problems import Problem
from api.records.times import unpack_times
from api.routes import PREFIX
from api.routes.leaderboard import standing_entries, with_records, withheld_codes
from engine import Game, GameCode, InvalidCodeError
from engine.codes import RULES as RULE_LETTERS
from engine.codes import VERSION as CODE_VERSION
from engine.rules import RULE_SETS
from engine.rules.registry import GAMES

bp = Blueprint("pages", __name__)

#: the variants, in the order of the home page's standings
VARIANTS = tuple((rule_set.variant, rule_set.title) for rule_set in RULE_SETS)  # titles: msgids (api.pages.i18n)
VARIANT_TITLES = dict(VARIANTS)
#: the rows of a leaderboard on a page
LEADERBOARD_ROWS = 10
EXAMPLE_CODE = "YU1-C-AAAAAAB"
#: a year: the cache lifetime of a static file under its hashed name
IMMUTABLE = "public, max-age=31536000, immutable"

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
            "card_short": card_short, "card_url": card_url, "card_size": sharecard.SIZE,
            "longest_bucket": longest_bucket, "games_in_words": games_in_words, "first_variant": VARIANTS[0][0],
            "day_text": day_text, "month_text": month_text, "week_text": week_text}


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
                   "names": card_names(g.lang), "longest": LONGEST_BUCKETS,
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
    """A file of ``api/pages/static``: under its hashed name cached for a year (gzip-compressed when
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


# -- the pages ------------------------------------------------------------------

def leaderboard_entries(code: str, limit: int = LEADERBOARD_ROWS) -> list[Any]:
    """The top of a deal's board, as ``GET /api/v1/leaderboard?code=…`` answers it: each player's
    best eligible record of that deal, read from the kept board. (No page ranks records of different
    deals against each other by raw score: across a variant, pages show :func:`standings_entries`.)"""
    return with_records(boards.page(db.session().connection(), boards.board("deal", code), limit,
                                    None)["ranked"])


def standings_entries(variant: str, limit: int = LEADERBOARD_ROWS) -> list[Any]:
    """The top of a variant's standings, as ``GET /api/v1/standings`` answers it: challenge points
    (3 for each challenge won, 1 for each one played and not won), the like-for-like variant board."""
    return standing_entries(boards.page(db.session().connection(), boards.board("standings", variant), limit,
                                        None)["ranked"])


@bp.get("/")
def home() -> tuple[str, int]:
    return home_page(200, "", None)


def home_page(status: int, code: str, error: str | None) -> tuple[str, int]:
    boards = [(variant, name, standings_entries(variant)) for variant, name in VARIANTS]
    return render("home.html", status, title=_("Solitaire records"), variants=VARIANTS, boards=boards, code=code,
                  code_error=error, example=EXAMPLE_CODE, page_scripts=["js/player.js"],
                  description=_("Verified games of {games}, replayed action by action.", games=games_in_words()))


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
    """The record the pages show: one the API serves at ``GET /api/v1/records/{id}`` (none of a
    running or upcoming challenge's deal, checked on every request: its log would give the deal away)."""
    found = db.session().get(Record, record_id) if 0 < record_id < 2 ** 63 else None
    return None if found is None or found.code in withheld_codes() else found


def record_summary(stored: Record) -> str:
    """A record in one sentence, for sharing: "ann won YU1-C-AAAAAAB in 88 moves, 625 points"."""
    params = {"player": stored.player, "code": stored.code, "moves": stored.moves, "score": stored.score}
    if stored.won:
        return _("{player} won {code} in {moves} moves, {score} points", **params)
    return _("{player} played {code}: {moves} moves, {score} points, not won", **params)


def requested_step(total: int, default: int = 0) -> int:
    """The ``step`` parameter (query or form), within 0 … ``total`` (missing or bad: ``default``)."""
    try:
        step = int(request.values.get("step", str(default)))
    except ValueError:
        step = default
    return max(0, min(total, step))


def clock_text(ms: int) -> str:
    """A player's clock: ``4:07``, ``1:02:03`` (static/js/replay.js writes it the same way)."""
    minutes, seconds = divmod(ms // 1000, 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}" if minutes >= 60 else f"{minutes}:{seconds:02d}"


def viewer_state(code: str | GameCode, actions: list[str], step: int, times: list[int] | None,
                 default_step: int = 0) -> dict[str, Any]:
    """What the replay viewer shows at ``step`` of a legal canonical log: the board, counters,
    the player's clock (when times were sent), and the page of the log around the step;
    ``default_step``: the step its page shows without ``?step=`` (its address leaves that one out)."""
    total = len(actions)
    first, last = log_page(step, total)
    game = position_at(code, actions, step)
    steps = describe_log(actions, first, last)
    view = board_view(game.position)
    clock = None if times is None else clock_text(times[step - 1] if step else 0)
    return {"board": view, "labels": board_labels(g.lang, view), "steps": steps, "step": step, "total": total,
            "first": first, "last": last, "previous": first - 1 if first > 1 else None,
            "next": last + 1 if last < total else None, "moved": steps[step - first] if step else None,
            "score": game.position.score, "moves": game.position.moves, "won": game.is_won, "clock": clock,
            "default": default_step}


def record_viewer(stored: Record, actions: list[str]) -> Markup:
    """The record page's viewer at ``?step=N``, else at the finished game (its last position),
    rendered once per record, step and language (a log never changes; kept in the page cache):
    what the rest of the page shows can change."""
    total = len(actions)
    return cached_viewer(("viewer", stored.id), stored.code, actions, requested_step(total, total),
                         unpack_times(stored.times),
                         lambda number: page_url("pages.record", record_id=stored.id, step=number), default_step=total)


def cached_viewer(key: tuple[Any, ...], code: str, actions: list[str], step: int, times: list[int] | None,
                  step_href: Callable[[int], str], default_step: int = 0) -> Markup:
    """The replay viewer of a log that never changes (a record's, a closed challenge's solution) at
    ``step`` (``default_step``: the one its page shows without ``?step=``): rendered once per ``key``,
    step and language, and kept in the page cache."""
    cache = frame_cache()
    key = (*key, step, g.lang, g.explicit_lang, request.script_root)
    html = cache.get(key) if cache is not None else None
    if html is None:
        html = render_template("_record_viewer.html", v=viewer_state(code, actions, step, times, default_step),
                               step_href=step_href)
        if cache is not None:
            cache.put(key, html)
    return Markup(html)  # rendered by the autoescaping template above


def conditional(page: tuple[str, int]) -> Response:
    """A page with a strong ETag of its body, revalidated on each use (``no-cache``): ``304``
    when the client's copy is still the page."""
    response = current_app.make_response(page)
    response.set_etag(hashlib.sha256(response.get_data()).hexdigest()[:32])
    response.cache_control.no_cache = True
    response.make_conditional(request)  # changes the response itself
    return response


#: what answers for a record that ``find_record`` does not show, before the 404: the pages built on this
#: module add themselves (``pages_challenges.sealed_record``: a record of a running challenge's deal)
WITHHELD_RECORD_PAGES: list[Callable[[int], Response | None]] = []


@bp.get("/records/<int:record_id>")
def record(record_id: int) -> Any:
    stored = find_record(record_id)
    if stored is None:
        for page in WITHHELD_RECORD_PAGES:
            answer = page(record_id)
            if answer is not None:
                return answer
        return error_page(404, _("No such record"), _("There is no record {id}.", id=record_id))
    actions = stored.canonical.split()
    received = format_datetime(stored.received_at.astimezone(UTC), "medium", tzinfo=UTC,
                               locale=g.lang)
    title = _("{player} on {code} · record {id}", player=stored.player, code=stored.code, id=stored.id)
    lang = {"lang": g.explicit_lang} if g.explicit_lang else {}
    return conditional(render(
        "record.html", title=title, description=record_summary(stored), page_scripts=["js/record.js", "js/share.js"],
        record=stored, viewer=record_viewer(stored, actions), received=received,
        hidden=getattr(stored, "status", "visible") == "hidden", flags=flag_texts(stored),
        share_url=url_for("pages.record", record_id=stored.id, _external=True, **lang)))


#: what each fair-play flag means, for the record and player pages (declared in ``api.fairplay.flags.FLAGS``)
FLAG_TEXTS = {kind.name: kind.page for kind in FLAGS}


def flag_texts(stored: Record) -> list[str]:
    """The record's flags in the page's language (one line each)."""
    return [_(FLAG_TEXTS[f["flag"]], **page_values(f, stored.copy_of)) if f.get("flag") in FLAG_TEXTS
            else str(f.get("flag")) for f in stored.flags or []]


@bp.get("/records/<int:record_id>/frames.json")
def record_frames(record_id: int) -> Any:
    """The window of a record's frames that holds ``?step=N`` (the first window without it),
    from the cache when it is there (:mod:`api.pages.framecache`: ETag, 304, gzip); a record never
    changes, so each window is computed once per language and engine version."""
    def load() -> tuple[str, str, list[int] | None]:
        stored = find_record(record_id)
        if stored is None:
            raise Problem(404, f"there is no record {record_id}")
        return stored.code, stored.canonical, unpack_times(stored.times)

    return cached_frames(("frames", record_id), load, record_id)


def cached_frames(key: tuple[Any, ...], load: Callable[[], tuple[str, str, list[int] | None]],
                  record_id: int | None = None) -> Any:
    """The window of frames of a log that never changes that holds ``?step=N``, from the cache when
    it is there; ``load()`` gives its code, canonical log and times (or raises a 404 ``Problem``).
    A record's (``record_id``) is checked against the withheld set each time it is served."""
    step = requested_step(current_app.config["MAX_LOG_ACTIONS"])
    cache = frame_cache()
    key = (*key, log_page(step, step)[0], g.lang)
    cached = cache.get(key) if cache is not None else None
    if cached is not None and cached.code is not None and cached.code in withheld_codes():
        raise Problem(404, f"there is no record {record_id}")  # its deal became a challenge since: not shown
    if cached is None:
        code, canonical, times = load()
        data = frames(GameCode.from_text(code), canonical, current_app.config["MAX_LOG_ACTIONS"], step, times)
        if data["error"] is not None:
            # a stored log this engine finds illegal: its sentence is in the page's language; not cached
            response = current_app.json.response(data)
            response.headers["Cache-Control"] = "no-cache"
            return response
        cached = pack(data, code if record_id is not None else None)
        if cache is not None:
            cache.put(key, cached)
    return cached.response(request)


@bp.get("/deals/<code>/card.png")
def deal_card(code: str) -> Response:
    """A deal's share image: the deal, its code and game."""
    try:
        game_code = GameCode.from_text(code)
    except InvalidCodeError as exc:
        raise Problem(404, f"{code} is not a game code: {exc.message}") from None

    def draw() -> Picture:
        board = board_view(Game.from_code(game_code).position)
        return Picture.of(sharecard.share_image(sharecard.Card(
            _("Deal {code}", code=str(game_code)), _(VARIANT_TITLES[game_code.variant]), _("Solitaire records"),
            board=board)))

    return share_card(("card", "deal", str(game_code), g.lang), draw)


def share_card(key: tuple[Any, ...], draw: Any, record_id: int | None = None) -> Response:
    """A share image from the page cache, else drawn by ``draw()`` and kept (ETag, 304). A
    record's (``record_id``) is checked against the withheld set each time it is served."""
    cache = frame_cache()
    picture = cache.get(key) if cache is not None else None
    if picture is not None and picture.code is not None and picture.code in withheld_codes():
        raise Problem(404, f"there is no record {record_id}")  # its deal became a challenge since it was drawn
    if picture is None:
        picture = draw()
        if cache is not None:
            cache.put(key, picture)
    return picture.response(request)


def card_url(endpoint: str, **values: Any) -> str:
    """The absolute URL of a share image, in the page's chosen language."""
    if g.explicit_lang:
        values.setdefault("lang", g.explicit_lang)
    return url_for(endpoint, _external=True, **values)


#: the longest columns a board is drawn for, in steps (static/css/pages.css fans cards tighter for each)
LONGEST_BUCKETS = (12, 16, 20, 26, 34, 52)


def longest_bucket(view: dict[str, Any]) -> int:
    """The smallest of ``LONGEST_BUCKETS`` that holds the board's longest column (``data-longest``)."""
    longest = max((column["down"] + len(column["up"]) for column in view["columns"]), default=0)
    return next((bucket for bucket in LONGEST_BUCKETS if longest <= bucket), LONGEST_BUCKETS[-1])


def frame_cache() -> FrameCache | None:
    """This process's cache of records' frames (``None`` when ``FRAMES_CACHE_BYTES`` is 0)."""
    return current_app.extensions.get("api.frames")


def init_app(app: Flask) -> None:
    """The blueprint, and the frames cache of this process."""
    if app.config["FRAMES_CACHE_BYTES"]:
        app.extensions["api.frames"] = FrameCache(app.config["FRAMES_CACHE_BYTES"])
    app.register_blueprint(bp)


