"""the fair search queue: jobs carry their search, class and runner; hints handed out by token

``solver_jobs`` gains the search a job runs (``target``, ``attempt``, the budget),
its class (``priority``: 0 for API keys, 1 for anonymous clients), its client's
round-robin ``turn``, and the ticket
that took it (``started_at``, ``runner``). The table only holds searches in flight:
its rows are kept, as jobs without a search (no worker takes them; they free their
place when they expire). ``hint_requests`` holds the token under which a player
polls a hint. Hint ids handed out before this revision (sequential numbers) are no
longer accepted: asking ``POST /hint`` again gives the player a token.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("solver_jobs") as batch:
        batch.add_column(sa.Column("priority", sa.Integer(), server_default=sa.text("1"), nullable=False))
        batch.add_column(sa.Column("turn", sa.Integer(), server_default=sa.text("0"), nullable=False))
        batch.add_column(sa.Column("target", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("attempt", sa.Integer(), server_default=sa.text("0"), nullable=False))
        batch.add_column(sa.Column("budget_seconds", sa.Double(), nullable=True))
        batch.add_column(sa.Column("budget_nodes", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("runner", sa.String(64), nullable=True))
        batch.create_unique_constraint(op.f("uq_solver_jobs_runner"), ["runner"])
    op.create_table(
        "hint_requests",
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("player_id", Id, nullable=False),
        sa.Column("answer_id", Id, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("token", name=op.f("pk_hint_requests")),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_hint_requests_player_id_players"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["answer_id"], ["hint_answers.id"],
                                name=op.f("fk_hint_requests_answer_id_hint_answers"), ondelete="CASCADE"),
        sa.UniqueConstraint("player_id", "answer_id", name=op.f("uq_hint_requests_player_id_answer_id")),
    )
    op.create_index(op.f("ix_hint_requests_answer_id"), "hint_requests", ["answer_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_hint_requests_answer_id"), table_name="hint_requests")
    op.drop_table("hint_requests")
    with op.batch_alter_table("solver_jobs") as batch:
        batch.drop_constraint(op.f("uq_solver_jobs_runner"), type_="unique")
        for column in ("runner", "started_at", "budget_nodes", "budget_seconds", "attempt", "target", "turn",
                       "priority"):
            batch.drop_column(column)
