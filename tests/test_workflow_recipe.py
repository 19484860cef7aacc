"""CONTRIBUTING.md's "Add a workflow field", followed: a field on the model and its line in
``changes()`` — and the API checks it, the pipeline's settings carry it, the store keeps it (no
migration), the web UI's form and the OpenAPI document list it. No other file is touched."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from pydantic import Field

from datafari_rag.config import Settings
from datafari_rag.security.sealed import Sealer
from datafari_rag.store.database import migrate, open_engine
from datafari_rag.workflows import spec as workflow_spec
from datafari_rag.workflows import store as workflow_store
from datafari_rag.workflows.spec import WorkflowError, WorkflowSpec, parse_workflow


class WithReflectRounds(WorkflowSpec):
    """Step 1 of the recipe: the field, with its type, bounds and description..."""

    reflectRounds: int = Field(default=1, ge=1, le=3, description="reflect: how many times a draft is corrected")

    def changes(self, indexing: bool = False) -> dict[str, Any]:
        """...and its line here: the Settings field it sets."""
        return super().changes(indexing) | {"reflect_max_rounds": self.reflectRounds}


@pytest.fixture
def recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model with the new field, wherever the product names the model."""
    monkeypatch.setattr(workflow_spec, "WorkflowSpec", WithReflectRounds)
    monkeypatch.setattr(workflow_store, "WorkflowSpec", WithReflectRounds)


def test_a_new_field_is_checked_run_stored_and_listed(recipe: None, tmp_path: Any) -> None:
    spec = parse_workflow({"name": "careful", "strategy": "reflect", "reflectRounds": 3}, Settings())
    assert spec.settings(Settings()).reflect_max_rounds == 3  # the pipeline's strategy reads it
    with pytest.raises(WorkflowError, match="'reflectRounds' is at most 3"):
        parse_workflow({"name": "careful", "reflectRounds": 9}, Settings())
    # the store keeps it in the workflow's document: read back whole, without a migration
    engine = open_engine(f"sqlite:///{tmp_path / 'store.db'}")
    migrate(engine)
    store = workflow_store.WorkflowStore(engine, Sealer([Fernet.generate_key().decode()]))
    made = store.create(spec)
    assert store.get(made.id).spec == spec and store.get(made.id).as_dict()["reflectRounds"] == 3
    # the web UI's form and the OpenAPI document take the model's schema: the field, its bounds
    listed = WithReflectRounds.model_json_schema()["properties"]["reflectRounds"]
    assert (listed["type"], listed["minimum"], listed["maximum"]) == ("integer", 1, 3)
    engine.dispose()
