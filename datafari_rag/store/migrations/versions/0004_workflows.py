"""workflows (with their chunker, query enhancers, filters, ranker and API keys) and the settings
administrators change at run time

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

CHILDREN = ("chunker", "query_enhancer", "workflow_filter", "ranker", "api_key")


def _workflow_id() -> sa.Column:
    return sa.Column("workflow_id", sa.String(36), sa.ForeignKey("workflow.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "setting_override",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(255), nullable=False),
    )
    op.create_table(
        "workflow",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("description", sa.String(500), nullable=False),
        sa.Column("retrieval", sa.String(16), nullable=False),
        sa.Column("strategy", sa.String(16), nullable=False),
        sa.Column("parent_child", sa.Boolean, nullable=False),
        sa.Column("instructions", sa.Text, nullable=False),
        sa.Column("is_default", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("retrieval IN ('bm25', 'vector', 'rrf')", name="ck_workflow_retrieval"),
        sa.CheckConstraint("strategy IN ('simple', 'cot', 'reflect', 'multihop')", name="ck_workflow_strategy"),
    )
    op.create_table(
        "chunker",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _workflow_id(),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("max_chunk_size", sa.Integer, nullable=False),
        sa.Column("overlap", sa.Integer, nullable=False),
        sa.Column("evaluator", sa.Boolean, nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.UniqueConstraint("workflow_id", name="uq_chunker_workflow"),
        sa.CheckConstraint("kind IN ('recursive', 'semantic', 'proposition')", name="ck_chunker_kind"),
    )
    op.create_table(
        "query_enhancer",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _workflow_id(),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.UniqueConstraint("workflow_id", "kind", name="uq_query_enhancer_kind"),
        sa.CheckConstraint("kind IN ('rewrite', 'multiQuery', 'hyde', 'selfQuery')", name="ck_query_enhancer_kind"),
    )
    op.create_table(
        "workflow_filter",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _workflow_id(),
        sa.Column("field", sa.String(32), nullable=False),
        sa.Column("value", sa.String(2048), nullable=False),
        sa.UniqueConstraint("workflow_id", "field", "value", name="uq_workflow_filter"),
    )
    op.create_table(
        "ranker",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _workflow_id(),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("top_n", sa.Integer, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.UniqueConstraint("workflow_id", name="uq_ranker_workflow"),
        sa.CheckConstraint("kind IN ('api', 'onnx', 'llm')", name="ck_ranker_kind"),
    )
    op.create_table(
        "api_key",
        sa.Column("id", sa.String(36), primary_key=True),
        _workflow_id(),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("username", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    for table in CHILDREN:
        op.create_index(f"ix_{table}_workflow_id", table, ["workflow_id"])


def downgrade() -> None:
    for table in reversed(CHILDREN):
        op.drop_index(f"ix_{table}_workflow_id", table)
        op.drop_table(table)
    op.drop_table("workflow")
    op.drop_table("setting_override")
