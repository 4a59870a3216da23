"""records: verified game records

Revision ID: 0001
Revises:
Create Date: 2025-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("number", sa.BigInteger(), nullable=False),
        sa.Column("canonical", sa.Text(), nullable=False),
        sa.Column("log_hash", sa.String(64), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("actions", sa.Integer(), nullable=False),
        sa.Column("undos", sa.Integer(), nullable=False),
        sa.Column("takebacks", sa.Integer(), nullable=False),
        sa.Column("foundation_cards", sa.Integer(), nullable=False),
        sa.Column("claimed_score", sa.BigInteger(), nullable=True),
        sa.Column("claimed_moves", sa.BigInteger(), nullable=True),
        sa.Column("claimed_won", sa.Boolean(), nullable=True),
        sa.Column("elapsed_ms", sa.BigInteger(), nullable=True),
        sa.Column("client", sa.String(100), nullable=True),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("rules_version", sa.Integer(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_records")),
        sa.UniqueConstraint("player", "code", "log_hash", name=op.f("uq_records_player_code_log_hash")),
    )
    op.create_index(op.f("ix_records_code"), "records", ["code"])
    op.create_index(op.f("ix_records_variant"), "records", ["variant"])
    op.create_index(op.f("ix_records_received_at"), "records", ["received_at"])


def downgrade() -> None:
    op.drop_table("records")
