"""earned points: boards rank what a game earns without take-backs, not the app's score

What the migration adds, and computes for the stored records:

- ``records.earned``: the app's score with every take-back cancelling its card's points
  (``verifier.earned``), computed here by replaying each record's stored log (a log that does
  not replay, none should, gets it from its score and take-backs);
- ``board_entries.earned``: the same, beside the score;
- the boards again: every entry's rank key is now won, then more earned points, then
  fewer take-backs, then fewer moves (``api.boards.kinds.RECORD_CHAIN``), so each player's best
  record of a board is chosen again from their records, and the standings (whose dates
  come from the entries) follow. No record changes but for its new column.

Down again, the column goes and the boards are built with the order before (won, score, moves).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: api.boards.kinds.eligible as this revision has it
ELIGIBLE = "r.status = 'visible' AND r.ranked"
#: api.boards.kinds.sort_key as this revision packs it: won (bit 62), 4095 − earned (12 bits from bit 50),
#: take-backs (25 bits from bit 25), moves (25 bits); a value outside its bits counts as the nearest end
SORT_KEY = ("(CASE WHEN r.won THEN 0 ELSE 1 END) * 4611686018427387904 "
            "+ (4095 - CASE WHEN r.earned > 4095 THEN 4095 WHEN r.earned < 0 THEN 0 ELSE r.earned END) "
            "* 1125899906842624 "
            "+ (CASE WHEN r.takebacks > 33554431 THEN 33554431 WHEN r.takebacks < 0 THEN 0 ELSE r.takebacks END) "
            "* 33554432 "
            "+ CASE WHEN r.moves > 33554431 THEN 33554431 WHEN r.moves < 0 THEN 0 ELSE r.moves END")
#: the packing before this revision: won, then the higher score, then fewer moves
OLD_SORT_KEY = ("(CASE WHEN r.won THEN 0 ELSE 1 END) * 2305843009213693952 + (1073741823 - r.score) * 2147483648 "
                "+ r.moves")
#: the record kinds' boards: (name, join, condition), as api.boards.reads.board_rows builds them
IN_WINDOW = ("JOIN challenges ch ON ch.code = r.code AND ch.starts_at <= r.received_at "
             "AND r.received_at < ch.ends_at "
             "AND (NOT ch.attempts_required OR r.attempt_id IN "
             "(SELECT a.id FROM challenge_attempts a WHERE a.challenge_id = ch.id))")
NO_CHALLENGE = "CAST(NULL AS BIGINT)"
BOARDS = (("'deal:' || r.code", "", "", NO_CHALLENGE), ("'deal-nt:' || r.code", "", " AND r.takebacks = 0",
                                                         NO_CHALLENGE),
          ("'variant:' || r.variant", "", "", NO_CHALLENGE),
          ("'variant-nt:' || r.variant", "", " AND r.takebacks = 0", NO_CHALLENGE),
          ("'challenge:' || CAST(ch.id AS VARCHAR(20))", IN_WINDOW, "", "ch.id"))


def rebuild(key: str, earned: bool) -> None:
    """The board entries and the standings again from the records, ranked by ``key``."""
    extra = ", earned" if earned else ""
    rows = " UNION ALL ".join(
        f"SELECT {board} AS board, r.player, r.id AS record_id, {challenge} AS challenge_id, {key} AS sort_key, "
        f"r.received_at, r.won{', r.earned' if earned else ''}, r.score, r.moves, r.takebacks "
        f"FROM records r {join} WHERE {ELIGIBLE}{where}"
        for board, join, where, challenge in BOARDS)
    op.execute("DELETE FROM standings")
    op.execute("DELETE FROM board_entries")
    op.execute(
        f"INSERT INTO board_entries (board, player, record_id, challenge_id, sort_key, received_at, won{extra}, score, "
        f"moves, takebacks) SELECT board, player, record_id, challenge_id, sort_key, received_at, won{extra}, score, "
        f"moves, takebacks FROM (SELECT b.*, row_number() OVER (PARTITION BY board, player "
        f"ORDER BY sort_key, received_at, record_id) AS place FROM ({rows}) b) ranked WHERE place = 1")
    won = "sum(CASE WHEN e.won THEN 1 ELSE 0 END)"
    points = f"(3 * {won} + (count(*) - {won}))"
    op.execute(
        "INSERT INTO standings (variant, player, points, challenges_won, challenges_played, sort_key, updated_at) "
        f"SELECT ch.variant, e.player, {points}, {won}, count(*), -{points}, max(e.received_at) "
        "FROM board_entries e JOIN challenges ch ON ch.id = e.challenge_id GROUP BY ch.variant, e.player")


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    # (SQLite adds a NOT NULL column only with a default, and drops one only by copying the table,
    # which would drop the tables that refer to records: there the default stays, unused)
    op.add_column("records", sa.Column("earned", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("board_entries", sa.Column("earned", sa.Integer(), nullable=False, server_default="0"))
    from api.boards.earned import backfill  # the service's own computation, on this revision's columns

    backfill(op.get_bind())
    rebuild(SORT_KEY, earned=True)
    if postgres:
        op.alter_column("records", "earned", server_default=None)
        op.alter_column("board_entries", "earned", server_default=None)


def downgrade() -> None:
    # (plain DROP COLUMN, which SQLite has had since 3.35: see 0008)
    op.execute("ALTER TABLE board_entries DROP COLUMN earned")
    op.execute("ALTER TABLE records DROP COLUMN earned")
    rebuild(OLD_SORT_KEY, earned=False)
