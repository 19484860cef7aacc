"""a workflow's own collections (<collection>_FileShare, <collection>_VectorMain)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workflow") as table:  # SQLite rebuilds the table, PostgreSQL alters it
        table.add_column(sa.Column("collection", sa.String(40), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("workflow") as table:
        table.drop_column("collection")
