"""boards, challenges, standings, player statistics; partial indexes on visible records; no variant index

The board tables and the player statistics are built here from the records
already stored (each player's best visible record per deal and per variant, and
their running totals), so that the boards read the same before and after.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
VISIBLE = sa.text("status = 'visible'")
#: api.boards.kinds.eligible as this revision has it: visible and ranked (0005 added ``ranked``)
ELIGIBLE = "status = 'visible' AND ranked"
WINNABLE = sa.text("status = 'winnable' AND verified")
CHALLENGE_ENTRY = sa.text("challenge_id IS NOT NULL")
#: the same packing as api.boards.kinds.SORT_KEY: won, then the higher score, then fewer moves; lower is better
SORT_KEY = ("(CASE WHEN won THEN 0 ELSE 1 END) * 2305843009213693952 + (1073741823 - score) * 2147483648 + moves")
#: a record's boards, one row each (as api.boards.reads.board_rows builds them)
BOARD_ROWS = " UNION ALL ".join(
    f"SELECT {board} AS board, player, id, {SORT_KEY} AS sort_key, received_at, won, score, moves, takebacks "
    f"FROM records WHERE {ELIGIBLE}{extra}"
    for board, extra in (("'deal:' || code", ""), ("'deal-nt:' || code", " AND takebacks = 0"),
                         ("'variant:' || variant", ""), ("'variant-nt:' || variant", " AND takebacks = 0")))


def upgrade() -> None:
    op.drop_index("ix_records_variant", table_name="records")
    for name, columns in (("ix_records_visible_player", ["player", "received_at", "id"]),
                          ("ix_records_visible_code", ["code", "received_at", "id"]),
                          ("ix_records_visible_received_at", ["received_at", "id"])):
        op.create_index(name, "records", columns, postgresql_where=VISIBLE, sqlite_where=VISIBLE)
    op.create_index("ix_solvability_winnable", "solvability", ["variant", "id"], postgresql_where=WINNABLE,
                    sqlite_where=WINNABLE)

    op.create_table(
        "challenges",
        sa.Column("id", Id, nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("candidate", sa.Integer(), nullable=False),
        sa.Column("par", sa.Integer(), nullable=False),
        sa.Column("par_line", sa.Text(), nullable=False),
        sa.Column("prepared_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenges")),
        sa.UniqueConstraint("variant", "kind", "starts_at", name=op.f("uq_challenges_variant_kind_starts_at")),
        sa.CheckConstraint("kind IN ('daily', 'weekly')", name=op.f("ck_challenges_kind")),
    )
    op.create_index("ix_challenges_code", "challenges", ["code", "starts_at"])

    op.create_table(
        "board_entries",
        sa.Column("board", sa.String(48), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("record_id", Id, nullable=False),
        sa.Column("challenge_id", Id, nullable=True),
        sa.Column("sort_key", sa.BigInteger(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("takebacks", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("board", "player", name=op.f("pk_board_entries")),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"], name=op.f("fk_board_entries_record_id_records"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["challenge_id"], ["challenges.id"],
                                name=op.f("fk_board_entries_challenge_id_challenges"), ondelete="CASCADE"),
    )
    op.create_index("ix_board_entries_order", "board_entries", ["board", "sort_key", "received_at", "record_id"])
    op.create_index("ix_board_entries_player", "board_entries", ["player", "challenge_id"],
                    postgresql_where=CHALLENGE_ENTRY, sqlite_where=CHALLENGE_ENTRY)

    op.create_table(
        "standings",
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("challenges_won", sa.Integer(), nullable=False),
        sa.Column("challenges_played", sa.Integer(), nullable=False),
        sa.Column("sort_key", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("variant", "player", name=op.f("pk_standings")),
    )
    op.create_index("ix_standings_order", "standings", ["variant", "sort_key", "updated_at", "player"])

    op.create_table(
        "player_stats",
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("best_score", sa.Integer(), nullable=False),
        sa.Column("won_moves", sa.BigInteger(), nullable=False),
        sa.Column("takebacks", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player", "variant", name=op.f("pk_player_stats")),
    )

    # the stored records' boards and totals (no challenge exists yet, so no challenge board)
    op.execute(
        "INSERT INTO board_entries (board, player, record_id, challenge_id, sort_key, received_at, won, score, moves, "
        "takebacks) SELECT board, player, id, NULL, sort_key, received_at, won, score, moves, takebacks FROM ("
        "SELECT b.*, row_number() OVER (PARTITION BY board, player ORDER BY sort_key, received_at, id) AS place "
        f"FROM ({BOARD_ROWS}) b) ranked WHERE place = 1")
    op.execute(
        "INSERT INTO player_stats (player, variant, games, wins, best_score, won_moves, takebacks) "
        "SELECT player, variant, count(*), sum(CASE WHEN won THEN 1 ELSE 0 END), max(score), "
        "sum(CASE WHEN won THEN moves ELSE 0 END), sum(takebacks) FROM records WHERE " + ELIGIBLE + " "
        "GROUP BY player, variant")


def downgrade() -> None:
    op.drop_table("player_stats")
    op.drop_index("ix_standings_order", table_name="standings")
    op.drop_table("standings")
    op.drop_index("ix_board_entries_player", table_name="board_entries")
    op.drop_index("ix_board_entries_order", table_name="board_entries")
    op.drop_table("board_entries")
    op.drop_index("ix_challenges_code", table_name="challenges")
    op.drop_table("challenges")
    op.drop_index("ix_solvability_winnable", table_name="solvability")
    for name in ("ix_records_visible_received_at", "ix_records_visible_code", "ix_records_visible_player"):
        op.drop_index(name, table_name="records")
    op.create_index("ix_records_variant", "records", ["variant"])
