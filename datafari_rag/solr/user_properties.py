"""FileShare's chunk-and-embed settings: Datafari's ``vector.*`` Solr user properties.

The update processor in FileShare's chain reads them (solrconfig.xml substitutes
``${vector.chunksize:300}`` and the like); the Config API's ``set-user-property`` stores them in
the configset's overlay and reloads the collection, so a change applies to the next write on
every node. ``datafari-rag vector config`` reads and sets them through this module.
"""

from __future__ import annotations

from typing import Any

from ..config import ConfigError, Settings, convert
from .client import SolrClient

# The user properties the processor reads, with the Settings attribute that validates each one
# and seeds it the first time (rag.properties carries the same keys).
CHUNKING = {
    "vector.enabled": "vector_enabled",
    "vector.chunksize": "vector_chunk_size",
    "vector.chunksize.unit": "vector_chunk_unit",
    "vector.maxoverlap": "vector_max_overlap",
    "vector.splitter": "vector_splitter",
    "vector.filter.minchunklength": "vector_min_chunk_length",
    "vector.filter.minalphanumratio": "vector_min_alnum_ratio",
}
# Set by bootstrap from the configuration: where the chunks go and which model embeds them.
WIRING = {
    "vector.collection": "collection_vector",
    "vector.model": "embeddings_model",
    "vector.field": "vector_field",
}


# The security filter's settings, set on both collections by bootstrap.
SECURITY = {
    "security.trustedPrincipals": "solr_username",
    "security.authority.url": "authority_url",
    "security.groups.asTokens": "groups_as_tokens",
}
SERVICE_ACCOUNT = "datafari-rag"  # the trusted principal when solr.username is empty


def service_user(settings: Settings) -> str:
    """The Solr user the sidecar is: the one Solr's filter lets name another user."""
    return settings.solr_username or SERVICE_ACCOUNT


def security_wanted(settings: Settings, current: dict[str, str]) -> dict[str, str]:
    """The security filter's properties, as the configuration says, where Solr differs."""
    values = {key: text(getattr(settings, attr)) for key, attr in SECURITY.items()}
    values["security.trustedPrincipals"] = service_user(settings)
    return {k: v for k, v in values.items() if current.get(k) != v}


def text(value: Any) -> str:
    """A Settings value as Solr's property syntax writes it (booleans in lower case)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def get(solr: SolrClient, collection: str, timeout: float | None = None) -> dict[str, str]:
    """The user properties set on ``collection`` (only those set; defaults are the configset's)."""
    overlay = solr.get(f"{collection}/config/overlay", timeout=timeout).get("overlay", {})
    return {str(k): str(v) for k, v in (overlay.get("userProps") or {}).items()}


def processor_on(solr: SolrClient, collection: str, timeout: float | None = None) -> bool:
    """Whether FileShare's update processor chunks and embeds writes (its configset's default is off)."""
    return get(solr, collection, timeout).get("vector.enabled", "false").lower() == "true"


def set_properties(solr: SolrClient, collection: str, values: dict[str, str]) -> None:
    """Sets user properties in one Config API call (Solr reloads the collection once)."""
    if values:
        solr.post(f"{collection}/config", json={"set-user-property": values}, timeout=max(solr.timeout, 120))


def validated(pairs: dict[str, str]) -> dict[str, str]:
    """Checks ``vector.*`` assignments with the configuration's own rules; raises ValueError
    naming the key and what it accepts."""
    unknown = sorted(set(pairs) - set(CHUNKING))
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(CHUNKING)}")
    try:
        out = {key: text(convert(key, value)) for key, value in pairs.items()}
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return out


def check_overlap(values: dict[str, str]) -> None:
    """The overlap must stay below the chunk size (both as Solr will hold them)."""
    size = int(values.get("vector.chunksize", Settings.vector_chunk_size))
    overlap = int(values.get("vector.maxoverlap", Settings.vector_max_overlap))
    if overlap >= size:
        raise ValueError(f"vector.maxoverlap ({overlap}) must be smaller than vector.chunksize ({size})")


def wanted(settings: Settings, current: dict[str, str]) -> dict[str, str]:
    """What bootstrap sets: the wiring always, the chunking settings only where Solr has none
    yet (afterwards ``vector config`` owns them), and ``vector.enabled`` as the settings say."""
    values = {key: text(getattr(settings, attr)) for key, attr in WIRING.items()}
    for key, attr in CHUNKING.items():
        if key not in current:
            values[key] = text(getattr(settings, attr))
    values["vector.enabled"] = text(settings.vector_enabled)
    return {k: v for k, v in values.items() if current.get(k) != v}
