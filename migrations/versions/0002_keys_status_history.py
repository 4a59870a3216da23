"""keys, status history: API keys, who submitted a record, its status and its history, when it was verified

Revision ID: 0002
Revises: 0001
Create Date: 2025-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
STATUS_CHECK = "status IN ('visible', 'hidden')"


def upgrade() -> None:
    # records first: on SQLite the batch copies the table, which must happen before anything refers to it
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("verified_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("submitted_by", sa.String(64), nullable=True))
        batch.add_column(sa.Column("status", sa.String(16), server_default="visible", nullable=False))
    # records stored so far were verified when they were received
    op.execute("UPDATE records SET verified_at = received_at")
    with op.batch_alter_table("records") as batch:
        batch.alter_column("verified_at", existing_type=sa.DateTime(timezone=True), nullable=False)
        batch.create_check_constraint(op.f("ck_records_status"), STATUS_CHECK)

    op.create_table(
        "record_status",
        sa.Column("id", Id, nullable=False),
        sa.Column("record_id", Id, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_record_status")),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"], name=op.f("fk_record_status_record_id_records"),
                                ondelete="CASCADE"),
        sa.CheckConstraint(STATUS_CHECK, name=op.f("ck_record_status_status")),
    )
    op.create_index(op.f("ix_record_status_record_id"), "record_status", ["record_id"])

    op.create_table(
        "api_keys",
        sa.Column("id", Id, nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("name", name=op.f("uq_api_keys_name")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
    op.drop_index(op.f("ix_record_status_record_id"), table_name="record_status")
    op.drop_table("record_status")
    with op.batch_alter_table("records") as batch:
        batch.drop_constraint(op.f("ck_records_status"), type_="check")
        batch.drop_column("status")
        batch.drop_column("submitted_by")
        batch.drop_column("verified_at")
