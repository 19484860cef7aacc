"""the documents a user puts in a conversation's basket (Datafari 7.0's users/docsbasket)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "docs_basket",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "conversation_id", sa.String(36), sa.ForeignKey("conversation.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("document_id", sa.String(2048), nullable=False),
        sa.Column("document_title", sa.String(500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("conversation_id", "document_id", name="uq_docs_basket_document"),
    )
    op.create_index("ix_docs_basket_conversation_id", "docs_basket", ["conversation_id"])


def downgrade() -> None:
    op.drop_table("docs_basket")
