"""an indexing job's worker (host, process, its start) and heartbeat, the folder that keeps its
input until it ends, and its documents' ids: a job whose worker died is resumed or ended with the
counts Solr holds, at once

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("index_job") as table:
        table.add_column(sa.Column("worker", sa.String(255), nullable=True))
        table.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        table.add_column(sa.Column("folder", sa.String(1024), nullable=True))
        table.add_column(sa.Column("ids", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("index_job") as table:
        for name in ("ids", "folder", "heartbeat_at", "worker"):
            table.drop_column(name)
