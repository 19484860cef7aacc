"""``datafari-rag bootstrap``: configsets, collections and the embedding model, idempotently.

Uploads both configsets (FileShare's with the embedding model's ``tokenizer.json``, which its
chunk-and-embed processor counts tokens with), creates the collections that are missing
(VectorMain routed on ``parent_doc``, so a parent's chunks share a shard) and reloads the ones that
exist so that configset changes apply; makes both model stores hold exactly
``solr_config/models/default_model.json`` (pointing at the configured embedding endpoint),
replacing a model whose definition changed; and sets FileShare's ``vector.*`` user properties
(:mod:`.user_properties`): the processor, the only chunk writer, is on when ``vector.enabled`` is.
With ``secure``, first makes Solr authenticate and authorize (:mod:`.security_json`), then
carries on as the service account; either way Solr must pass the start-up check
(:func:`.security_json.check_door`: 9.10.1 or later, an ``all`` permission, and authentication
unless not ``secure``). A collection created by an older schema whose fields cannot
change in place (Lucene keeps a field's doc values kind for the life of an index) is refused
before anything is uploaded (:func:`check_upgrade`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import chunk_fields
from ..agent.model import model_dir
from ..agent.onnx_model import PACKAGED
from ..config import Settings
from ..llm.embeddings import EmbeddingError, embedding_call
from ..paths import CONFIGSETS, var_dir
from ..security.authority import mapping_path
from . import admin, model_store, security_json, user_properties
from .client import SolrClient, SolrError
from .model_store import desired_model, desired_models
from .service_account import ensure as service_account

# Fields whose definition changed in a way an existing index cannot take: name -> what it became.
CHANGED_FIELDS = {"title": "multi-valued, as Datafari's"}


class SchemaProblem(RuntimeError):
    """An existing collection's schema cannot become the configset's without indexing again."""


@dataclass
class BootstrapReport:
    created: list[str] = field(default_factory=list)
    reloaded: list[str] = field(default_factory=list)
    model: str = "unchanged"  # "uploaded", "replaced" or "unchanged"
    properties: dict[str, str] = field(default_factory=dict)  # user properties set
    security: str = "not asked"  # what securing did (bootstrap secures unless --insecure)
    door: str = ""  # what the start-up check saw (security_json.check_door)
    leaders: dict[str, int] = field(default_factory=dict)  # collection -> nodes leading its shards
    vector_field: str = ""  # solr.vector.field against the model's dimension (check_vector_field)

    def lines(self) -> list[str]:
        enabled = {k.split(":")[0]: v for k, v in self.properties.items() if k.endswith(":vector.enabled")}
        props = f"{len(self.properties)} set" + "".join(f", {c} vector.enabled={v}" for c, v in enabled.items())
        return [
            f"collections created: {', '.join(self.created) or 'none'}",
            f"collections reloaded: {', '.join(self.reloaded) or 'none'}",
            f"embedding model: {self.model}",
            f"Solr user properties (chunk-and-embed, security filter): {props}",
            f"Solr authentication and authorization: {self.security}",
            f"Solr's door: {self.door}",
            "shard leaders: " + (", ".join(f"{c} on {n} node(s)" for c, n in self.leaders.items()) or "one shard each"),
            f"vector field: {self.vector_field}",
        ]


def bootstrap(
    solr: SolrClient, settings: Settings, shards: int = 1, replicas: int = 1, secure: bool = False
) -> BootstrapReport:
    report = BootstrapReport()
    if secure:
        report.security = security_json.secure(solr, settings, var_dir())
        solr = SolrClient(solr.base_url, solr.timeout, auth=service_account(settings))
    # before anything is uploaded: an old Solr, or one whose security.json leaves paths open, is refused
    report.door = security_json.check_door(solr, allow_open=not secure)
    existing = set(admin.list_collections(solr))
    for collection in (settings.collection_vector, settings.collection_main):
        if collection in existing:
            admin.wait_served(solr, collection)  # a node just started still loads its cores
            check_upgrade(solr, collection)
    mapping = mapping_path(settings)
    shared = {"acl-mapping.json": mapping} if mapping.exists() else {}
    tokenizer = {"tokenizer.json": model_dir() / "tokenizer.json"}
    # VectorMain first: FileShare's processor writes there as soon as it is enabled.
    for collection, configset, extra, route in (
        (settings.collection_vector, "VectorMain", shared, chunk_fields.PARENT),
        (settings.collection_main, "FileShare", {**shared, **tokenizer}, None),
    ):
        admin.upload_configset(solr, collection, CONFIGSETS / configset / "conf", extra)
        if collection in existing:
            admin.reload_collection(solr, collection)
            report.reloaded.append(collection)
        else:
            admin.create_collection(solr, collection, collection, shards, replicas, route)
            report.created.append(collection)

    report.vector_field = check_vector_field(solr, settings)
    outcomes = [
        _ensure_model(solr, collection, settings)
        for collection in (settings.collection_vector, settings.collection_main)
    ]
    report.model = next((o for o in outcomes if o != "unchanged"), "unchanged")

    for collection in (settings.collection_vector, settings.collection_main):
        if len(admin.shard_names(solr, collection)) > 1:  # at every bootstrap: a restart elects anew
            report.leaders[collection] = len(set(admin.balance_leaders(solr, collection).values()))

    for collection in (settings.collection_vector, settings.collection_main):
        current = user_properties.get(solr, collection)
        wanted = user_properties.security_wanted(settings, current)
        if collection == settings.collection_main:
            wanted |= user_properties.wanted(settings, current)
        elif current.get("vector.field") != settings.vector_field:  # the field VectorMain's chain fills
            wanted["vector.field"] = settings.vector_field
        user_properties.set_properties(solr, collection, wanted)
        report.properties |= {f"{collection}:{k}": v for k, v in wanted.items()}
    return report


def ensure_collections(solr: SolrClient, settings: Settings) -> bool:
    """The collections ``settings`` name, bootstrapped if one of them is missing (a workflow's
    own); True when they were made now. Collections that exist are left as they are."""
    existing = set(admin.list_collections(solr))
    if {settings.collection_main, settings.collection_vector} <= existing:
        return False
    bootstrap(solr, settings)
    return True


def check_upgrade(solr: SolrClient, collection: str) -> None:
    """Refuses a collection whose ``title`` is single-valued (created before it became Datafari's
    multi-valued field): the new configset would make every later write fail in Lucene."""
    for name, became in CHANGED_FIELDS.items():
        try:
            found = solr.get(f"{collection}/schema/fields/{name}", {"showDefaults": "true"}).get("field", {})
        except SolrError as exc:
            if exc.status == 404:  # not one of ours: nothing to compare
                continue
            raise
        if found.get("multiValued") is False:
            raise SchemaProblem(
                f"{collection} was created by an older datafari-rag: its '{name}' field is now {became}, "
                "and Solr cannot change a field of an existing index. Name new collections "
                "(solr.collection.main, solr.collection.vector), run datafari-rag bootstrap, and index "
                "the documents again."
            )


def vector_fields(solr: SolrClient, collection: str) -> dict[str, int]:
    """VectorMain's dense vector fields and their dimensions, from its live schema."""
    types = {
        t["name"]: int(t["vectorDimension"])
        for t in solr.get(f"{collection}/schema/fieldtypes")["fieldTypes"]
        if t.get("class") == "solr.DenseVectorField" and "vectorDimension" in t
    }
    fields = solr.get(f"{collection}/schema/fields")["fields"]
    return {f["name"]: types[f["type"]] for f in fields if f.get("type") in types}


def model_dimension(settings: Settings) -> int:
    """The length of the vectors the configured embedding model gives (one text embedded)."""
    wanted = desired_model(settings)
    if settings.embeddings_service == "inprocess":
        return PACKAGED[settings.embeddings_model_name].dimension
    params = {**wanted["params"], "timeout": 30 / 4, "maxRetries": 1}
    [vector] = embedding_call(wanted["class"], params, params["modelName"])(["dimension check"])
    return len(vector)


def check_vector_field(solr: SolrClient, settings: Settings) -> str:
    """``solr.vector.field`` must be one of VectorMain's vector fields and hold the model's
    dimension: a mismatch would make every chunk write fail (or every kNN search), so it stops
    the bootstrap with the fields there are. An embedding service not reachable yet leaves the
    dimension unchecked (said in the report), never the field."""
    fields = vector_fields(solr, settings.collection_vector)
    field_name = settings.vector_field
    listed = ", ".join(f"{n} ({d})" for n, d in sorted(fields.items(), key=lambda x: x[1]))
    if field_name not in fields:
        raise SchemaProblem(
            f"solr.vector.field={field_name}: {settings.collection_vector} has no such vector field; "
            f"its vector fields are {listed}"
        )
    try:
        dimension = model_dimension(settings)
    except EmbeddingError as exc:
        cause = exc.__cause__.__class__.__name__ if exc.__cause__ else str(exc)
        return f"{field_name} ({fields[field_name]}), the model's dimension not checked: {cause}"
    if dimension != fields[field_name]:
        fitting = [n for n, d in fields.items() if d == dimension]
        hint = f"set solr.vector.field={fitting[0]}" if fitting else f"add a {dimension}-dimension vector field"
        raise SchemaProblem(
            f"the model {settings.embeddings_model_name} gives {dimension}-dimension vectors but "
            f"solr.vector.field={field_name} holds {fields[field_name]}: {hint} (vector fields: {listed})"
        )
    return f"{field_name} ({dimension}), the model's dimension"


def _ensure_model(solr: SolrClient, collection: str, settings: Settings) -> str:
    """Makes the collection's model store hold the configured model(s); says what it did."""
    current = {m["name"]: m for m in model_store.get_models(solr, collection)}
    outcomes = []
    for wanted in desired_models(settings):
        found = current.get(wanted["name"])
        if found is None:
            outcomes.append("uploaded")
        elif found.get("class") != wanted["class"] or found.get("params") != wanted["params"]:
            model_store.delete_model(solr, collection, wanted["name"])
            outcomes.append("replaced")
        else:
            outcomes.append("unchanged")
            continue
        model_store.put_model(solr, collection, wanted)
    if any(o != "unchanged" for o in outcomes):
        admin.reload_collection(solr, collection)
    return ", ".join(outcomes)
