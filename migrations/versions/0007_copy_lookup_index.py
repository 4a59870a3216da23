"""the copy check's index ends in the record id: (code, log_hash, id)

The fair-play copy check asks for the first record of the same log of a deal
stored for another player (``api.fairplay.judging.evidence``). With ``(code, log_hash)``
alone it read every stored record of that log (at 10 million records, a log
shared by 4,000 records took 33 ms on every submission of it); ordered by id the
scan stops at the first match. Records and their values are not touched.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_records_code_log_hash_id", "records", ["code", "log_hash", "id"])
    op.drop_index("ix_records_code_log_hash", table_name="records")


def downgrade() -> None:
    op.create_index("ix_records_code_log_hash", "records", ["code", "log_hash"])
    op.drop_index("ix_records_code_log_hash_id", table_name="records")
