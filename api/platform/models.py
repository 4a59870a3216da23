"""The database tables, as typed SQLAlchemy 2 models.

Schema changes go through a new Alembic migration under ``migrations/versions``
(``flask --app api db revision -m "…" --autogenerate``); a test checks that the
migrations and these models agree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Double,
    ForeignKey,
    Index,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from api.platform.columns import Id, UTCDateTime
from engine.rules.registry import VARIANT_ID_MAX
from verifier.earned import of_row

#: a record's visibility: ``hidden`` records stay readable by id but leave leaderboards and the default list;
#: ``review`` records wait for an admin's decision (``api.fairplay.judging``) and take no part in leaderboards either
STATUSES = ("visible", "hidden", "review")
#: the CHECK of both status columns
STATUS_CHECK = "status IN ({})".format(", ".join(f"'{status}'" for status in STATUSES))

#: a solvability answer: ``pending`` until a search has ended, then what it found
SOLVABILITY_STATUSES = ("pending", "winnable", "unwinnable", "unknown")

#: constraint names that migrations can refer to on every database
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

def claims(score: int | None, moves: int | None, won: bool | None) -> dict[str, Any] | None:
    """A record's claims as the client sent them: the ones it made, or None for none."""
    made = {"score": score, "moves": moves, "won": won}
    return {name: value for name, value in made.items() if value is not None} or None


def earned_default(context: Any) -> int:
    """The ``records.earned`` of a row inserted without it (an import of an older backup, rows
    written outside the API), from the row's own code, log, score and take-backs."""
    row = context.get_current_parameters()
    return of_row(row["code"], row["canonical"], row["score"], row["takebacks"])


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Record(Base):
    """A verified game: who played which deal, the canonical log, and what the
    replay recomputed. Stored only when the log is legal and the claims match."""

    __tablename__ = "records"
    __table_args__ = (
        # the same player, deal and canonical log is the same record (idempotent submission)
        UniqueConstraint("player", "code", "log_hash"),
        CheckConstraint(STATUS_CHECK, name="status"),
        Index("ix_records_status_id", "status", "id"),         # the review queue, oldest first
        # the first record of the same log of a deal by someone else (copies): a scan that stops at it
        Index("ix_records_code_log_hash_id", "code", "log_hash", "id"),
        # a player's records newest first, a page at a time (the player page); serves the foreign key too
        Index("ix_records_player_id_id", "player_id", "id"),
        # the records waiting for their judgement on the worker tier (FAIRPLAY_JUDGE=worker), oldest
        # first, for the sweep that judges those whose ask was lost; a record leaves it when judged
        Index("ix_records_unjudged", "received_at", postgresql_where=text("line IS NULL"),
              sqlite_where=text("line IS NULL")),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player: Mapped[str] = mapped_column(String(64))
    code: Mapped[str] = mapped_column(String(16), index=True)       # canonical game code
    variant: Mapped[str] = mapped_column(String(VARIANT_ID_MAX))    # a variant id of engine.rules.registry
    number: Mapped[int] = mapped_column(BigInteger)                 # the deal number, 0 … 2^35 − 1
    canonical: Mapped[str] = mapped_column(Text)                    # the canonical log, text form
    log_hash: Mapped[str] = mapped_column(String(64))               # SHA-256 of ``canonical``, hex
    won: Mapped[bool]
    score: Mapped[int]
    moves: Mapped[int]
    actions: Mapped[int]
    undos: Mapped[int]
    takebacks: Mapped[int]
    foundation_cards: Mapped[int]
    #: what the boards rank by: the score with every take-back cancelling its card's points
    #: (``verifier.earned``); computed from the row's own columns when an insert leaves it out
    earned: Mapped[int] = mapped_column(default=earned_default)
    claimed_score: Mapped[int | None] = mapped_column(BigInteger)
    claimed_moves: Mapped[int | None] = mapped_column(BigInteger)
    claimed_won: Mapped[bool | None]
    elapsed_ms: Mapped[int | None] = mapped_column(BigInteger)
    client: Mapped[str | None] = mapped_column(String(100))
    engine_version: Mapped[str] = mapped_column(String(32))      # the engine that last verified it …
    rules_version: Mapped[int]                                       # … and the rules version it implements
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    verified_at: Mapped[datetime] = mapped_column(UTCDateTime)      # when that engine verified it
    submitted_by: Mapped[str | None] = mapped_column(String(64))    # the API key's name; None without keys
    status: Mapped[str] = mapped_column(String(16), default="visible", server_default="visible")
    #: the player the record is stored for (``None`` only for rows written outside the API)
    player_id: Mapped[int | None] = mapped_column(Id, ForeignKey("players.id"))
    #: whether leaderboards count it: no evidence against it (``api.fairplay.judging``)
    ranked: Mapped[bool] = mapped_column(default=True, server_default=true())
    #: the evidence: ``[{"flag", "reason", "review", "evidence"}]`` (``api.fairplay.flags.flag``)
    flags: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    #: per-action times (ms from the game's start), delta-encoded varints (``api.records.times.pack_times``)
    times: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: a copy: the record whose log it repeats
    copy_of: Mapped[int | None] = mapped_column(Id, ForeignKey("records.id"))
    #: the API key that vouched for a registered player (submitted for them by name)
    vouched_by: Mapped[str | None] = mapped_column(String(64))
    #: the challenge attempt the record is the game of (``api.challenges.windows``; one record per attempt)
    attempt_id: Mapped[int | None] = mapped_column(Id, ForeignKey("challenge_attempts.id"))
    #: with an attempt: the server's time from the attempt's start to the record's arrival, ms
    server_elapsed_ms: Mapped[int | None] = mapped_column(BigInteger)
    #: the effective line: the positions the game went through, sorted 64-bit hashes (``api.fairplay.evidence.pack``)
    line: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: every status change, oldest first
    history: Mapped[list[RecordStatus]] = relationship(
        back_populates="record", order_by="RecordStatus.id", cascade="all, delete-orphan", passive_deletes=True,
        lazy="selectin")

    @property
    def claimed(self) -> dict[str, Any] | None:
        """The values the client claimed, as it sent them (they matched, or the record would not exist)."""
        return claims(self.claimed_score, self.claimed_moves, self.claimed_won)

    def __repr__(self) -> str:
        return f"<Record {self.id} {self.player!r} {self.code} score {self.score}>"


class RecordStatus(Base):
    """One change of a record's status: what it became, which admin key did it, when and why."""

    __tablename__ = "record_status"
    __table_args__ = (CheckConstraint(STATUS_CHECK, name="status"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    record_id: Mapped[int] = mapped_column(Id, ForeignKey("records.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(64))     # the admin key's name
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    reason: Mapped[str] = mapped_column(String(500))
    record: Mapped[Record] = relationship(back_populates="history")

    def __repr__(self) -> str:
        return f"<RecordStatus {self.record_id} {self.status} by {self.actor!r}>"


class ApiKey(Base):
    """A client's key for writing. Only the SHA-256 of the token is stored: the token
    is random (256 bits), so a fast hash is enough and a leaked table reveals no key."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)   # SHA-256 of the token, hex
    admin: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: may submit records for registered players by name (a trusted backend)
    vouch: Mapped[bool] = mapped_column(default=False, server_default=false())

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def __repr__(self) -> str:
        return f"<ApiKey {self.name!r}{' admin' if self.admin else ''}{' revoked' if self.revoked else ''}>"


class Solvability(Base):
    """Whether a deal can be won, as a search within one budget found it: one row per
    canonical code, budget and engine, written ``pending`` when the first request
    asks, and completed by the solver process (see ``api/solver/queue.py``)."""

    __tablename__ = "solvability"
    __table_args__ = (
        # one search per deal, budget and engine: racing requests share the first row
        UniqueConstraint("code", "budget", "engine_version", "rules_version"),
        CheckConstraint("status IN ('pending', 'winnable', 'unwinnable', 'unknown')", name="status"),
        # the expiry of ``unknown`` answers finds them without reading the table
        Index("ix_solvability_status_solved_at", "status", "solved_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    code: Mapped[str] = mapped_column(String(16))                   # canonical game code
    variant: Mapped[str] = mapped_column(String(VARIANT_ID_MAX))
    budget: Mapped[str] = mapped_column(String(64))                 # the budget's identity: ``10s``, ``2s+5000n``
    budget_seconds: Mapped[float] = mapped_column(Double)
    budget_nodes: Mapped[int | None] = mapped_column(BigInteger)
    engine_version: Mapped[str] = mapped_column(String(32))         # the engine (and solver) that searched …
    rules_version: Mapped[int]                                      # … and the rules version it implements
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text)                       # the answer, or the job's state, in a sentence
    solution: Mapped[str | None] = mapped_column(Text)              # winnable: the canonical log, replayed as a win
    solution_actions: Mapped[int | None]
    verified: Mapped[bool] = mapped_column(default=False)           # the solution replayed as a legal, won game
    statistics: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the search: nodes, positions, seconds, bytes
    coverage: Mapped[dict[str, Any] | None] = mapped_column(JSON)    # the moves an unwinnable answer covers
    attempts: Mapped[int] = mapped_column(default=0)                # times handed to a solver process
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime)
    queued_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # the last hand-over; None: waiting for one
    solved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"<Solvability {self.code} {self.budget} {self.status}>"


class Player(Base):
    """A player: a name (NFC) unique by its skeleton (``api.players.accounts``) and, once registered
    through the API, the SHA-256 of a token. Players made from names stored before
    registration existed have no token."""

    __tablename__ = "players"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    #: SHA-256 of the name's skeleton; ``None`` for a name kept from before that reads as an older player's
    skeleton_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    #: why an admin should look at the name (it reads as an older player's, or breaks today's rules); None: fine
    name_review: Mapped[str | None] = mapped_column(Text)

    @property
    def registered(self) -> bool:
        return self.token_hash is not None

    def __repr__(self) -> str:
        return f"<Player {self.id} {self.name!r}>"


class LineBand(Base):
    """One index key of a record's effective line (``api.fairplay.evidence.index_keys``: one of its
    positions, about one in four): records whose lines share many positions share many keys,
    so that the copy check reads a few candidates, however many records the deal has."""

    __tablename__ = "line_bands"

    band: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    record_id: Mapped[int] = mapped_column(Id, ForeignKey("records.id", ondelete="CASCADE"), primary_key=True)


class DealVersion(Base):
    """How many times a deal's stored evidence changed by a new record: a submission reads it
    with what it judges by and stores its record only if it is unchanged, bumping it in the
    same statement (``api.records.submit``); a submission that lost that race judges again. Only
    equality matters, so a missing row reads as 0 and a restore need not keep the table."""

    __tablename__ = "deal_versions"

    code: Mapped[str] = mapped_column(String(16), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)


class Hint(Base):
    """A hint the service gave: to which player, on which deal, when, at which position,
    which action it handed out and the position that action reaches (a known line of the deal)."""

    __tablename__ = "hints"
    __table_args__ = (Index("ix_hints_player_id_code", "player_id", "code"),
                      Index("ix_hints_code_reached", "code", "reached"))

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"))
    code: Mapped[str] = mapped_column(String(16))          # canonical game code
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    actions: Mapped[int]                                    # how many actions the log had when the hint was asked
    position: Mapped[str] = mapped_column(Text)             # the position text it was asked at
    action: Mapped[str | None] = mapped_column(String(16))  # the action handed out (None: no hint, or before 0008)
    reached: Mapped[int | None] = mapped_column(BigInteger)  # the position it reaches (``evidence.position_hash``)


class SolverJob(Base):
    """A search waiting or running on the worker tier (a job): one row holds one place.
    The unique constraints are the limits, checked by the insert itself: at most
    ``SOLVER_PENDING_PER_CLIENT`` slots per client and ``SOLVER_QUEUE_SIZE`` slots in
    all (anonymous clients only the lower half). A worker takes the best waiting job of
    its kind (``priority``, then each client's turn) and deletes the row when the search
    ends; a row whose search was lost frees its place at ``expires_at``. The table holds
    only searches in flight, and the locks of scheduled tasks (negative slots)."""

    __tablename__ = "solver_jobs"
    __table_args__ = (
        UniqueConstraint("client", "client_slot"),
        UniqueConstraint("slot"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    client: Mapped[str] = mapped_column(String(64))     # ``key:<id>`` or ``ip:<address>``
    client_slot: Mapped[int]                            # 0 … SOLVER_PENDING_PER_CLIENT − 1
    slot: Mapped[int]                                   # 0 … SOLVER_QUEUE_SIZE − 1
    kind: Mapped[str] = mapped_column(String(16))       # ``deal`` or ``hint``
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    #: served in this order: 0 for clients with an API key, 1 for anonymous ones
    priority: Mapped[int] = mapped_column(default=1, server_default=text("1"))
    #: the client's turn (round-robin): one more than its last job's in the queue, at least the current round
    turn: Mapped[int] = mapped_column(default=0, server_default=text("0"))
    #: the row searched (``solvability`` or ``hint_answers`` id, by ``kind``), its attempt and budget;
    #: ``None`` until the request has claimed the row
    target: Mapped[int | None] = mapped_column(BigInteger)
    attempt: Mapped[int] = mapped_column(default=0, server_default=text("0"))
    budget_seconds: Mapped[float | None] = mapped_column(Double)
    budget_nodes: Mapped[int | None] = mapped_column(BigInteger)
    #: when a worker took it, and the task (ticket) that did: a ticket handed out again runs the same job
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    runner: Mapped[str | None] = mapped_column(String(64), unique=True)

    def __repr__(self) -> str:
        return f"<SolverJob {self.id} {self.kind} {self.client!r}>"


class HintAnswer(Base):
    """A hint: the position after a log (code and canonical log), searched within the
    hint budget, ``pending`` until a worker answers, or answered at once by continuing the
    line of the hint that led there. Kept ``SOLVER_HINT_KEEP_SECONDS`` after its answer, so
    that polling, asking again and continuing its line are answered from here."""

    __tablename__ = "hint_answers"
    __table_args__ = (
        UniqueConstraint("code", "log_hash", "budget", "engine_version", "rules_version"),
        CheckConstraint("status IN ('pending', 'winnable', 'unwinnable', 'unknown')", name="status"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    code: Mapped[str] = mapped_column(String(16))
    log_hash: Mapped[str] = mapped_column(String(64))                # SHA-256 of ``log``, hex
    log: Mapped[str] = mapped_column(Text)                          # the canonical log the hint follows
    after_actions: Mapped[int]
    budget: Mapped[str] = mapped_column(String(64))
    engine_version: Mapped[str] = mapped_column(String(32))
    rules_version: Mapped[int]
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text)
    answer: Mapped[dict[str, Any] | None] = mapped_column(JSON)     # the hint object, once answered
    attempts: Mapped[int] = mapped_column(default=0)
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime)
    queued_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    solved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    line: Mapped[str | None] = mapped_column(Text)                  # the winning line the hint begins (never shown)
    #: the position the hint reaches (``verifier.solving.position_key``): the next hint there continues ``line``
    next_key: Mapped[str | None] = mapped_column(String(64), index=True)

    def __repr__(self) -> str:
        return f"<HintAnswer {self.id} {self.code} {self.status}>"


class HintRequest(Base):
    """A hint handed to a player: the unguessable token they poll it by (``GET /hints/{token}``),
    readable by that player only. Many players may share one search (``hint_answers``)."""

    __tablename__ = "hint_requests"
    __table_args__ = (UniqueConstraint("player_id", "answer_id"),)

    token: Mapped[str] = mapped_column(String(64), primary_key=True)  # ``h_`` and 128 random bits
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id", ondelete="CASCADE"))
    answer_id: Mapped[int] = mapped_column(Id, ForeignKey("hint_answers.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


# -- boards, challenges and player statistics (maintained on write: reads stay flat) --

#: the records list's partial indexes: visible records by player, by deal and by time, newest first
#: (read backwards); the records list and the board upkeep of one player use them
Index("ix_records_visible_player", Record.player, Record.received_at, Record.id,
      postgresql_where=Record.status == "visible", sqlite_where=Record.status == "visible")
Index("ix_records_visible_code", Record.code, Record.received_at, Record.id,
      postgresql_where=Record.status == "visible", sqlite_where=Record.status == "visible")
Index("ix_records_visible_received_at", Record.received_at, Record.id,
      postgresql_where=Record.status == "visible", sqlite_where=Record.status == "visible")


class BoardEntry(Base):
    """One player's best eligible record on one board, kept up to date on every write
    (``api/boards/reads.py``). A board is named ``deal:<code>``, ``deal-nt:<code>`` (no
    take-backs), ``variant:<variant>``, ``variant-nt:<variant>`` or ``challenge:<id>``.
    ``sort_key`` packs won, earned points, take-backs and moves (``api.boards.kinds.RECORD_CHAIN``) so
    that one ascending index column orders the board (lower is better) and equal keys share a rank."""

    __tablename__ = "board_entries"
    __table_args__ = (
        Index("ix_board_entries_order", "board", "sort_key", "received_at", "record_id"),
        # a player's challenge entries (standings, streaks); other entries are found by (board, player)
        Index("ix_board_entries_player", "player", "challenge_id",
              postgresql_where=text("challenge_id IS NOT NULL"), sqlite_where=text("challenge_id IS NOT NULL")),
    )

    board: Mapped[str] = mapped_column(String(48), primary_key=True)
    player: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: (no index: records are never deleted by the service, and each index costs every write)
    record_id: Mapped[int] = mapped_column(Id, ForeignKey("records.id", ondelete="CASCADE"))
    challenge_id: Mapped[int | None] = mapped_column(Id, ForeignKey("challenges.id", ondelete="CASCADE"))
    sort_key: Mapped[int] = mapped_column(BigInteger)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    won: Mapped[bool]
    earned: Mapped[int]
    score: Mapped[int]
    moves: Mapped[int]
    takebacks: Mapped[int]


class Challenge(Base):
    """A daily or weekly challenge of a variant: the deal picked for its window (the
    first candidate proved winnable, ``api/challenges/windows.py``) and its par."""

    __tablename__ = "challenges"
    __table_args__ = (
        UniqueConstraint("variant", "kind", "starts_at"),
        CheckConstraint("kind IN ('daily', 'weekly')", name="kind"),
        Index("ix_challenges_code", "code", "starts_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    variant: Mapped[str] = mapped_column(String(VARIANT_ID_MAX))
    kind: Mapped[str] = mapped_column(String(8))
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime)
    code: Mapped[str] = mapped_column(String(16))
    candidate: Mapped[int]                                   # which of the window's candidates (0-based) it is
    par: Mapped[int]                                         # moves of the solver's shortened winning line
    par_line: Mapped[str] = mapped_column(Text)              # that line, canonical text
    prepared_at: Mapped[datetime] = mapped_column(UTCDateTime)
    #: its board counts only records of attempts (``api.challenges.windows``); false for challenges prepared before
    #: attempts existed, whose boards keep counting every record received in the window
    attempts_required: Mapped[bool] = mapped_column(default=True, server_default=false())


class ChallengeAttempt(Base):
    """A player's attempt at a challenge: the deal's code is handed out and the server's
    clock starts at ``started_at``. One per player and challenge (the unique constraint)."""

    __tablename__ = "challenge_attempts"
    __table_args__ = (UniqueConstraint("challenge_id", "player_id"),)

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    challenge_id: Mapped[int] = mapped_column(Id, ForeignKey("challenges.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(Id, ForeignKey("players.id"))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Standing(Base):
    """A player's challenge points in a variant: the like-for-like variant board."""

    __tablename__ = "standings"
    __table_args__ = (Index("ix_standings_order", "variant", "sort_key", "updated_at", "player"),)

    variant: Mapped[str] = mapped_column(String(16), primary_key=True)
    player: Mapped[str] = mapped_column(String(64), primary_key=True)
    points: Mapped[int]
    challenges_won: Mapped[int]
    challenges_played: Mapped[int]
    sort_key: Mapped[int] = mapped_column(BigInteger)      # −points: lower is better
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PlayerStats(Base):
    """Running totals of a player's eligible records in a variant, kept on write."""

    __tablename__ = "player_stats"

    player: Mapped[str] = mapped_column(String(64), primary_key=True)
    variant: Mapped[str] = mapped_column(String(16), primary_key=True)
    games: Mapped[int]
    wins: Mapped[int]
    best_score: Mapped[int]
    won_moves: Mapped[int] = mapped_column(BigInteger)      # the moves of all won games, summed
    takebacks: Mapped[int] = mapped_column(BigInteger)


#: one record per challenge attempt
Index("ix_records_attempt_id", Record.attempt_id, unique=True)
#: the players whose names wait for an admin's look
Index("ix_players_name_review", Player.id, postgresql_where=Player.name_review.is_not(None),
      sqlite_where=Player.name_review.is_not(None))

Index("ix_solvability_winnable", Solvability.variant, Solvability.id,
      postgresql_where=(Solvability.status == "winnable") & Solvability.verified,
      sqlite_where=(Solvability.status == "winnable") & Solvability.verified)


# -- webhooks (Standard Webhooks: ``api/webhooks/delivery.py``) ----------------------------

class WebhookEndpoint(Base):
    """A game backend's receiver: where events of the kinds it chose are sent, signed with
    its secret (and, for a day after a rotation, also with the one before)."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[list[str]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(64))                     # ``whsec_`` and base64 of 32 bytes
    previous_secret: Mapped[str | None] = mapped_column(String(64))     # still signing until it expires
    previous_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(String(64))                 # the admin key's name, or ``cli``
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    #: set when the receiver answered 410 Gone (or an admin disabled it): nothing more is sent
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    disabled_reason: Mapped[str | None] = mapped_column(String(200))


class WebhookMessage(Base):
    """One event, sent alike to every endpoint that wants its kind: its ``id`` is the
    ``webhook-id`` header (the same on every retry); ``key`` makes an event that must be
    sent once (a challenge's close) unique however many processes notice it."""

    __tablename__ = "webhook_messages"

    __table_args__ = (
        # the prune's scan: messages past their keeping time (WEBHOOK_KEEP_SECONDS)
        Index("ix_webhook_messages_created", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)       # ``msg_`` and 32 hex digits
    type: Mapped[str] = mapped_column(String(40))
    key: Mapped[str | None] = mapped_column(String(80), unique=True)
    payload: Mapped[str] = mapped_column(Text)                          # the body, exactly as signed
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class WebhookDelivery(Base):
    """One message to one endpoint: ``pending`` until the receiver takes it (``delivered``)
    or the retry schedule runs out (``failed``), and every attempt made."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("message_id", "endpoint_id"),
        CheckConstraint("status IN ('pending', 'delivered', 'failed', 'cancelled')", name="status"),
        # the sweep's scan: pending deliveries that are due
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        # an endpoint's deliveries, newest first
        Index("ix_webhook_deliveries_endpoint", "endpoint_id", "id"),
        # the prune's scan: deliveries past their keeping time (WEBHOOK_KEEP_SECONDS)
        Index("ix_webhook_deliveries_created", "created_at"),
    )

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(40), ForeignKey("webhook_messages.id", ondelete="CASCADE"))
    endpoint_id: Mapped[int] = mapped_column(Id, ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16))
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: a worker holds the delivery until then (a lost worker's hold runs out)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: ``[{"at", "status_code", "error", "ms"}]``, oldest first (at most the schedule's length)
    attempts: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    message: Mapped[WebhookMessage] = relationship(lazy="joined")


class ServiceKey(Base):
    """A secret the service made for itself, by name: ``challenge``, the key that derives the
    challenges' deals when ``CHALLENGE_KEY`` is not set (``api.challenges.windows.derivation_key``).
    Made once, on first use, and kept in backups so that a restored service derives the same."""

    __tablename__ = "service_keys"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    secret: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
