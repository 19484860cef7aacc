"""Solr: where it is, how the sidecar reaches it, and the local runtime's own settings."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import LOCAL, SOLR, key


@dataclass(frozen=True)
class SolrSettings:
    """Where Solr is and how the sidecar reaches it (solr.*)."""

    solr_url: str = key(
        SOLR,
        "solr.url",
        "http://127.0.0.1:8983/solr",
        "Base URL of Solr (the local runtime, a container, or an existing SolrCloud); several nodes of "
        "one SolrCloud comma-separated: a node that cannot be reached is passed over for the next.",
    )
    collection_main: str = key(SOLR, "solr.collection.main", "FileShare", "The documents' collection (BM25).")
    collection_vector: str = key(SOLR, "solr.collection.vector", "VectorMain", "The chunks' collection (kNN).")
    solr_username: str = key(
        SOLR,
        "solr.username",
        "",
        "The sidecar's Solr user, the service account (empty: datafari-rag). The only Solr user that may "
        "name another user to Solr's security filter.",
    )
    solr_password: str = key(
        SOLR,
        "solr.password",
        "",
        "The service account's Solr password (empty: the one in solr.passwordFile, which "
        "datafari-rag solr start and bootstrap generate).",
    )
    solr_password_file: str = key(
        SOLR,
        "solr.passwordFile",
        "",
        "Where the generated service account password is kept (mode 0600); empty: var/secrets/solr-service.password.",
    )
    solr_timeout: float = key(SOLR, "solr.timeout", 30.0, "Seconds before a Solr request is abandoned.")
    solr_circuit_failures: int = key(
        SOLR,
        "solr.circuit.failures",
        3,
        "The sidecar stops asking Solr after this many consecutive requests that could not reach it or "
        "timed out: requests then fail at once, for solr.circuit.cooldown seconds, then one is tried.",
        minimum=1,
    )
    solr_circuit_cooldown: float = key(
        SOLR, "solr.circuit.cooldown", 5.0, "Seconds the circuit stays open before Solr is tried again.", minimum=0.1
    )


@dataclass(frozen=True)
class LocalSolrSettings:
    """The local Solr runtime of ``datafari-rag solr start`` (solr.local.*)."""

    solr_heap: str = key(LOCAL, "solr.local.heap", "1g", "Java heap of a local Solr node.")
    solr_soft_commit_ms: int = key(
        LOCAL,
        "solr.local.softCommitMs",
        10000,
        "Milliseconds before new documents become visible unless a client commits.",
        minimum=1,
    )
    solr_zk_session_ms: int = key(
        LOCAL,
        "solr.local.zkSessionTimeout",
        6000,
        "Milliseconds ZooKeeper waits before it declares a silent node gone (Solr's zkClientTimeout; "
        "Solr's default is 30000): writes to a shard whose replica or leader died resume after about "
        "this long. At least 4000 (twice ZooKeeper's tick).",
        minimum=4000,
        maximum=120000,
    )
