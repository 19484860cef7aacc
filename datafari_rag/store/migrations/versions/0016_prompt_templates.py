"""a conversation's and a workflow's own prompt templates (chat-core's per-room prompts), as JSON text

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversation") as table:
        table.add_column(sa.Column("prompts", sa.Text(), nullable=False, server_default="{}"))
    with op.batch_alter_table("workflow") as table:
        table.add_column(sa.Column("prompts", sa.Text(), nullable=False, server_default="{}"))


def downgrade() -> None:
    for name in ("workflow", "conversation"):
        with op.batch_alter_table(name) as table:
            table.drop_column("prompts")
