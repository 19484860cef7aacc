"""conversations and their blocks

Revision ID: 0001
Revises:
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conversation",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_refresh", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_conversation_username", "conversation", ["username"])
    op.create_table(
        "block",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "conversation_id",
            sa.String(36),
            sa.ForeignKey("conversation.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("search_type", sa.String(16), nullable=False),
        sa.Column("rewritten_queries", sa.JSON, nullable=False),
        sa.Column("sources", sa.JSON, nullable=False),
        sa.Column("usage", sa.JSON, nullable=False),
        sa.Column("error_label", sa.String(64), nullable=True),
        sa.Column("latency_ms", sa.Integer, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("conversation_id", "position", name="uq_block_position"),
        sa.CheckConstraint("status IN ('done', 'error', 'idle')", name="ck_block_status"),
    )
    op.create_index("ix_block_conversation_id", "block", ["conversation_id"])


def downgrade() -> None:
    op.drop_index("ix_block_conversation_id", "block")
    op.drop_table("block")
    op.drop_index("ix_conversation_username", "conversation")
    op.drop_table("conversation")
