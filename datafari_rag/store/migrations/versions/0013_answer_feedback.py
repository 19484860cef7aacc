"""a user's rating of an answer (thumbs up or down, a comment), one per turn

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "answer_feedback",
        sa.Column("block_id", sa.String(36), sa.ForeignKey("block.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("rating IN (-1, 1)", name="ck_answer_feedback_rating"),
    )
    op.create_index("ix_answer_feedback_username", "answer_feedback", ["username"])


def downgrade() -> None:
    op.drop_table("answer_feedback")
