"""a player's records by (player_id, id): the player page pages them newest first

The player page lists a player's records a page at a time, newest first, after a
record id (keyset). With ``player_id`` alone the database read every record of the
player and sorted them on each page; ``(player_id, id)`` hands them out in order and
stops at the page's end (it serves the foreign key's look-ups as well). Records and
their values are not touched.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_records_player_id_id", "records", ["player_id", "id"])
    op.drop_index("ix_records_player_id", table_name="records")


def downgrade() -> None:
    op.create_index("ix_records_player_id", "records", ["player_id"])
    op.drop_index("ix_records_player_id_id", table_name="records")
