"""The challenge pages (part of the ``pages`` blueprint): a variant's running
challenges with live countdowns and its calendar of past days and weeks, one page
per challenge (its final board, par, winners, the solution once the window has
closed, and a visitor's own result), and what the deal and record pages say about
a challenge.

**Who "your result" is.** A page knows its visitor only by the ``player`` query
parameter: the day page's small form (GET) sets it, and a player's page links every
challenge day with its own name. The challenge pages' links keep it (:func:`visitor`).
No cookie, no token: the page stays cacheable and says nothing a link does not (results
are public anyway). The browser remembers the name (``static/js/player.js``, local storage:
a challenge page opened without ``?player=`` is opened again with the remembered one) until
the visitor presses "Forget my name".
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from flask import g, redirect, request, url_for
from flask.typing import ResponseReturnValue
from flask.wrappers import Response
from sqlalchemy import select

from api.boards import kinds
from api.boards import reads as boards
from api.challenges import days as challenge_days
from api.challenges import windows as challenges
from api.pages.views import (
    VARIANT_TITLES,
    VARIANTS,
    WITHHELD_RECORD_PAGES,
    bp,
    cached_frames,
    cached_viewer,
    clock_text,
    conditional,
    error_page,
    page_url,
    render,
    requested_step,
)
from api.pages.words import _, day_text, moment_text
from api.platform import db
from api.platform.models import Challenge, Record
from api.platform.problems import Problem
from api.players.accounts import find_player
from api.players.stats import player_stats
from api.routes.challenges import current_or_prepare
from api.routes.leaderboard import with_records, withheld_codes
from engine.rules import by_variant
from engine.rules.registry import Scoring

#: rows of a challenge's board on its page, and on the variant's page
DAY_BOARD_ROWS, CURRENT_BOARD_ROWS = 25, 10
#: the past daily challenges listed under the calendar
RECENT_DAYS = 7
#: the earliest month the calendar shows (before the service existed: nothing, and no date arithmetic at year 1)
FIRST_MONTH = date(2000, 1, 1)


def scoring_of(variant: str) -> Scoring:
    """The registry's scoring table of ``variant``, which the boards' columns and caption follow
    (:attr:`~engine.rules.registry.Scoring.wins_differ`, :attr:`~engine.rules.registry.Scoring.takeback_loop`)."""
    return by_variant(variant).scoring


def left_text(seconds: int) -> str:
    """Time left, as the countdowns show it: ``5 d 9 h`` or ``3 h 12 min``."""
    days, rest = divmod(max(0, seconds), 86400)
    if days:
        return _("{days} d {hours} h", days=days, hours=rest // 3600)
    return _("{hours} h {minutes} min", hours=rest // 3600, minutes=rest % 3600 // 60)


def countdown(challenge: Challenge, moment: datetime) -> dict[str, Any]:
    left = int((challenge.ends_at - moment).total_seconds())
    return {"until": challenge.ends_at, "left": left_text(left), "utc": moment_text(challenge.ends_at)}


def rows_with_par(entries: list[dict[str, Any]], par: int | None) -> list[dict[str, Any]]:
    """Board rows with ``par_diff``: a won game's moves minus the par (None: not won, or no par)."""
    return [{**entry, "par_diff": entry["moves"] - par if par is not None and entry["won"] else None}
            for entry in entries]


def visitor() -> str | None:
    """The ``player`` query parameter (whose results the challenge pages show), when it is a name."""
    name = request.args.get("player", "").strip()
    return name if name and len(name) <= 64 else None


def with_visitor(values: dict[str, Any]) -> dict[str, Any]:
    """A link's query values with the visitor's ``player`` added (unless the link names one)."""
    name = visitor()
    return {"player": name, **values} if name is not None else values


def day_url(challenge: Challenge, **values: Any) -> str:
    return page_url("pages.challenge_day", variant=challenge.variant, kind=challenge.kind,
                    day=challenge.starts_at.date().isoformat(), **with_visitor(values))


def external_day_url(challenge: Challenge) -> str:
    """The day page's absolute link to share (with the visitor's ``player`` and chosen language)."""
    values = with_visitor({"lang": g.explicit_lang} if g.explicit_lang else {})
    return url_for("pages.challenge_day", variant=challenge.variant, kind=challenge.kind,
                   day=challenge.starts_at.date().isoformat(), _external=True, **values)


def challenges_url(variant: str, **values: Any) -> str:
    """A variant's challenge page, keeping the visitor's ``player``."""
    return page_url("pages.challenge_page", variant=variant, **with_visitor(values))


def challenge_title(challenge: Challenge, day: str | None = None) -> str:
    """"Daily challenge of Dec 4, 2026" (its day in the page's language; ``day``: the text put there)."""
    day = day_text(challenge.starts_at.date()) if day is None else day
    if challenge.kind == "daily":
        return _("Daily challenge of {day}", day=day)
    return _("Weekly challenge from {day}", day=day)


#: where a title's day goes, for the page to put it there as a ``<time>`` that stays on one line
DAY_MARK = "\x00"


def around_day(text: str) -> tuple[str, str]:
    """A text holding :data:`DAY_MARK` once, as the text before and after it (``macros.dated``)."""
    before, _mark, after = text.partition(DAY_MARK)
    return before, after


def challenge_heading(challenge: Challenge) -> tuple[str, str]:
    """:func:`challenge_title` around its day (``macros.challenge_title`` puts the day between)."""
    return around_day(challenge_title(challenge, DAY_MARK))


def weekday_names() -> list[str]:
    """The calendars' column headings, Monday first (ISO weeks)."""
    return [_("Mon"), _("Tue"), _("Wed"), _("Thu"), _("Fri"), _("Sat"), _("Sun")]


@bp.context_processor
def _challenge_helpers() -> dict[str, Any]:
    return {"day_url": day_url, "challenge_title": challenge_title, "challenge_heading": challenge_heading,
            "around_day": around_day, "day_mark": DAY_MARK, "scoring_of": scoring_of,
            "deal_challenges": deal_challenges, "record_challenge": record_challenge,
            "weekday_names": weekday_names, "record_time": record_time, "streaks_today": streaks_today,
            "challenges_url": challenges_url, "visitor": visitor, "today_strip": today_strip}


def streaks_today() -> date:
    """Today (UTC), which the streak calendars mark."""
    return datetime.now(UTC).date()


def requested_month(today: date) -> date:
    """The ``month`` query parameter (``2026-11``), from 2000 to this month; this month otherwise."""
    try:
        chosen = datetime.strptime(request.args.get("month", ""), "%Y-%m").date()
    except ValueError:
        return challenge_days.month_start(today)
    return max(FIRST_MONTH, min(chosen, challenge_days.month_start(today)))


@bp.get("/challenges/<variant>")
def challenge_page(variant: str) -> Any:
    """A variant's challenges: today's and this week's deal, its board and a live countdown,
    then the calendar of past days and weeks and the latest days with their winners."""
    if variant not in VARIANT_TITLES:
        return error_page(404, _("No such game"), _("There is no game {variant}.", variant=variant))
    session, moment = db.session(), datetime.now(UTC)
    current = []
    for kind in challenges.KINDS:
        challenge = current_or_prepare(variant, kind, moment)
        item: dict[str, Any] = {"kind": kind, "challenge": challenge,
                                "code": challenge and challenges.public_code(challenge, moment)}
        if challenge is not None:
            top = boards.page(session.connection(), boards.board(kinds.CHALLENGE, challenge.id),
                              CURRENT_BOARD_ROWS, None)
            item.update(countdown=countdown(challenge, moment),
                        entries=rows_with_par(with_records(top["ranked"]), challenge.par))
        current.append(item)
    shown = requested_month(moment.date())
    past = [{"challenge": challenge, "winners": challenge_days.winners(session, challenge)}
            for challenge in challenges.past(session, variant, "daily", moment, RECENT_DAYS + 1, None)
            if challenge.ends_at <= moment][:RECENT_DAYS]
    previous, following = challenge_days.previous_month(shown), challenge_days.next_month(shown)
    weeks = challenge_days.month(session, variant, shown, moment)
    return render("challenge.html", title=_("Challenges: {variant}", variant=_(VARIANT_TITLES[variant])),
                  variant=variant, variants=VARIANTS, current=current, past=past, moment=moment,
                  weeks=weeks, month=shown, today=moment.date(), visitor_states=visitor_states(weeks),
                  previous_month=previous.strftime("%Y-%m"),
                  next_month=following.strftime("%Y-%m") if following <= moment.date() else None,
                  page_scripts=["js/countdown.js", "js/player.js"],
                  description=_("The daily and weekly challenge of {variant}: today's deal, its board and past "
                                "challenges.", variant=_(VARIANT_TITLES[variant])))


def visitor_states(weeks: list[challenge_days.Week]) -> dict[int, str]:
    """The visitor's (``?player=``) result on each daily challenge of a month's calendar: ``won`` or
    ``played``, by challenge id (none without a visitor)."""
    name = visitor()
    found = find_player(db.session(), name) if name is not None else None
    name = found.name if found is not None else name
    ids = [cell[1].id for week in weeks for cell in week.days if cell is not None and cell[1] is not None]
    return challenge_days.results(db.session(), name, ids) if name is not None else {}


@bp.get("/challenges/<variant>/<kind>/<day>")
def challenge_day(variant: str, kind: str, day: str) -> ResponseReturnValue:
    """One challenge's page: its board a page at a time (``cursor``), par, winners, the
    solution once its window has closed, and the result of ``player`` when given."""
    try:
        first = date.fromisoformat(day)
    except ValueError:
        first = None
    if variant not in VARIANT_TITLES or kind not in challenges.KINDS or first is None:
        return error_page(404, _("No such challenge"), _("There is no such challenge."))
    session, moment = db.session(), datetime.now(UTC)
    challenge = challenge_days.find(session, variant, kind, first)
    if challenge is None or challenge.starts_at > moment:
        return error_page(404, _("No such challenge"), _("There is no such challenge."))
    if challenge.starts_at.date() != first:  # a weekly challenge by any day of its week: its Monday
        return redirect(day_url(challenge, **request.args.to_dict()), 308)
    board = boards.board(kinds.CHALLENGE, challenge.id)
    try:
        found = boards.page(session.connection(), board, DAY_BOARD_ROWS, request.args.get("cursor") or None)
    except boards.BadCursor:
        return error_page(404, _("No such challenge"), _("There is no such challenge."))
    final = challenge.ends_at <= moment
    code = challenges.public_code(challenge, moment)  # a running challenge's deal is secret
    return render("challenge_day.html", title=challenge_title(challenge), challenge=challenge, variant=variant,
                  code=code,
                  final=final, entries=rows_with_par(with_records(found["ranked"]), challenge.par),
                  next_cursor=found["next_cursor"], first_page=not request.args.get("cursor"),
                  winners=challenge_days.winners(session, challenge),
                  countdown=None if final else countdown(challenge, moment),
                  you=your_result(board, challenge), share_url=external_day_url(challenge),
                  page_scripts=["js/player.js", "js/share.js"] if final else
                  ["js/countdown.js", "js/player.js", "js/share.js"],
                  description=_("{challenge}: {variant}, deal {code}, par {par} moves.",
                                challenge=challenge_title(challenge), variant=_(VARIANT_TITLES[variant]),
                                code=code, par=challenge.par) if code else
                  _("{challenge}: {variant}, par {par} moves.", challenge=challenge_title(challenge),
                    variant=_(VARIANT_TITLES[variant]), par=challenge.par))


def published_solution(challenge_id: int) -> Challenge | None:
    """A challenge whose window has closed and that has a solver's line (None otherwise: a running
    challenge's solution, like its deal, is secret, and nothing says whether it exists)."""
    found = db.session().get(Challenge, challenge_id) if 0 < challenge_id < 2 ** 63 else None
    if found is None or found.ends_at > datetime.now(UTC) or not found.par_line:
        return None
    return found


@bp.get("/challenges/<int:challenge_id>/solution")
def challenge_solution(challenge_id: int) -> ResponseReturnValue:
    """A closed challenge's solution in the replay viewer (the record page's), its notation folded
    away; a 404 page while the window runs (the same as for no challenge at all)."""
    challenge = published_solution(challenge_id)
    if challenge is None:
        return error_page(404, _("No such solution"), _("There is no such solution."))
    actions = challenge.par_line.split()
    viewer = cached_viewer(("solution", challenge.id), challenge.code, actions, requested_step(len(actions)), None,
                           lambda number: page_url("pages.challenge_solution", challenge_id=challenge.id,
                                                   step=number))
    lang = {"lang": g.explicit_lang} if g.explicit_lang else {}
    title = _("Solution: {challenge}", challenge=challenge_title(challenge))
    return conditional(render(
        "challenge_solution.html", title=title, challenge=challenge, variant=challenge.variant, viewer=viewer,
        moves=len(actions), page_scripts=["js/record.js", "js/share.js"],
        share_url=url_for("pages.challenge_solution", challenge_id=challenge.id, _external=True, **lang),
        description=_("{challenge}: the solver's line in {moves} moves.", challenge=challenge_title(challenge),
                      moves=challenge.par)))


@bp.get("/challenges/<int:challenge_id>/solution/frames.json")
def challenge_solution_frames(challenge_id: int) -> Any:
    """The window of the solution's frames that holds ``?step=N`` (as a record's frames)."""
    def load() -> tuple[str, str, list[int] | None]:
        challenge = published_solution(challenge_id)
        if challenge is None:
            raise Problem(404, f"there is no published solution of challenge {challenge_id}")
        return challenge.code, challenge.par_line, None

    return cached_frames(("solution-frames", challenge_id), load)


def your_result(board: boards.Board, challenge: Challenge) -> dict[str, Any] | None:
    """The ``player`` parameter's entry and rank on the board (``entry`` None: not played)."""
    name = visitor()
    if name is None:
        return None
    found = find_player(db.session(), name)
    name = found.name if found is not None else name
    connection = db.session().connection()
    place = boards.standing(connection, board, name)
    entry = boards.find(connection, board, name)
    row = rows_with_par(with_records([(place["rank"], entry)]), challenge.par)[0] if place and entry else None
    return {"name": name, "entry": row, "place": place}


def deal_challenges(code: str) -> list[Challenge]:
    """The challenges a deal was (started ones), for its page."""
    moment = datetime.now(UTC)  # (a running challenge is not said to be this deal: that would give it away)
    return [challenge for challenge in challenge_days.of_deal(db.session(), code, moment)
            if challenges.public_code(challenge, moment) is not None]


def record_challenge(record: Record) -> dict[str, Any] | None:
    """The challenge whose window a record was received in, and its player's rank there
    (their best record of the window, which may be another one)."""
    challenge = challenge_days.of_record(db.session(), record.code, record.received_at)
    if challenge is None:
        return None
    place, this_record = place_on_board(challenge, record)
    return {"challenge": challenge, "place": place, "this_record": this_record,
            "final": challenge.ends_at <= datetime.now(UTC)}


def place_on_board(challenge: Challenge, record: Record) -> tuple[Any, bool]:
    """The record's player's place on the challenge's board, and whether their entry there is this record."""
    board = boards.board(kinds.CHALLENGE, challenge.id)
    connection = db.session().connection()
    entry = boards.find(connection, board, record.player)
    return boards.standing(connection, board, record.player), entry is not None and entry.record_id == record.id


# -- a record of a running challenge ------------------------------------------------

def record_time(record: Record | dict[str, Any]) -> str | None:
    """A record's (or a board entry's) time as the pages show it (``7:27``): the server's measure
    for a challenge attempt (from its start to the record's arrival), else the client's ``elapsed_ms``."""
    def field(name: str) -> int | None:
        return record.get(name) if isinstance(record, dict) else getattr(record, name)

    server, client = field("server_elapsed_ms"), field("elapsed_ms")
    elapsed = server if server is not None else client
    return None if elapsed is None else clock_text(elapsed)


def sealing_challenge(record: Record, moment: datetime) -> Challenge | None:
    """The running challenge (with attempts) whose window the record counts in (the shortest, when a
    daily and a weekly share the deal). None for a record received before every such window: its
    page would tie an older public record to the running challenge's deal, so it stays a 404."""
    running = db.session().scalars(select(Challenge).where(
        Challenge.code == record.code, Challenge.starts_at <= moment, Challenge.ends_at > moment,
        Challenge.attempts_required.is_(True))).all()
    counted = [row for row in running if row.starts_at <= record.received_at < row.ends_at]
    return min(counted, key=lambda row: row.ends_at - row.starts_at, default=None)


def sealed_record(record_id: int) -> Response | None:
    """The spoiler-safe page of a record of a running challenge's deal (None: no such record, or
    not sealed): its result, rank, moves against par and time, and when its replay unlocks; no
    deal, log or position (the API and frames keep answering 404 until the window closes)."""
    found = db.session().get(Record, record_id) if 0 < record_id < 2 ** 63 else None
    moment = datetime.now(UTC)
    if found is None or found.code not in withheld_codes():
        return None
    challenge = sealing_challenge(found, moment)
    if challenge is None:
        return None
    place, this_record = place_on_board(challenge, found)
    unlocks = moment_text(challenge.ends_at)
    title = _("{player} · {challenge}", player=found.player, challenge=challenge_title(challenge))
    result = _("won in {moves} moves", moves=found.moves) if found.won else _("not won")
    return conditional(render(
        "record_sealed.html", title=title, record=found, challenge=challenge, place=place,
        this_record=this_record, time=record_time(found),
        par_diff=found.moves - challenge.par if found.won else None, unlocks=unlocks,
        hidden=found.status == "hidden", variant=challenge.variant, page_scripts=["js/share.js"],
        share_url=url_for("pages.record", record_id=found.id, _external=True,
                          **({"lang": g.explicit_lang} if g.explicit_lang else {})),
        description=_("{player}, {challenge}: {result}.", player=found.player,
                      challenge=challenge_title(challenge), result=result)))



WITHHELD_RECORD_PAGES.append(sealed_record)

# -- the "Today" strip ----------------------------------------------------------------

def today_strip() -> list[dict[str, Any]]:
    """Each game's running daily and weekly challenge, for the strip atop the home and challenge
    pages: par, time left, and for the visitor (``?player=``) their place and a daily streak at risk
    (a run of won days that today's challenge, not won yet, would end). Reads only: a window not
    prepared yet says so (the challenge page asks for it)."""
    session, moment, name = db.session(), datetime.now(UTC), visitor()
    found = find_player(session, name) if name is not None else None
    name = found.name if found is not None else name
    streaks = {row["variant"]: row["current_streak"] for row in player_stats(session, name)} if name else {}
    out = []
    for variant, title in VARIANTS:
        kinds = [today_item(variant, kind, moment, name) for kind in challenges.KINDS]
        daily = kinds[0]
        at_risk = streaks.get(variant, 0) if daily["challenge"] is not None and not daily["won"] else 0
        out.append({"variant": variant, "title": title, "kinds": kinds, "streak_at_risk": at_risk})
    return out


def today_item(variant: str, kind: str, moment: datetime, name: str | None) -> dict[str, Any]:
    """One running challenge of the strip, and the visitor's place on its board (None: not played)."""
    challenge = challenges.current(db.session(), variant, kind, moment)
    item: dict[str, Any] = {"kind": kind, "challenge": challenge, "place": None, "won": False}
    if challenge is None:
        return item
    item["left"] = left_text(int((challenge.ends_at - moment).total_seconds()))
    if name is not None:
        board, connection = boards.board(kinds.CHALLENGE, challenge.id), db.session().connection()
        entry = boards.find(connection, board, name)
        item.update(place=boards.standing(connection, board, name) if entry else None,
                    won=bool(entry and entry.won))
    return item
