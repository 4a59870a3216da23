"""solvability: the solver's stored answers (one per deal, budget and engine), pending until a search ends

Revision ID: 0003
Revises: 0002
Create Date: 2025-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
STATUS_CHECK = "status IN ('pending', 'winnable', 'unwinnable', 'unknown')"


def upgrade() -> None:
    op.create_table(
        "solvability",
        sa.Column("id", Id, nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("budget", sa.String(64), nullable=False),
        sa.Column("budget_seconds", sa.Double(), nullable=False),
        sa.Column("budget_nodes", sa.BigInteger(), nullable=True),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("rules_version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("solution", sa.Text(), nullable=True),
        sa.Column("solution_actions", sa.Integer(), nullable=True),
        sa.Column("verified", sa.Boolean(), nullable=False),
        sa.Column("statistics", sa.JSON(), nullable=True),
        sa.Column("coverage", sa.JSON(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("solved_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_solvability")),
        sa.UniqueConstraint("code", "budget", "engine_version", "rules_version",
                            name=op.f("uq_solvability_code_budget_engine_version_rules_version")),
        sa.CheckConstraint(STATUS_CHECK, name=op.f("ck_solvability_status")),
    )


def downgrade() -> None:
    op.drop_table("solvability")
