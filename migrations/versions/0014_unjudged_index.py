"""records waiting for their judgement: a partial index for the sweep of FAIRPLAY_JUDGE=worker

An index only (the records whose effective line is not computed yet, by the time they were
received); no stored row is touched. Records stored before have their line (migration 0008),
so the index starts empty but for logs that do not replay.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_records_unjudged", "records", ["received_at"],
                    postgresql_where=sa.text("line IS NULL"), sqlite_where=sa.text("line IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_records_unjudged", table_name="records")
