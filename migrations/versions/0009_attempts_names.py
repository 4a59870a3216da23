"""challenge attempts (timed by the server) and player names per UTS #39

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

What the migration adds, keeping every stored record and player with every value
it had:

- ``challenge_attempts`` (one per player and challenge), ``records.attempt_id``
  (one record per attempt) and ``records.server_elapsed_ms``;
- ``challenges.attempts_required``: false for every challenge stored before (so
  their boards keep counting every record received in the window, as they did:
  no record's standing changes), true for challenges prepared from now on;
- ``players.name_review`` and the players' skeletons computed again with the
  UTS #39 skeleton of ``api.fairplay.names`` (confusables mapped before casefolding). Of
  players whose names now read the same, the oldest (lowest id) holds the
  skeleton; each later one keeps its name, its token and its records, holds no
  skeleton (as players kept by 0005 did) and is flagged for review
  (``name_review`` says whom it reads as). A name that breaks today's rules
  (an invisible character, a mix of scripts) is kept and flagged the same way.
  Nobody is deleted, no record changes hands.

Downgrading drops the attempts (records keep their games, losing only the link)
and the review notes; the skeletons stay as computed here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ATTEMPT_FK = "fk_records_attempt_id_challenge_attempts"


def upgrade() -> None:
    op.create_table(
        "challenge_attempts",
        sa.Column("id", Id, nullable=False),
        sa.Column("challenge_id", Id, nullable=False),
        sa.Column("player_id", Id, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenge_attempts")),
        sa.ForeignKeyConstraint(["challenge_id"], ["challenges.id"], ondelete="CASCADE",
                                name=op.f("fk_challenge_attempts_challenge_id_challenges")),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_challenge_attempts_player_id_players")),
        sa.UniqueConstraint("challenge_id", "player_id", name=op.f("uq_challenge_attempts_challenge_id_player_id")),
    )
    # plain ADD COLUMNs (SQLite too: a batch would copy the records table and its partial indexes)
    if op.get_bind().dialect.name == "sqlite":  # (SQLite adds a column's REFERENCES clause, never a constraint)
        op.execute(f"ALTER TABLE records ADD COLUMN attempt_id INTEGER CONSTRAINT {ATTEMPT_FK} "
                   "REFERENCES challenge_attempts (id)")
    else:
        op.add_column("records", sa.Column("attempt_id", Id, nullable=True))
        op.create_foreign_key(ATTEMPT_FK, "records", "challenge_attempts", ["attempt_id"], ["id"])
    op.add_column("records", sa.Column("server_elapsed_ms", sa.BigInteger(), nullable=True))
    op.create_index("ix_records_attempt_id", "records", ["attempt_id"], unique=True)
    op.add_column("challenges", sa.Column("attempts_required", sa.Boolean(), server_default=sa.false(),
                                          nullable=False))
    op.add_column("players", sa.Column("name_review", sa.Text(), nullable=True))
    op.create_index("ix_players_name_review", "players", ["id"], postgresql_where=sa.text("name_review IS NOT NULL"),
                    sqlite_where=sa.text("name_review IS NOT NULL"))
    _skeletons_again()


def _skeletons_again() -> None:
    """Each player's skeleton by today's rules; later look-alikes and broken names flagged."""
    from api.players.accounts import BadName, check_name, reads_as, skeleton  # the same rules as registration

    connection = op.get_bind()
    players = sa.table("players", sa.column("id", Id), sa.column("name", sa.String),
                       sa.column("skeleton_hash", sa.String), sa.column("name_review", sa.Text))
    rows = connection.execute(sa.select(players.c.id, players.c.name).order_by(players.c.id)).all()
    holders: dict[str, tuple[int, str]] = {}
    changes = []
    for player_id, name in rows:
        hashed = hashlib.sha256(skeleton(name).encode("utf-8")).hexdigest()
        review = None
        try:
            check_name(name)
        except BadName as error:
            review = f"the name breaks today's rules: {error}"
        if hashed in holders:
            older_id, older = holders[hashed]
            review = reads_as(older, older_id)
            hashed = None
        else:
            holders[hashed] = (player_id, name)
        changes.append({"player_id": player_id, "hashed": hashed, "review": review})
    if not changes:
        return
    connection.execute(sa.update(players).values(skeleton_hash=None))  # (a swap would break the unique constraint)
    connection.execute(sa.update(players).where(players.c.id == sa.bindparam("player_id"))
                       .values(skeleton_hash=sa.bindparam("hashed"), name_review=sa.bindparam("review")), changes)


def downgrade() -> None:
    # plain DROP COLUMNs (SQLite 3.35+ too: a batch would copy tables that others refer to)
    op.drop_index("ix_players_name_review", table_name="players")
    op.drop_column("players", "name_review")
    op.drop_column("challenges", "attempts_required")
    op.drop_index("ix_records_attempt_id", table_name="records")
    if op.get_bind().dialect.name != "sqlite":  # (SQLite drops the column's REFERENCES clause with it)
        op.drop_constraint(ATTEMPT_FK, "records", type_="foreignkey")
    op.drop_column("records", "attempt_id")
    op.drop_column("records", "server_elapsed_ms")
    op.drop_table("challenge_attempts")
