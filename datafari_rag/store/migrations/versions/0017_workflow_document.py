"""a workflow is one document (workflows/spec.py's model): its columns and its chunker,
query_enhancer, workflow_filter and ranker rows become the document, beside its name and whether
it is the default; its API keys stay in their table

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

COLUMNS = ("description", "retrieval", "strategy", "parent_child", "instructions", "prompts", "collection")
CHILDREN = ("chunker", "query_enhancer", "workflow_filter", "ranker")

workflow = sa.table(
    "workflow",
    sa.column("id", sa.String),
    sa.column("document", sa.JSON),
    *(sa.column(name) for name in COLUMNS),
)
chunker = sa.table(
    "chunker",
    *(sa.column(n) for n in ("workflow_id", "kind", "max_chunk_size", "overlap", "evaluator", "threshold")),
)
query_enhancer = sa.table(
    "query_enhancer", *(sa.column(n) for n in ("workflow_id", "position", "kind")), sa.column("options", sa.JSON)
)
workflow_filter = sa.table("workflow_filter", *(sa.column(n) for n in ("id", "workflow_id", "field", "value")))
ranker = sa.table("ranker", *(sa.column(n) for n in ("workflow_id", "kind", "top_n")), sa.column("options", sa.JSON))


def _drop_column(table: str, name: str) -> None:
    """Without copying the table: SQLite's copy would drop the old one, and its foreign keys'
    ON DELETE CASCADE would take the API keys with it."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
    else:
        op.drop_column(table, name)


def _document(bind: Any, row: Any) -> dict[str, Any]:
    wid = row.id
    c = bind.execute(sa.select(chunker).where(chunker.c.workflow_id == wid)).first()
    enhancers = bind.execute(
        sa.select(query_enhancer).where(query_enhancer.c.workflow_id == wid).order_by(query_enhancer.c.position)
    )
    filters: dict[str, list[str]] = {}
    for f in bind.execute(
        sa.select(workflow_filter).where(workflow_filter.c.workflow_id == wid).order_by(workflow_filter.c.id)
    ):
        filters.setdefault(f.field, []).append(f.value)
    r = bind.execute(sa.select(ranker).where(ranker.c.workflow_id == wid)).first()
    return {
        "description": row.description,
        "retrieval": row.retrieval,
        "strategy": row.strategy,
        "parentChild": bool(row.parent_child),
        "instructions": row.instructions,
        "prompts": json.loads(row.prompts or "{}"),
        "chunker": {
            "kind": c.kind,
            "maxChunkSize": c.max_chunk_size,
            "overlap": c.overlap,
            "evaluator": bool(c.evaluator),
            "threshold": float(c.threshold),
        }
        if c is not None
        else {},
        "queryEnhancers": [{"kind": e.kind, **(e.options or {})} for e in enhancers],
        "filters": filters,
        "ranker": {"kind": r.kind, "topN": r.top_n, **(r.options or {})} if r is not None else None,
        "collection": row.collection or "",
    }


def upgrade() -> None:
    op.add_column("workflow", sa.Column("document", sa.JSON(), nullable=False, server_default="{}"))
    bind = op.get_bind()
    for row in list(bind.execute(sa.select(workflow))):
        document = _document(bind, row)
        bind.execute(sa.update(workflow).where(workflow.c.id == row.id).values(document=document))
    for table in reversed(CHILDREN):
        op.drop_index(f"ix_{table}_workflow_id", table)
        op.drop_table(table)
    for name in COLUMNS:
        _drop_column("workflow", name)


def _id() -> sa.Column:
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def _workflow_id() -> sa.Column:
    return sa.Column("workflow_id", sa.String(36), sa.ForeignKey("workflow.id", ondelete="CASCADE"), nullable=False)


def downgrade() -> None:
    for column in (
        sa.Column("description", sa.String(500), nullable=False, server_default=""),
        sa.Column("retrieval", sa.String(16), nullable=False, server_default="bm25"),
        sa.Column("strategy", sa.String(16), nullable=False, server_default="simple"),
        sa.Column("parent_child", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("instructions", sa.Text, nullable=False, server_default=""),
        sa.Column("prompts", sa.Text, nullable=False, server_default="{}"),
        sa.Column("collection", sa.String(40), nullable=False, server_default=""),
    ):
        op.add_column("workflow", column)
    op.create_table(
        "chunker",
        _id(),
        _workflow_id(),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("max_chunk_size", sa.Integer, nullable=False),
        sa.Column("overlap", sa.Integer, nullable=False),
        sa.Column("evaluator", sa.Boolean, nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.UniqueConstraint("workflow_id", name="uq_chunker_workflow"),
    )
    op.create_table(
        "query_enhancer",
        _id(),
        _workflow_id(),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.UniqueConstraint("workflow_id", "kind", name="uq_query_enhancer_kind"),
    )
    op.create_table(
        "workflow_filter",
        _id(),
        _workflow_id(),
        sa.Column("field", sa.String(32), nullable=False),
        sa.Column("value", sa.String(2048), nullable=False),
        sa.UniqueConstraint("workflow_id", "field", "value", name="uq_workflow_filter"),
    )
    op.create_table(
        "ranker",
        _id(),
        _workflow_id(),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("top_n", sa.Integer, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.UniqueConstraint("workflow_id", name="uq_ranker_workflow"),
    )
    for table in CHILDREN:
        op.create_index(f"ix_{table}_workflow_id", table, ["workflow_id"])
    bind = op.get_bind()
    for row in list(bind.execute(sa.select(workflow.c.id, workflow.c.document))):
        d = row.document or {}
        bind.execute(
            sa.update(workflow)
            .where(workflow.c.id == row.id)
            .values(
                description=d.get("description", ""),
                retrieval=d.get("retrieval", "bm25"),
                strategy=d.get("strategy", "simple"),
                parent_child=bool(d.get("parentChild")),
                instructions=d.get("instructions", ""),
                prompts=json.dumps(d.get("prompts") or {}, ensure_ascii=False),
                collection=d.get("collection", ""),
            )
        )
        c = d.get("chunker") or {}
        bind.execute(
            sa.insert(chunker).values(
                workflow_id=row.id,
                kind=c.get("kind", "recursive"),
                max_chunk_size=c.get("maxChunkSize", 600),
                overlap=c.get("overlap", 0),
                evaluator=bool(c.get("evaluator")),
                threshold=c.get("threshold", 0.9),
            )
        )
        for position, e in enumerate(d.get("queryEnhancers") or []):
            options = {k: v for k, v in e.items() if k != "kind"}
            bind.execute(
                sa.insert(query_enhancer).values(workflow_id=row.id, position=position, kind=e["kind"], options=options)
            )
        for field, values in (d.get("filters") or {}).items():
            for value in values:
                bind.execute(sa.insert(workflow_filter).values(workflow_id=row.id, field=field, value=value))
        r = d.get("ranker")
        if r:
            options = {k: v for k, v in r.items() if k not in ("kind", "topN")}
            bind.execute(sa.insert(ranker).values(workflow_id=row.id, kind=r["kind"], top_n=r["topN"], options=options))
    _drop_column("workflow", "document")
