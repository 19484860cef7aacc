"""``datafari-rag bootstrap``: configsets, collections and the embedding model, idempotently.

Uploads both configsets, creates the collections that are missing (reloading the ones that
exist so that configset changes apply), and makes VectorMain's model store hold exactly
``solr_config/models/default_model.json`` (pointing at the configured embedding endpoint),
replacing a model whose definition changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from ..paths import CONFIGSETS, MODELS
from . import admin
from .client import SolrClient


@dataclass
class BootstrapReport:
    created: list[str] = field(default_factory=list)
    reloaded: list[str] = field(default_factory=list)
    model: str = "unchanged"  # "uploaded", "replaced" or "unchanged"

    def lines(self) -> list[str]:
        return [
            f"collections created: {', '.join(self.created) or 'none'}",
            f"collections reloaded: {', '.join(self.reloaded) or 'none'}",
            f"embedding model: {self.model}",
        ]


def desired_model(settings: Settings) -> dict[str, Any]:
    """The model JSON of the configset, aimed at the configured embedding service."""
    model = json.loads((MODELS / "default_model.json").read_text())
    model["name"] = settings.embeddings_model
    model["params"]["baseUrl"] = settings.agent_url
    return model


def bootstrap(solr: SolrClient, settings: Settings, shards: int = 1, replicas: int = 1) -> BootstrapReport:
    report = BootstrapReport()
    existing = set(admin.list_collections(solr))
    for collection, configset in (
        (settings.collection_main, "FileShare"),
        (settings.collection_vector, "VectorMain"),
    ):
        admin.upload_configset(solr, collection, CONFIGSETS / configset / "conf")
        if collection in existing:
            admin.reload_collection(solr, collection)
            report.reloaded.append(collection)
        else:
            admin.create_collection(solr, collection, collection, shards, replicas)
            report.created.append(collection)

    wanted = desired_model(settings)
    current = {m["name"]: m for m in admin.get_models(solr, settings.collection_vector)}
    found = current.get(wanted["name"])
    if found is None:
        admin.put_model(solr, settings.collection_vector, wanted)
        report.model = "uploaded"
    elif found.get("class") != wanted["class"] or found.get("params") != wanted["params"]:
        admin.delete_model(solr, settings.collection_vector, wanted["name"])
        admin.put_model(solr, settings.collection_vector, wanted)
        report.model = "replaced"
    if report.model != "unchanged":
        admin.reload_collection(solr, settings.collection_vector)
    return report
