"""webhooks: endpoints, messages and their deliveries (Standard Webhooks)

New tables only; no stored row is touched.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", Id, nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("previous_secret", sa.String(64)),
        sa.Column("previous_expires_at", sa.DateTime(timezone=True)),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disabled_at", sa.DateTime(timezone=True)),
        sa.Column("disabled_reason", sa.String(200)),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_endpoints"),
    )
    op.create_table(
        "webhook_messages",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("key", sa.String(80)),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_messages"),
        sa.UniqueConstraint("key", name="uq_webhook_messages_key"),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", Id, nullable=False),
        sa.Column("message_id", sa.String(40), nullable=False),
        sa.Column("endpoint_id", Id, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True)),
        sa.Column("claimed_until", sa.DateTime(timezone=True)),
        sa.Column("attempts", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
        sa.ForeignKeyConstraint(["message_id"], ["webhook_messages.id"], ondelete="CASCADE",
                                name="fk_webhook_deliveries_message_id_webhook_messages"),
        sa.ForeignKeyConstraint(["endpoint_id"], ["webhook_endpoints.id"], ondelete="CASCADE",
                                name="fk_webhook_deliveries_endpoint_id_webhook_endpoints"),
        sa.UniqueConstraint("message_id", "endpoint_id", name="uq_webhook_deliveries_message_id_endpoint_id"),
        sa.CheckConstraint("status IN ('pending', 'delivered', 'failed', 'cancelled')",
                           name="ck_webhook_deliveries_status"),
    )
    op.create_index("ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"])
    op.create_index("ix_webhook_deliveries_endpoint", "webhook_deliveries", ["endpoint_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_endpoint", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_messages")
    op.drop_table("webhook_endpoints")
