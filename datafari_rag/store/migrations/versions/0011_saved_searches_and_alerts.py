"""DatafariUI's saved searches and alerts, per user, and what each alert's runs found

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "saved_search",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("search", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("username", "name", name="uq_saved_search_name"),
    )
    op.create_index("ix_saved_search_username", "saved_search", ["username"])
    op.create_table(
        "alert",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("keyword", sa.Text, nullable=False),
        sa.Column("filters", sa.Text, nullable=False),
        sa.Column("core", sa.String(100), nullable=False),
        sa.Column("mail", sa.String(320), nullable=False),
        sa.Column("frequency", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_alert_username", "alert", ["username"])
    op.create_index("ix_alert_next_run_at", "alert", ["next_run_at"])
    op.create_table(
        "alert_run",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("alert_id", sa.String(36), sa.ForeignKey("alert.id", ondelete="CASCADE"), nullable=False),
        sa.Column("ran_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("found", sa.Integer, nullable=False),
        sa.Column("documents", sa.JSON, nullable=False),
        sa.Column("mailed", sa.Boolean, nullable=False),
    )
    op.create_index("ix_alert_run_alert_id", "alert_run", ["alert_id"])


def downgrade() -> None:
    op.drop_table("alert_run")
    op.drop_table("alert")
    op.drop_table("saved_search")
