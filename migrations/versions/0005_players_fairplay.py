"""players and fair play: players (one per stored name, without a token), hints, and on records
the player, ranked, flags, per-action times, copy_of and vouched_by; status gains ``review``

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Every stored record is kept with every value it had. What the migration adds:

- one player per distinct NFC form of the stored names, without a token (nobody
  can submit for them with a player token until an operator hands one out).
  Names whose NFC forms are equal ("René" composed and decomposed) share one
  player; each record keeps its ``player`` text as it was. Names that are
  distinct but read the same (same skeleton, e.g. Latin "ann" and Cyrillic
  "аnn"): the one whose first record is oldest holds the skeleton; each later
  one is kept as a player of its own with no skeleton (so no record changes
  hands), and a new registration that reads like them is refused because of
  the older one's skeleton.
- ``ranked``: true, unless the stored records already show evidence against:
  the same canonical log of a deal stored earlier for another player (the later
  ones are flagged ``copy``, point to the first with ``copy_of`` and are
  unranked), or a log with no action (flagged ``empty-log``, unranked).
  Status (visible or hidden) is left as it is; leaderboards need both.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
OLD_CHECK = "status IN ('visible', 'hidden')"
NEW_CHECK = "status IN ('visible', 'hidden', 'review')"


def _skeleton_hash(name: str) -> str:
    from api.players.accounts import skeleton  # the same skeleton as registration uses

    return hashlib.sha256(skeleton(name).encode("utf-8")).hexdigest()


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", Id, nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("skeleton_hash", sa.String(64), nullable=True),
        sa.Column("token_hash", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("name", name=op.f("uq_players_name")),
        sa.UniqueConstraint("skeleton_hash", name=op.f("uq_players_skeleton_hash")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_players_token_hash")),
    )
    op.create_table(
        "hints",
        sa.Column("id", Id, nullable=False),
        sa.Column("player_id", Id, nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actions", sa.Integer(), nullable=False),
        sa.Column("position", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hints")),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_hints_player_id_players")),
    )
    op.create_index("ix_hints_player_id_code", "hints", ["player_id", "code"])
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("vouch", sa.Boolean(), server_default=sa.false(), nullable=False))

    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("player_id", Id, nullable=True))
        batch.add_column(sa.Column("ranked", sa.Boolean(), server_default=sa.true(), nullable=False))
        batch.add_column(sa.Column("flags", sa.JSON(), server_default=sa.text("'[]'"), nullable=False))
        batch.add_column(sa.Column("times", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("copy_of", Id, nullable=True))
        batch.add_column(sa.Column("vouched_by", sa.String(64), nullable=True))
        batch.create_foreign_key(op.f("fk_records_player_id_players"), "players", ["player_id"], ["id"])
        batch.create_foreign_key(op.f("fk_records_copy_of_records"), "records", ["copy_of"], ["id"])
        batch.drop_constraint(op.f("ck_records_status"), type_="check")
        batch.create_check_constraint(op.f("ck_records_status"), NEW_CHECK)
    with op.batch_alter_table("record_status") as batch:
        batch.drop_constraint(op.f("ck_record_status_status"), type_="check")
        batch.create_check_constraint(op.f("ck_record_status_status"), NEW_CHECK)

    op.create_index(op.f("ix_records_player_id"), "records", ["player_id"])
    op.create_index("ix_records_status_id", "records", ["status", "id"])
    op.create_index("ix_records_code_log_hash", "records", ["code", "log_hash"])
    _fill()  # last: on SQLite a batch copies the table, which copy_of pointers into it would stop


def _fill() -> None:
    """Players for the stored names, and the evidence the stored records already hold."""
    connection = op.get_bind()
    records = sa.table("records", sa.column("id", Id), sa.column("player", sa.String), sa.column("code", sa.String),
                       sa.column("log_hash", sa.String), sa.column("actions", sa.Integer),
                       sa.column("received_at", sa.DateTime(timezone=True)), sa.column("player_id", Id),
                       sa.column("ranked", sa.Boolean), sa.column("flags", sa.JSON), sa.column("copy_of", Id))
    players = sa.table("players", sa.column("id", Id), sa.column("name", sa.String),
                       sa.column("skeleton_hash", sa.String), sa.column("token_hash", sa.String),
                       sa.column("created_at", sa.DateTime(timezone=True)))

    # each name, oldest first record first: the oldest holds a shared NFC form or skeleton
    firsts = connection.execute(
        sa.select(records.c.player, sa.func.min(records.c.id).label("first"))
        .group_by(records.c.player).order_by(sa.func.min(records.c.id))).all()
    by_nfc: dict[str, int] = {}
    skeletons: set[str] = set()
    now = datetime.now(UTC)
    for name, _first in firsts:
        nfc = unicodedata.normalize("NFC", name)
        if nfc not in by_nfc:
            hashed = _skeleton_hash(nfc)
            holder = hashed not in skeletons
            skeletons.add(hashed)
            by_nfc[nfc] = connection.execute(players.insert().values(
                name=nfc, skeleton_hash=hashed if holder else None, token_hash=None, created_at=now)
                .returning(players.c.id)).scalar_one()
        connection.execute(records.update().where(records.c.player == name).values(player_id=by_nfc[nfc]))

    # copies: the same canonical log of a deal, stored earlier for another player
    groups = connection.execute(
        sa.select(records.c.code, records.c.log_hash).group_by(records.c.code, records.c.log_hash)
        .having(sa.func.count(sa.distinct(records.c.player_id)) > 1)).all()
    for code, log_hash in groups:
        rows = connection.execute(
            sa.select(records.c.id, records.c.player_id)
            .where(records.c.code == code, records.c.log_hash == log_hash)
            .order_by(records.c.received_at, records.c.id)).all()
        original_id, original_player = rows[0]
        for record_id, player_id in rows[1:]:
            if player_id == original_player:
                continue
            flag = {"flag": "copy", "review": False, "evidence": {"original": original_id},
                    "reason": f"the same log of this deal was stored earlier as record {original_id}, "
                              f"for another player"}
            connection.execute(records.update().where(records.c.id == record_id)
                               .values(flags=[flag], ranked=False, copy_of=original_id))

    # empty logs: refused from now on; the stored ones are kept, unranked
    empty = {"flag": "empty-log", "review": False, "evidence": {"actions": 0},
             "reason": "the log has no action"}
    connection.execute(records.update().where(records.c.actions == 0).values(flags=[empty], ranked=False))


def downgrade() -> None:
    # records waiting for review go back as hidden (the old schema has no review status)
    op.execute("UPDATE records SET status = 'hidden' WHERE status = 'review'")
    op.execute("UPDATE record_status SET status = 'hidden' WHERE status = 'review'")
    op.execute("UPDATE records SET copy_of = NULL")  # SQLite's batch copy of the table would trip over them
    op.drop_index("ix_records_code_log_hash", table_name="records")
    op.drop_index("ix_records_status_id", table_name="records")
    op.drop_index(op.f("ix_records_player_id"), table_name="records")
    with op.batch_alter_table("record_status") as batch:
        batch.drop_constraint(op.f("ck_record_status_status"), type_="check")
        batch.create_check_constraint(op.f("ck_record_status_status"), OLD_CHECK)
    with op.batch_alter_table("records") as batch:
        batch.drop_constraint(op.f("ck_records_status"), type_="check")
        batch.create_check_constraint(op.f("ck_records_status"), OLD_CHECK)
        batch.drop_constraint(op.f("fk_records_copy_of_records"), type_="foreignkey")
        batch.drop_constraint(op.f("fk_records_player_id_players"), type_="foreignkey")
        for column in ("vouched_by", "copy_of", "times", "flags", "ranked", "player_id"):
            batch.drop_column(column)
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("vouch")
    op.drop_index("ix_hints_player_id_code", table_name="hints")
    op.drop_table("hints")
    op.drop_table("players")
