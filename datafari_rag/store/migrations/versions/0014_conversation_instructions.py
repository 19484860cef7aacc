"""a conversation's own system instructions (chat-core's per-room system prompt)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversation") as table:
        table.add_column(sa.Column("instructions", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("conversation") as table:
        table.drop_column("instructions")
