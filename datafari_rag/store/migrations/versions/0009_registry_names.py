"""the names of retrieval modes, strategies, chunkers, query enhancers and rerankers are the
registry's (datafari_rag/registry.py), checked by the workflows' own validation: no CHECK
constraint copies their lists, so a new entry needs no migration

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

CONSTRAINTS = {
    "workflow": ("ck_workflow_retrieval", "ck_workflow_strategy"),
    "chunker": ("ck_chunker_kind",),
    "query_enhancer": ("ck_query_enhancer_kind",),
    "ranker": ("ck_ranker_kind",),
}
LISTS = {
    "ck_workflow_retrieval": "retrieval IN ('bm25', 'vector', 'rrf')",
    "ck_workflow_strategy": "strategy IN ('simple', 'cot', 'reflect', 'multihop')",
    "ck_chunker_kind": "kind IN ('recursive', 'semantic', 'proposition')",
    "ck_query_enhancer_kind": "kind IN ('rewrite', 'multiQuery', 'hyde', 'selfQuery')",
    "ck_ranker_kind": "kind IN ('api', 'onnx', 'llm')",
}


def upgrade() -> None:
    for table, names in CONSTRAINTS.items():
        with op.batch_alter_table(table) as batch:  # SQLite: the table is copied without them
            for name in names:
                batch.drop_constraint(name, type_="check")


def downgrade() -> None:
    for table, names in CONSTRAINTS.items():
        with op.batch_alter_table(table) as batch:
            for name in names:
                batch.create_check_constraint(name, LISTS[name])
