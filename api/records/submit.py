"""Records: a record's identity (:func:`log_hash`), its column values from a verified
replay (:func:`new_record`), storing it once with the upkeep of its boards
(:func:`store_record`), and a submission as one service function (:func:`submit`:
replay, evidence, store, in one transaction), which raises domain errors
(:class:`Refused`) that the views turn into HTTP. Used by the ``/records`` views, the
backup and re-verification."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, insert, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import engine
from api.boards import reads as boards
from api.boards.earned import earned
from api.fairplay import evidence
from api.fairplay import judging as fairplay
from api.platform import metrics
from api.platform.models import LineBand, Player, Record, claims
from api.players.accounts import Claim, Submitter, name_params, named_player, settle, skeleton_hash
from api.schemas import record_json
from api.webhooks import delivery as webhooks
from engine import GameCode
from verifier import Verdict, play

#: the ones of a record's columns that make it the same game (its unique constraint)
SAME_GAME = ("player", "code", "log_hash")


def log_hash(canonical: str) -> str:
    """The SHA-256 of a canonical log, hex: with the player and the code, a record's identity.

    >>> log_hash("S")[:12]
    '8de0b3c47f11'
    """
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_record(verdict: Verdict, body: dict[str, Any], submitted_by: str | None = None,
               replayed_earned: int | None = None) -> dict[str, Any]:
    """A new record's column values (all but its id), from a verified replay and the submission's
    own fields; ``replayed_earned``: the earned points that replay kept (:class:`engine.layouts.Line`),
    else worked out here (:func:`api.boards.earned.earned`)."""
    claimed = body.get("claimed") or {}
    now = datetime.now(UTC)
    canonical = verdict.canonical_text
    points = (earned(str(verdict.code), canonical.split(), verdict.score, verdict.takebacks)
              if replayed_earned is None else replayed_earned)
    return dict(  # noqa: C408 (the columns read best as keywords)
        player=body.get("player"), code=str(verdict.code), variant=verdict.code.variant, number=verdict.code.number,
        canonical=canonical, log_hash=log_hash(canonical),
        won=verdict.won, score=verdict.score, moves=verdict.moves, actions=verdict.actions, undos=verdict.undos,
        takebacks=verdict.takebacks, foundation_cards=verdict.foundation_cards,
        earned=points,
        claimed_score=claimed.get("score"), claimed_moves=claimed.get("moves"), claimed_won=claimed.get("won"),
        elapsed_ms=body.get("elapsed_ms"), client=body.get("client"),
        engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
        received_at=now, verified_at=now, submitted_by=submitted_by, status="visible",
        player_id=None, ranked=True, flags=[], times=None, copy_of=None, vouched_by=None, line=None,
        attempt_id=None, server_elapsed_ms=None)


#: SQLite: the insert, skipping a stored game and returning the new id (the upkeep follows it)
_INSERT_SQLITE = (sqlite.insert(Record.__table__).on_conflict_do_nothing(  # type: ignore[arg-type]
    index_elements=list(SAME_GAME)).returning(Record.__table__.c.id))
#: SQLite: a new tokenless player (the name's ``INSERT … ON CONFLICT DO NOTHING RETURNING id``)
_NEW_PLAYER_SQLITE = sqlite.insert(Player.__table__).on_conflict_do_nothing().returning(  # type: ignore[arg-type]
    Player.__table__.c.id)


class Stale(Exception):
    """A record was not stored because its deal changed since it was judged (another record
    of it came first), or its new player's name was taken meanwhile: judge it again."""


def insert_record(connection: Connection, values: dict[str, Any], bands: list[int] | None = None,
                  seen: int | None = None, upkeep: bool = True, claim: Claim | None = None) -> int | None:
    """Insert a record with the column ``values`` and keep its boards and the player's totals,
    through SQLAlchemy Core for either dialect; the new id, or ``None`` if the same game is stored.

    ``seen``: the deal's version the record was judged at; :class:`Stale` if it changed since
    (``None``: store whatever it is). A ``player_id`` of ``None`` makes a new tokenless player
    of the record's name (its id is set in ``values``). ``bands``: the index keys of the
    record's effective line (``line_bands``), stored with it. ``upkeep=False``: without the
    boards and totals, for a record that takes no part in them yet (flagged ``pending``).
    ``claim``: a claimed name whose player is settled here (:func:`settle_player`), in the same
    statement on PostgreSQL, where nothing was read before (``FAIRPLAY_JUDGE=worker``); a
    registered player no key vouches for stores and changes nothing (403 ``wrong-player``).

    On PostgreSQL all of it is one statement (:func:`api.boards.reads.store_with_upkeep`: one round
    trip, atomic, and its own commit in autocommit); a record that improves a challenge entry
    then updates the player's standing in a second one (standings are rebuilt from the
    entries, so a standing missed in a crash between the two is put right by the player's next
    challenge record, or ``flask --app api boards rebuild``). Elsewhere these are statements of
    the caller's transaction, which holds SQLite's write lock (:func:`api.fairplay.judging.lock_deal`)."""
    bands = sorted(set(bands or ()))
    postgres = connection.dialect.name == "postgresql"
    if claim is not None and not postgres:  # (SQLite: read in the caller's transaction, which holds the write lock)
        settle_player(values, claim, named_player(connection, claim.name))
    by_name = name_params(claim.name) if claim is not None and postgres else {"nfc": None, "skeleton": None}
    new = values["player_id"] is None  # a new tokenless player of the record's name (unless the claim reads as one)
    new_player = {"new_name": values["player"] if new else None,
                  "new_skeleton": (by_name["skeleton"] or skeleton_hash(values["player"])) if new else None}
    if postgres:
        [row] = boards.store_with_upkeep(upkeep).execute(connection, {
            **values, **new_player, **by_name, "vouch": claim.vouch if claim is not None else None,
            "bands": evidence.pack(bands), "seen": seen, "lock_key": fairplay.deal_lock_key(values["code"])})
        new_id, changed, fresh, player_id, named_id, named_name, registered = row
        if claim is not None:
            settle_player(values, claim, None if named_id is None else Submitter(int(named_id), named_name,
                                                                                   bool(registered)))
        if not fresh or player_id is None:
            raise Stale(values["code"])
        values["player_id"] = player_id
        if new_id is not None and changed:
            boards.challenge_entries_changed(connection, values["player"], changed)
        return None if new_id is None else int(new_id)
    if connection.execute(boards.version_upsert(sqlite.insert), {"code": values["code"], "seen": seen}).first() is None:
        raise Stale(values["code"])
    if new_player["new_name"] is not None:
        values["player_id"] = connection.execute(_NEW_PLAYER_SQLITE, {
            "name": values["player"], "skeleton_hash": new_player["new_skeleton"], "token_hash": None,
            "created_at": values["received_at"]}).scalar()
        if values["player_id"] is None:
            raise Stale(values["code"])
    new_id = connection.execute(_INSERT_SQLITE, values).scalar()
    if new_id is not None and upkeep:
        boards.record_stored(connection, new_id)
    if new_id is not None and bands:
        connection.execute(insert(LineBand), [{"band": band, "record_id": new_id} for band in bands])
    return new_id


def store_record(session: Session, values: dict[str, Any], bands: list[int] | None = None,
                 seen: int | None = None, upkeep: bool = True, claim: Claim | None = None,
                 times: list[int] | None = None) -> tuple[dict[str, Any] | Record, bool]:
    """Store a record with the column ``values`` (:func:`insert_record`) unless the same
    player's same canonical log of the deal is stored already. Return the record to answer
    with, and whether it is new: a new one as a dict (``values`` with its id, an empty
    history, and its ``times`` as a list, not packed), a stored one as its :class:`Record`.
    A new record skips the ORM: building a mapped object and flushing it costs several times
    the CPU of the statement."""
    new_id = insert_record(session.connection(), values, bands, seen, upkeep, claim)
    if new_id is not None:
        claimed = claims(values["claimed_score"], values["claimed_moves"], values["claimed_won"])
        return {**values, "id": new_id, "history": [], "claimed": claimed,
                "times": values["times"] if times is None else times}, True
    # the same game is stored (perhaps a moment ago, by a concurrent request): answer with that one
    same_game = [getattr(Record, column) == values[column] for column in SAME_GAME]
    return session.scalars(select(Record).where(*same_game)).one(), False


def settle_player(values: dict[str, Any], claim: Claim, named: Submitter | None) -> Submitter:
    """A record's player columns, from the ``claim`` and the player its name reads as
    (:func:`api.players.accounts.settle`); that player."""
    player, vouched_by = settle(claim, named)
    values.update(player=player.name, player_id=player.id, vouched_by=vouched_by)
    return player


# -- a submission ---------------------------------------------------------------

class Refused(Exception):
    """A submission the service does not store (the views answer 422)."""


class EmptyLog(Refused):
    """The log has no action: there is no game to store."""


class BadTimes(Refused):
    """Times that cannot be the log's (``field`` names the place)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Busy(Refused):
    """The deal was busy with other submissions: held by them too long (:func:`api.fairplay.judging.hold_deal`),
    or its records kept changing (:data:`JUDGEMENTS` times)."""


class RejectedLog(Refused):
    """An illegal log, or claims that do not match the replay: the ``verdict`` says which."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__("the log is not verified")
        self.verdict = verdict


@dataclass(frozen=True)
class Submitted:
    """A stored submission: the record to answer with (a dict when new), whether it is new,
    whether it ranked on a deal no search has looked at yet (the caller may have it solved),
    and whether it waits for the worker tier's judgement (``FAIRPLAY_JUDGE=worker``)."""

    record: dict[str, Any] | Record
    new: bool
    ranked_unsearched: bool
    pending: bool = False


def check_times(times: list[int] | None, actions: int) -> None:
    """:class:`BadTimes` unless there is one time per action of the log and none is earlier than the one before."""
    if times is None:
        return
    if len(times) != actions:
        raise BadTimes("times", f"{len(times)} times for a log of {actions} actions: give one time per action")
    for index in range(1, len(times)):
        if times[index] < times[index - 1]:
            raise BadTimes(f"times.{index}", f"{times[index]} ms is earlier than the time before it "
                                             f"({times[index - 1]} ms): times count from the game's start")


#: most times a submission is judged again because other records of its deal came first meanwhile
JUDGEMENTS = 20


def replayed(code: GameCode, body: dict[str, Any], submitted_by: str | None,
             judge_later: bool) -> tuple[dict[str, Any], frozenset[int], list[int]]:
    """The log's one replay: a verified game's column values (its line packed in them), its
    effective line's positions and their index keys (none when its line is ``judge_later``);
    :class:`RejectedLog` for an illegal log or claims that do not match."""
    played = play(code, body["moves"], body.get("claimed"), line=not judge_later)
    verdict = played.verdict
    metrics.verified(verdict)
    if not verdict.verified:
        raise RejectedLog(verdict)
    values = new_record(verdict, body, submitted_by, None if played.line is None else played.line.earned)
    if judge_later:
        return values, frozenset(), []  # (judged later: nothing to read by)
    line = played.positions
    positions = frozenset(line)
    values["line"] = evidence.pack(positions)
    return values, positions, evidence.index_keys(line)


def submit(session: Session, claim: Claim, code: GameCode, body: dict[str, Any], submitted_by: str | None,
           times_required: bool, judge_later: bool = False) -> Submitted:
    """Replay a submitted game, judge it on its effective line and its times, and store it once.

    On PostgreSQL that is two round trips: one statement reads what the game is judged by
    (the deal's evidence and version, and the player the claimed name reads as:
    :func:`api.fairplay.judging.read_deal`), one stores it with everything that follows, if the deal's
    version is unchanged (:func:`insert_record`); in autocommit (:func:`begin`) that is its
    commit. Of near-equal games sent at once, the first stored is the original: the others
    find the deal changed and are judged again, holding the deal then
    (:func:`api.fairplay.judging.hold_deal`). Raises :class:`Refused`.

    ``judge_later`` (``FAIRPLAY_JUDGE=worker``): the game's times are judged here, its line on the
    worker tier (:func:`api.fairplay.judging.judge_pending`); it is stored unranked, flagged ``pending``,
    without its boards, in one statement that also settles a claimed name's player (a challenge
    attempt's player is read first: :func:`api.fairplay.judging.read_player`)."""
    if not body["moves"]:
        raise EmptyLog("the log has no action: there is no game to store")
    times = body.get("times")
    check_times(times, len(body["moves"]))
    values, positions, bands = replayed(code, body, submitted_by, judge_later)
    actions = values["canonical"].split()
    time_findings = evidence.judge_times(times, body.get("elapsed_ms"), len(actions), times_required)
    # judged later, a claimed name's player is settled in the store's own statement (one round trip);
    # a challenge attempt needs its player before (its attempt is read by player)
    store_settles = judge_later and claim.known is None and body.get("attempt") is None
    for judgement in range(JUDGEMENTS):
        if judgement:  # another record of the deal was stored since this one's read
            try:
                fairplay.hold_deal(session, values["code"])
            except fairplay.DealBusy:
                raise Busy(values["code"]) from None
        fairplay.lock_deal(session)
        if store_settles:  # the claimed name's player is read by the statement that stores the record
            read = fairplay.UNREAD
            values.update(player=claim.name, player_id=None, vouched_by=None)
        else:
            read = (fairplay.read_player(session, claim) if judge_later
                    else fairplay.read_deal(session, values["code"], claim, positions, bands, values["received_at"],
                                            values["log_hash"]))
            player = settle_player(values, claim, read.named)
        if body.get("attempt") is not None:  # a challenge attempt's game (AttemptError, AttemptUsed)
            from api.challenges.windows import attempt_values

            values.update(attempt_values(session, body["attempt"], player, values["code"], values["log_hash"],
                                         values["received_at"]))
        findings = (([] if judge_later else evidence.judge_line(values["code"], positions, read.known))
                    + time_findings
                    + evidence.judge_server_time(values["server_elapsed_ms"], body.get("elapsed_ms"), times))
        values.update(fairplay.columns(findings, times, pending=judge_later))
        try:
            stored, new = store_record(session, values, bands, read.version, upkeep=not judge_later,
                                       claim=claim if store_settles else None, times=times)
            break
        except Stale:
            continue
        except IntegrityError:  # a concurrent record of the same attempt came first (its unique index)
            if values["attempt_id"] is None:
                raise
            session.rollback()
            from api.challenges.windows import AttemptUsed

            raise AttemptUsed(values["attempt_id"], None) from None
    else:
        raise Busy(values["code"])
    if new and not judge_later:  # (a pending record's event is sent once it is judged)
        webhooks.emit(session, "record.created", lambda: record_json(stored))
    session.commit()
    if new and not judge_later:
        metrics.record_stored(values["variant"], values["ranked"], values["flags"])
    return Submitted(stored, new, new and values["ranked"] and not read.known.solver_lines, new and judge_later)


def begin(session: Session) -> None:
    """Start a submission's session: on PostgreSQL in autocommit, so that the statement that
    stores a record is its own commit (one round trip), unless a webhook endpoint wants
    ``record.created`` (its event is written in the record's transaction)."""
    if session.get_bind().dialect.name == "postgresql" and "record.created" not in webhooks.subscribed(session):
        if session.in_transaction():
            session.commit()  # (ends the transaction of a subscriptions read)
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
