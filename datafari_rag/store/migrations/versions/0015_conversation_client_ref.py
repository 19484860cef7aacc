"""a conversation's id in its client (chat-core's room_id), unique per user

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversation") as table:
        table.add_column(sa.Column("client_ref", sa.String(200), nullable=True))
        table.create_unique_constraint("uq_conversation_client_ref", ["username", "client_ref"])


def downgrade() -> None:
    with op.batch_alter_table("conversation") as table:
        table.drop_constraint("uq_conversation_client_ref", type_="unique")
        table.drop_column("client_ref")
