"""a user's interface language and page layout, as DatafariUI saves them (PUT v1.0/users/current)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_preference",
        sa.Column("username", sa.String(255), primary_key=True),
        sa.Column("lang", sa.String(16), nullable=True),
        sa.Column("ui_config", sa.JSON, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("user_preference")
