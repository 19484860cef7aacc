"""token statistics per user, conversation, day and model

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "usage_stat",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("conversation_id", sa.String(36), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("answers", sa.Integer, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("total_tokens", sa.Integer, nullable=False),
        sa.UniqueConstraint("username", "conversation_id", "day", "model", name="uq_usage_stat"),
    )
    op.create_index("ix_usage_stat_username", "usage_stat", ["username"])


def downgrade() -> None:
    op.drop_index("ix_usage_stat_username", "usage_stat")
    op.drop_table("usage_stat")
