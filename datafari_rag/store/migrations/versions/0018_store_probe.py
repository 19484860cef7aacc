"""the row readiness writes to learn that the store can still write (a full disk is otherwise
seen only by the requests it fails)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "store_probe",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("payload", sa.LargeBinary(), nullable=True),
    )
    op.execute("INSERT INTO store_probe (id) VALUES (1)")


def downgrade() -> None:
    op.drop_table("store_probe")
