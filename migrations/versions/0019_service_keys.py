"""service keys: the secret that derives the challenges' deals when CHALLENGE_KEY is unset

A new table only; no stored row is touched (stored challenges keep their deals).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "service_keys",
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_service_keys"),
    )


def downgrade() -> None:
    op.drop_table("service_keys")
