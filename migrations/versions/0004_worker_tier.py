"""worker tier: the solver's places (solver_jobs), stored hints, and an index for expiring unknown answers

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
STATUS_CHECK = "status IN ('pending', 'winnable', 'unwinnable', 'unknown')"


def upgrade() -> None:
    op.create_table(
        "solver_jobs",
        sa.Column("id", Id, nullable=False),
        sa.Column("client", sa.String(64), nullable=False),
        sa.Column("client_slot", sa.Integer(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_solver_jobs")),
        sa.UniqueConstraint("client", "client_slot", name=op.f("uq_solver_jobs_client_client_slot")),
        sa.UniqueConstraint("slot", name=op.f("uq_solver_jobs_slot")),
    )
    op.create_index(op.f("ix_solver_jobs_expires_at"), "solver_jobs", ["expires_at"])
    op.create_table(
        "hint_answers",
        sa.Column("id", Id, nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("log_hash", sa.String(64), nullable=False),
        sa.Column("log", sa.Text(), nullable=False),
        sa.Column("after_actions", sa.Integer(), nullable=False),
        sa.Column("budget", sa.String(64), nullable=False),
        sa.Column("engine_version", sa.String(32), nullable=False),
        sa.Column("rules_version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("answer", sa.JSON(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("solved_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hint_answers")),
        sa.UniqueConstraint("code", "log_hash", "budget", "engine_version", "rules_version",
                            name=op.f("uq_hint_answers_code_log_hash_budget_engine_version_rules_version")),
        sa.CheckConstraint(STATUS_CHECK, name=op.f("ck_hint_answers_status")),
    )
    op.create_index(op.f("ix_hint_answers_solved_at"), "hint_answers", ["solved_at"])
    op.create_index("ix_solvability_status_solved_at", "solvability", ["status", "solved_at"])


def downgrade() -> None:
    op.drop_index("ix_solvability_status_solved_at", table_name="solvability")
    op.drop_table("hint_answers")
    op.drop_table("solver_jobs")
