"""Alembic's environment: runs on the connection ``database.migrate`` hands over (under its lock)."""

from __future__ import annotations

from alembic import context

from datafari_rag.store.schema import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
)
with context.begin_transaction():
    context.run_migrations()
