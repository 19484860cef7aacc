"""indexing jobs and their progress

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "index_job",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("workflow_id", sa.String(36), sa.ForeignKey("workflow.id", ondelete="SET NULL"), nullable=True),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("chunks", sa.Integer, nullable=True),
        sa.Column("failed", sa.Integer, nullable=False),
        sa.Column("errors", sa.JSON, nullable=False),
        sa.Column("callback_url", sa.String(2048), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('running', 'done', 'failed')", name="ck_index_job_status"),
    )
    op.create_index("ix_index_job_username", "index_job", ["username"])


def downgrade() -> None:
    op.drop_index("ix_index_job_username", "index_job")
    op.drop_table("index_job")
