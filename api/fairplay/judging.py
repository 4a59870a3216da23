"""Fair play's judgement: what the database knows of a deal (one read), a record's
fair-play columns from its evidence, a pending record's judgement on the worker tier, the
re-evaluation when the service learns a new line of the deal, the review queue and its
decisions, and the hint log.

The flags are declared in :mod:`api.fairplay.flags`; a record is *ranked* (counts on the
boards) when it carries none. The evidence is computed on the game's effective line
(:mod:`api.fairplay.evidence`), never on the text of the log: see ``docs/fair-play.md`` for
the threat model and the thresholds (:data:`api.fairplay.evidence.THRESHOLDS`).

A flag that sends a record to review gives it the status ``review``; an admin decides
(``visible`` clears the review flags, ``hidden`` confirms them).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    LargeBinary,
    String,
    Text,
    any_,
    bindparam,
    case,
    cast,
    column,
    func,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy import table as sql_table
from sqlalchemy.orm import Session, aliased

from api.fairplay.evidence import (
    EarlierRecord,
    Finding,
    Known,
    effective_line,
    index_keys,
    judge_line,
    pack,
    position_hash,
    unpack,
)
from api.fairplay.flags import (
    PENDING,
    PENDING_REASON,
    REVIEW_FLAGS,
    flag,
    flags_of,
    is_pending,
    judgement,
)
from api.platform import events, metrics
from api.platform.columns import UTCDateTime, dialect_insert
from api.platform.db import DollarStatement, packed_values
from api.platform.models import (
    BoardEntry,
    Challenge,
    DealVersion,
    Hint,
    LineBand,
    Player,
    Record,
    RecordStatus,
    Solvability,
)
from api.players.accounts import Claim, Submitter, name_params, named, named_player
from api.records.deal_lock import deal_lock_key, hold_deal, lock_deal
from api.records.shape import record_json
from api.records.store import version_upsert
from api.records.times import pack_times
from api.webhooks import delivery as webhooks
from engine import EngineError, Game

log = logging.getLogger(__name__)


#: most records listed per review page
REVIEW_PAGE = 100
#: the actor of the history entries fair play writes itself
ACTOR = "fair-play"


# -- the columns of a new record ---------------------------------------------

def columns(findings: Sequence[Finding], times: list[int] | None, pending: bool = False) -> dict[str, Any]:
    """The fair-play columns of a new record from its evidence: ``flags``, ``ranked``, ``status``,
    ``copy_of``, ``times``. ``pending``: its line is judged later (:func:`judge_pending`), so it
    carries the flag ``pending`` until then."""
    flags = flags_of(findings) + ([flag(PENDING, PENDING_REASON)] if pending else [])
    return {**judgement(flags, findings, "visible"), "times": None if times is None else pack_times(times)}


# -- what the database knows of a deal --------------------------------------------

#: most earlier records (those sharing the most index keys) a submission compares its line with
CANDIDATES = 200
#: most (position, player) pairs of hints a submission reads
HINT_ROWS = 5000


def _in_packed(column: Any, name: str, postgres: bool) -> Any:
    """``column`` is one of the 64-bit values of ``:name``: on PostgreSQL the bytes of
    :func:`api.fairplay.evidence.pack` (:func:`api.platform.db.packed_values`), elsewhere a list.
    On PostgreSQL the values are made an array first (``= ANY(ARRAY(…))``): the planner then
    looks each one up in the column's index, however large the table; as ``IN (SELECT …)``,
    without statistics (a restored backup, a new service's tables growing between autovacuum's
    runs) it guessed a thousand values and scanned the whole table
    (``tests/api/test_api_deal_read_plan.py``)."""
    if not postgres:
        return column.in_(bindparam(name, expanding=True))
    return column == any_(func.array(select(packed_values(name)).scalar_subquery()))


def _known_statement(with_candidates: bool, by_name: bool, postgres: bool) -> Any:
    """One round trip: the deal's version (:class:`~api.platform.models.DealVersion`), the index's
    candidates among earlier records of the deal (other players'), its solver lines
    (solvability answers, challenge par lines), the hints whose positions the new line
    reaches, and the player's first hint on the deal. ``by_name``: the player is the one a
    name reads as (:func:`api.players.accounts.named`), and comes back as a row of its own."""
    def row(kind: str, record: Any = None, player: Any = None, line: Any = None, copy_of: Any = None,
            solution: Any = None, at: Any = None, reached: Any = None) -> list[Any]:
        return [literal_column(f"'{kind}'", String).label("kind"),  # (a constant of the code's, in the text)
                (record if record is not None else cast(null(), BigInteger)).label("record_id"),
                (player if player is not None else cast(null(), BigInteger)).label("player_id"),
                (line if line is not None else cast(null(), LargeBinary)).label("line"),
                (copy_of if copy_of is not None else cast(null(), BigInteger)).label("copy_of"),
                (solution if solution is not None else cast(null(), Text)).label("solution"),
                (at if at is not None else cast(null(), UTCDateTime)).label("at"),
                (reached if reached is not None else cast(null(), BigInteger)).label("reached")]

    code: Any = bindparam("code")
    # (a player not stored yet has no id: 0 is none's)
    player: Any = (func.coalesce(named(Player.id).scalar_subquery(), 0) if by_name
                   else bindparam("player_id", type_=BigInteger))
    parts = [
        select(*row("version", record=DealVersion.version)).where(DealVersion.code == code),
        select(*row("own", at=func.min(Hint.at))).where(Hint.player_id == player, Hint.code == code,
                                                        Hint.at <= bindparam("now")),
        select(*row("solver", solution=Solvability.solution)).where(Solvability.code == code,
                                                                    Solvability.solution.is_not(None)),
        select(*row("solver", solution=Challenge.par_line)).where(Challenge.code == code),
        select(*row("hint", player=Hint.player_id, reached=Hint.reached)).where(
            Hint.code == code, _in_packed(Hint.reached, "positions", postgres)).distinct()
        .limit(HINT_ROWS).subquery().select(),
    ]
    if by_name:  # the player: id, name, and whether registered (as copy_of 1)
        registered = case((Player.token_hash.is_(None), 0), else_=1)
        parts.append(named(*row("player", record=Player.id, solution=Player.name, copy_of=registered))
                     .subquery().select())
    if with_candidates:  # the records sharing the most index keys with the line
        near = (select(LineBand.record_id).where(_in_packed(LineBand.band, "bands", postgres))
                .group_by(LineBand.record_id).order_by(func.count().desc(), LineBand.record_id)
                .limit(CANDIDATES).subquery())
        parts.append(select(*row("record", record=Record.id, player=Record.player_id, line=Record.line,
                                 copy_of=Record.copy_of, solution=Record.log_hash))
                     .where(Record.id.in_(select(near.c.record_id)), Record.code == code, Record.line.is_not(None),
                            (Record.player_id != player) | Record.player_id.is_(None))
                     .order_by(Record.id).limit(CANDIDATES).subquery().select())
    return union_all(*parts)


#: the statement of each kind, built on first use
_KNOWN = cache(_known_statement)


@cache
def _known_dollar(with_candidates: bool, by_name: bool) -> DollarStatement:
    """PostgreSQL: the statement of each kind, compiled once (:class:`api.platform.db.DollarStatement`)."""
    return DollarStatement(_known_statement(with_candidates, by_name, True))


@dataclass(frozen=True)
class DealRead:
    """What a submission judges by, read in one statement: what is known of the deal, its
    version (stored with the record only if unchanged), and the player the claimed name
    reads as (``None``: nobody yet, or the claim is a token's player)."""

    known: Known
    version: int | None
    named: Submitter | None


#: what a submission stored before its judgement reads where the store settles its player
UNREAD = DealRead(Known(), None, None)


def read_player(session: Session, claim: Claim) -> DealRead:
    """What a submission stored before its judgement reads (``FAIRPLAY_JUDGE=worker``) when it
    needs its player first (a challenge attempt's): only the player the claimed name reads as
    (nothing for a token's player); no evidence, and no version (the worker tier judges the
    deal's records in the order they were stored)."""
    return DealRead(Known(), None, None if claim.known is not None else named_player(session.connection(), claim.name))


def read_deal(session: Session, code: str, claim: Claim, positions: frozenset[int], bands: list[int],
              now: datetime, log_hash: str | None = None) -> DealRead:
    """What the database knows of the deal ``code`` when it judges a new line (of the log
    ``log_hash``) of the claimed player."""
    by_name = claim.known is None
    who = name_params(claim.name) if by_name else {"player_id": claim.known.id if claim.known else None}
    params = {"code": code, "now": now, **who}
    rows: list[Any]
    if session.get_bind().dialect.name == "postgresql":
        rows = _known_dollar(bool(bands), by_name).execute(session.connection(), {
            **params, "positions": pack(positions), "bands": pack(bands)})
    else:
        rows = list(session.execute(_KNOWN(bool(bands), by_name, False), {
            **params, "positions": sorted(positions) or [0], **({"bands": bands} if bands else {})}))
    version, player = 0, None
    row: Any
    for row in rows:
        kind, record_id, _, _, registered, name, _, _ = row
        if kind == "version":
            version = int(record_id)
        elif kind == "player":
            player = Submitter(int(record_id), name, bool(registered))
    known = known_from(rows, code)
    known.log_hash = log_hash
    return DealRead(known, version, player)


def known_from(rows: Iterable[Any], code: str) -> Known:
    known = Known(solver_lines=[], hints={}, earlier=[])
    assert isinstance(known.solver_lines, list) and isinstance(known.earlier, list)
    for kind, record_id, player_id, line, copy_of, solution, at, reached in rows:
        if kind == "own" and at is not None:
            if isinstance(at, str):  # SQLite hands an aggregate over a date column back as text
                at = datetime.fromisoformat(at)
            known.own_hint_at = at.isoformat()
        elif kind == "solver":
            known.solver_lines.append(solution)
        elif kind == "hint":
            known.hints.setdefault(reached, set()).add(player_id)
        elif kind == "record":
            known.earlier.append(EarlierRecord(record_id, player_id, unpack(line), copy_of, solution))
    return known


# -- re-evaluation: the service learned a new line of a deal -----------------------

def reevaluate_deal(session: Session, code: str, copies: bool = True) -> list[int]:
    """Judge the ranked records of a deal again against everything now known of it (solver
    lines, hints handed out, earlier records); a record with new evidence loses its rank
    (or goes to review) and its history says why; its boards are rebuilt (``api.boards.reads``).
    The ids of the records that changed. Commits.

    ``copies=False``: the deal learned a solver line or a hint's position, which can only add
    the findings of the lines the service knows (:func:`reevaluate_known`): a record is judged a
    copy against the records stored *before* it, and a new record or line changes none of
    those, so the copy check (the costly part: each record against its candidates) is left
    out. The operator's command (:func:`reevaluate_all`) judges everything."""
    if not copies:
        return reevaluate_known(session, code)
    records = session.scalars(select(Record).where(Record.code == code, Record.line.is_not(None))
                              .order_by(Record.id)).all()
    if not any(record.ranked and record.status == "visible" for record in records):
        return []
    solver_lines, hints = _known_lines(session, code)
    reached: dict[int, set[int]] = {}
    for player_id, _, spot in hints:
        if spot is not None:
            reached.setdefault(spot, set()).add(player_id)
    bands: dict[int, list[int]] = {}
    for band, record_id in session.execute(select(LineBand.band, LineBand.record_id).join(
            Record, Record.id == LineBand.record_id).where(Record.code == code)):
        bands.setdefault(record_id, []).append(band)
    changed = []
    by_band: dict[int, list[Record]] = {}
    for record in records:
        if record.ranked and record.status == "visible":
            own = [at for player_id, at, _ in hints if player_id == record.player_id and at <= record.received_at]
            known = Known(solver_lines=solver_lines, hints=reached,
                          own_hint_at=min(own).isoformat() if own else None, log_hash=record.log_hash,
                          earlier=[EarlierRecord(other.id, other.player_id, unpack(other.line), other.copy_of,
                                                 other.log_hash)
                                   for other in _nearest(record, bands.get(record.id, []), by_band)])
            if _judge_again(record, judge_line(code, unpack(record.line), known)):
                changed.append(record.id)
                session.flush()
                webhooks.emit(session, "record.ranked_changed", record_json(record))
        for band in bands.get(record.id, []):
            by_band.setdefault(band, []).append(record)
    session.commit()
    return changed


def _known_lines(session: Session, code: str) -> tuple[list[str], list[Any]]:
    """The deal's solver lines (solvability answers, challenge par lines) and its hints (player, at, reached)."""
    solver_lines: list[str] = list(session.scalars(
        select(Solvability.solution).where(Solvability.code == code, Solvability.solution.is_not(None))))
    solver_lines += list(session.scalars(select(Challenge.par_line).where(Challenge.code == code)))
    return solver_lines, list(session.execute(select(Hint.player_id, Hint.at, Hint.reached).where(Hint.code == code)))


def reevaluate_known(session: Session, code: str) -> list[int]:
    """:func:`reevaluate_deal` after the deal learned a solver line or a hint: each ranked record's
    line against the lines the service knows (``solver-like``, ``assisted``) and its player's own
    hints, read as columns; only a record that changes is loaded whole. Nothing is read when the
    deal has no known line. The ids of the records that changed; commits."""
    solver_lines, hints = _known_lines(session, code)
    if not solver_lines and not hints:
        return []
    reached: dict[int, set[int]] = {}
    for player_id, _, spot in hints:
        if spot is not None:
            reached.setdefault(spot, set()).add(player_id)
    rows: Sequence[Any] = session.execute(select(Record.id, Record.player_id, Record.received_at, Record.line,
                                                 Record.flags).where(
        Record.code == code, Record.line.is_not(None), Record.ranked.is_(True), Record.status == "visible")
        .order_by(Record.id)).all()
    changed: list[int] = []
    for record_id, player_id, received_at, line, flags in rows:
        own = [at for who, at, _ in hints if who == player_id and at <= received_at]
        known = Known(solver_lines=solver_lines, hints=reached, own_hint_at=min(own).isoformat() if own else None)
        present = {found.get("flag") for found in flags or []}
        findings = [found for found in judge_line(code, unpack(line), known) if found.flag not in present]
        if not findings:
            continue
        record = session.get_one(Record, record_id)
        if _judge_again(record, findings):
            changed.append(record_id)
            session.flush()
            webhooks.emit(session, "record.ranked_changed", record_json(record))
    session.commit()
    return changed


def _nearest(record: Record, keys: list[int], by_key: dict[int, list[Record]]) -> list[Record]:
    """The earlier records of other players sharing the most of ``keys`` (index keys) with
    ``record``, at most :data:`CANDIDATES`, as a submission's read finds them."""
    shared: dict[int, int] = {}
    found: dict[int, Record] = {}
    for key in keys:
        for other in by_key.get(key, []):
            if other.player_id != record.player_id:
                shared[other.id] = shared.get(other.id, 0) + 1
                found[other.id] = other
    nearest = sorted(shared, key=lambda other_id: (-shared[other_id], other_id))[:CANDIDATES]
    return [found[other_id] for other_id in nearest]


def judged_later(config: Any) -> bool:
    """Whether new records are judged on the worker tier (``FAIRPLAY_JUDGE=worker``, with a broker:
    embedded, every task runs where it is sent, so the submission judges its own record)."""
    return bool(config["FAIRPLAY_JUDGE"] == "worker" and config["CELERY_BROKER_URL"] is not None)


def judge_pending(session: Session, code: str) -> list[int]:
    """Judge the records of a deal stored before their judgement (flag ``pending``,
    ``FAIRPLAY_JUDGE=worker``), oldest first, as their submissions would have: each line against
    what was known of the deal and the records stored before it, with the deal held
    (:func:`hold_deal`; SQLite: its write lock), so that of near-equal games the first stored
    is the original whichever worker judges. The flag gives way to the line's findings and
    the times' (judged at submission); a record without any ranks and joins its boards (the
    records' update hook), and ``record.created`` is sent. The ids judged; commits."""
    bump = version_upsert(dialect_insert(session.get_bind().dialect.name))
    unjudged = select(Record.id).where(Record.code == code, Record.line.is_(None)).limit(1)
    if session.execute(unjudged).first() is None:  # nothing waits (the index of records without their line)
        session.commit()
        return []
    hold_deal(session, code)
    lock_deal(session)
    waiting = [record for record in session.scalars(
        select(Record).where(Record.code == code, Record.line.is_(None)).order_by(Record.id))
        if is_pending(record.flags)]
    for record in waiting:
        line = effective_line(code, record.canonical.split())
        positions, bands = frozenset(line), index_keys(line)
        who = Claim(known=Submitter(record.player_id, record.player))
        read = read_deal(session, code, who, positions, bands, record.received_at, record.log_hash)
        flags = [found for found in record.flags or [] if found.get("flag") != PENDING]
        found_now = judge_line(code, positions, read.known)
        flags += flags_of(found_now)
        record.line = pack(positions)
        for name, value in judgement(flags, found_now, record.status).items():
            setattr(record, name, value)
        session.add_all(LineBand(band=band, record_id=record.id) for band in bands)
        session.flush()  # (the update hook keeps the player's boards and totals)
        # (a submission judged meanwhile, FAIRPLAY_JUDGE switched back, judges again with this line)
        session.execute(bump, {"code": code, "seen": None, "lock_key": deal_lock_key(code)})
        webhooks.emit(session, "record.created", record_json(record))
        metrics.record_stored(record.variant, record.ranked, flags)
    session.commit()
    return [record.id for record in waiting]


#: most waiting records one sweep reads (:func:`waiting_deals`)
SWEEP_RECORDS = 500


def waiting_deals(session: Session, received_before: datetime) -> list[str]:
    """The deals of the records received before ``received_before`` that still wait for their
    judgement (flag ``pending``), oldest first, from at most :data:`SWEEP_RECORDS` of them
    (the index ``ix_records_unjudged``: records without their line)."""
    rows: Sequence[Any] = session.execute(select(Record.code, Record.flags).where(
        Record.line.is_(None), Record.received_at < received_before).order_by(Record.received_at)
        .limit(SWEEP_RECORDS)).all()
    return list(dict.fromkeys(str(code) for code, flags in rows if is_pending(flags)))


def _judge_again(record: Record, findings: list[Finding]) -> bool:
    """Add the findings whose flags the record does not carry yet; True if it lost its rank."""
    present = {f.get("flag") for f in record.flags or []}
    new = [found for found in findings if found.flag not in present]
    if not new:
        return False
    for name, value in judgement([*(record.flags or []), *flags_of(new)], new, record.status,
                                 record.copy_of).items():
        setattr(record, name, value)
    status = record.status
    reason = "re-evaluated with what the service learned of the deal since: " + "; ".join(
        f"{found.flag}: {found.reason}" for found in new)
    record.history.append(RecordStatus(status=status, actor=ACTOR, at=datetime.now(UTC), reason=reason[:500]))
    log.info("fair play: record %d unranked on re-evaluation (%s)", record.id, ", ".join(f.flag for f in new))
    return True


def in_a_top(session: Session, code: str, top: int) -> bool:
    """Whether an eligible record of the deal is in the first ``top`` places of one of its boards
    (deal, variant, challenge) that holds at least ``top`` entries: a board with fewer is not yet
    contested, so a new deal's first record, alone on its deal's board, does not count. An
    entry's place is one more than the entries with a lower ``sort_key`` on its board, so it is
    within ``top`` when its key is not below the board's ``top``-th entry's: one correlated read
    of at most ``top`` index rows a board (``ix_board_entries_order``), however long the board."""
    other = aliased(BoardEntry)
    last = (select(other.sort_key).where(other.board == BoardEntry.board).order_by(other.sort_key)
            .offset(top - 1).limit(1).correlate(BoardEntry).scalar_subquery())  # the top-th key (NULL: none)
    statement = (select(BoardEntry.record_id).join(Record, Record.id == BoardEntry.record_id)
                 .where(Record.code == code, BoardEntry.sort_key <= last)
                 .limit(1))
    return session.execute(statement).first() is not None


def is_searched(session: Session, code: str) -> bool:
    """Whether the deal has a solvability row (searched, or a search on its way)."""
    return session.execute(select(Solvability.id).where(Solvability.code == code).limit(1)).first() is not None


#: records read and written per round of :func:`backfill_lines`
BACKFILL_BATCH = 500


def backfill_lines(connection: Connection, after: int = 0) -> int:
    """The effective line and band keys of every record without a line (migration 0008, an
    import, ``flask --app api fairplay reevaluate``), a batch at a time; how many got one. A
    stored log that does not replay (none should) keeps ``NULL``: it is left out of copy checks.
    Written with its own table definitions, so that migration 0008 can run it on its schema."""
    records = sql_table("records", column("id", BigInteger), column("code", String()), column("canonical", Text()),
                        column("line", LargeBinary()))
    bands = sql_table("line_bands", column("band", BigInteger), column("record_id", BigInteger))
    done = 0
    while True:
        rows = connection.execute(select(records.c.id, records.c.code, records.c.canonical)
                                  .where(records.c.id > after, records.c.line.is_(None))
                                  .order_by(records.c.id).limit(BACKFILL_BATCH)).all()
        if not rows:
            return done
        lines: list[dict[str, Any]] = []
        keys: list[dict[str, Any]] = []
        for record_id, code, canonical in rows:
            try:
                positions = effective_line(str(code), str(canonical).split())
            except (EngineError, ValueError):
                continue
            lines.append({"record_id": record_id, "packed": pack(positions)})
            keys.extend({"band": band, "record_id": record_id} for band in index_keys(positions))
        if lines:
            connection.execute(records.update().where(records.c.id == bindparam("record_id"))
                               .values(line=bindparam("packed")), lines)
        if keys:
            connection.execute(bands.insert(), keys)
        done += len(lines)
        after = rows[-1][0]


def reevaluate_all(session: Session) -> dict[str, list[int]]:
    """Every deal with a ranked record judged again (the operator's command): the records that changed, by deal."""
    codes = session.scalars(select(Record.code).where(Record.ranked.is_(True), Record.status == "visible")
                            .distinct().order_by(Record.code)).all()
    changed = {code: reevaluate_deal(session, code) for code in codes}
    return {code: ids for code, ids in changed.items() if ids}


# -- review ----------------------------------------------------------------------

def decide(session: Session, record: Record, status: str, actor: str, reason: str) -> Record:
    """Set a record's status (an admin's decision, API or CLI) and add it to the history.
    Leaving review as ``visible`` clears the review flags: the record is ranked again unless
    other flags (a copy, a hint) still keep it off. The caller commits."""
    if record.status != status:  # setting the status it has changes nothing and records nothing
        if record.status == "review" and status == "visible":
            record.ranked = not any(f.get("flag") not in REVIEW_FLAGS for f in record.flags or [])
        record.status = status
        record.history.append(RecordStatus(status=status, actor=actor, at=datetime.now(UTC), reason=reason))
        session.flush()
        webhooks.emit(session, "record.ranked_changed", record_json(record))
    return record


def review_queue(session: Session, after: int = 0, limit: int = REVIEW_PAGE) -> tuple[list[Record], int | None]:
    """Records waiting for review, oldest first, after the record id ``after``; and the cursor of the next page."""
    rows = session.scalars(select(Record).where(Record.status == "review", Record.id > after)
                           .order_by(Record.id).limit(limit + 1)).all()
    return list(rows[:limit]), rows[limit - 1].id if len(rows) > limit else None


# -- hints and solutions --------------------------------------------------------

def log_hint(session: Session, player: Player, code: str, actions: int, game: Game,
             action: str | None) -> bool:
    """Store a hint given (who, which deal, when, at the position of ``game``, which action, and
    the position that action reaches: a known line of the deal, announced as ``line_learned``).
    True if it handed out an action."""
    reached = None
    if action is not None:
        ahead = game.copy()
        ahead.push_text(action)
        reached = position_hash(ahead.position)
    session.add(Hint(player_id=player.id, code=code, at=datetime.now(UTC), actions=actions,
                     position=str(game.position), action=action, reached=reached))
    session.commit()
    if reached is not None:
        events.line_learned.send(None, code=code)
    return reached is not None


def disclose(answer: dict[str, Any], admin: bool) -> dict[str, Any]:
    """A solvability answer as the asker may see it: the winning line itself only for admin keys;
    everyone gets the status, its length (``solution_actions``, the deal's par) and the coverage."""
    if not admin:
        answer.pop("solution", None)
    return answer

