"""deal versions: the counter a submission checks to store its record in one statement

A new table only; no stored row is touched. It starts empty: a deal without a row
reads as version 0 (only changes of the counter matter).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deal_versions",
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("code", name="pk_deal_versions"),
    )


def downgrade() -> None:
    op.drop_table("deal_versions")
