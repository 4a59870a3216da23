"""the webhook outbox's age: indexes for pruning the deliveries and messages that ended

Indexes only (``created_at`` of ``webhook_deliveries`` and of ``webhook_messages``), so that
the beat's prune (``WEBHOOK_KEEP_SECONDS``) reads only the rows past their keeping time; no
stored row is touched.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_webhook_deliveries_created", "webhook_deliveries", ["created_at"])
    op.create_index("ix_webhook_messages_created", "webhook_messages", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_messages_created", table_name="webhook_messages")
    op.drop_index("ix_webhook_deliveries_created", table_name="webhook_deliveries")
