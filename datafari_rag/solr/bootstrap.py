"""``datafari-rag bootstrap``: configsets, collections and the embedding model, idempotently.

Uploads both configsets, creates the collections that are missing (reloading the ones that
exist so that configset changes apply), and makes VectorMain's model store hold exactly
``solr_config/models/default_model.json`` (pointing at the configured embedding endpoint),
replacing a model whose definition changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import Settings
from ..paths import CONFIGSETS
from . import admin, model_store
from .client import SolrClient
from .model_store import desired_model


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
    current = {m["name"]: m for m in model_store.get_models(solr, settings.collection_vector)}
    found = current.get(wanted["name"])
    if found is None:
        model_store.put_model(solr, settings.collection_vector, wanted)
        report.model = "uploaded"
    elif found.get("class") != wanted["class"] or found.get("params") != wanted["params"]:
        model_store.delete_model(solr, settings.collection_vector, wanted["name"])
        model_store.put_model(solr, settings.collection_vector, wanted)
        report.model = "replaced"
    if report.model != "unchanged":
        admin.reload_collection(solr, settings.collection_vector)
    return report
