"""evidence on the game: each record's effective line and its index keys; hints keep what they handed out

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

What the migration adds, and computes for the stored records:

- ``records.line``: the effective line of the record's canonical log (the positions
  the game went through, undone actions and loops left out: ``api.fairplay.evidence``), as
  sorted 64-bit hashes; computed here for every stored record. A stored log that
  does not replay (none should) keeps ``NULL`` and is left out of copy checks.
- ``line_bands``: the MinHash band keys of each line, the copy check's index.
- ``hints.action`` and ``hints.reached``: the action a hint handed out and the
  position it reaches. Hints logged before stay ``NULL`` (what they handed out was
  not recorded).

No stored value changes: flags, ranks and statuses stay as they were (the worker
tier judges a deal's records again when it learns a new line of it; ``flask --app
api fairplay reevaluate`` does every deal at once).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column("records", sa.Column("line", sa.LargeBinary(), nullable=True))
    op.create_table(
        "line_bands",
        sa.Column("band", sa.BigInteger(), nullable=False),
        sa.Column("record_id", Id, nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"], name=op.f("fk_line_bands_record_id_records"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("band", "record_id", name=op.f("pk_line_bands")),
    )
    with op.batch_alter_table("hints") as batch:
        batch.add_column(sa.Column("action", sa.String(16), nullable=True))
        batch.add_column(sa.Column("reached", sa.BigInteger(), nullable=True))
    op.create_index("ix_hints_code_reached", "hints", ["code", "reached"])
    from api.fairplay.judging import backfill_lines  # the service's own computation (api.fairplay.evidence)

    backfill_lines(op.get_bind())


def downgrade() -> None:
    # (plain DROP COLUMN, which SQLite has had since 3.35: a batch copy of ``records`` would drop
    # the table that board entries, history and copies refer to)
    op.drop_index("ix_hints_code_reached", table_name="hints")
    op.execute("ALTER TABLE hints DROP COLUMN reached")
    op.execute("ALTER TABLE hints DROP COLUMN action")
    op.drop_table("line_bands")
    op.execute("ALTER TABLE records DROP COLUMN line")
