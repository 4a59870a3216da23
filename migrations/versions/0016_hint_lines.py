"""hints continue their line: each answer keeps the rest of its winning line, keyed by the position its hint reaches

Two columns of ``hint_answers``, and an index on the second:

- ``line``: the winning line the hint begins (its first action is the hint), kept with the
  answer and never shown to players;
- ``next_key``: the key of the position the hint reaches (the SHA-256 of its layout,
  ``verifier.solving.position_key``): the next hint at that position, whatever log reached
  it, continues the line instead of searching again.

Hints stored before keep ``NULL`` in both: they are served as they were, and the next hint
after them is a new search. No other row is touched.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("hint_answers") as batch:
        batch.add_column(sa.Column("line", sa.Text(), nullable=True))
        batch.add_column(sa.Column("next_key", sa.String(64), nullable=True))
    op.create_index("ix_hint_answers_next_key", "hint_answers", ["next_key"])


def downgrade() -> None:
    op.drop_index("ix_hint_answers_next_key", table_name="hint_answers")
    with op.batch_alter_table("hint_answers") as batch:
        batch.drop_column("next_key")
        batch.drop_column("line")
