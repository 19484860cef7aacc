"""the OAuth authorization server of /mcp: registered clients, authorization codes and refresh tokens

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "oauth_client",
        sa.Column("client_id", sa.String(64), primary_key=True),
        sa.Column("registration", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "oauth_grant",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("client_id", sa.String(64), nullable=False),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("details", sa.Text, nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_oauth_grant_client_id", "oauth_grant", ["client_id"])
    op.create_index("ix_oauth_grant_expires_at", "oauth_grant", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_oauth_grant_expires_at", "oauth_grant")
    op.drop_index("ix_oauth_grant_client_id", "oauth_grant")
    op.drop_table("oauth_grant")
    op.drop_table("oauth_client")
