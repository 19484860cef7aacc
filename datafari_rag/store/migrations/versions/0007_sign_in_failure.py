"""refused sign-ins, counted per username and per address by the sign-in throttle

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_failure",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_sign_in_failure_key", "sign_in_failure", ["key"])


def downgrade() -> None:
    op.drop_index("ix_sign_in_failure_key", "sign_in_failure")
    op.drop_table("sign_in_failure")
