"""Solr's admin APIs the product uses: system info, configsets, collections."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path
from typing import Any

from .client import SolrClient, SolrError


def system_info(solr: SolrClient, timeout: float | None = None) -> dict[str, Any]:
    """Solr's version, mode (``solrcloud`` or ``std``) and, in SolrCloud, its ZooKeeper."""
    info = solr.get("admin/info/system", timeout=timeout)
    return {
        "version": info["lucene"]["solr-spec-version"],
        "mode": info.get("mode", "std"),
        "zk_host": info.get("zkHost"),
    }


def list_collections(solr: SolrClient, timeout: float | None = None) -> list[str]:
    return list(solr.get("admin/collections", {"action": "LIST"}, timeout=timeout).get("collections", []))


def _cluster(solr: SolrClient, collection: str) -> tuple[dict[str, Any], set[str]]:
    """The collection's shards (CLUSTERSTATUS) and the cluster's live nodes."""
    cluster = solr.get("admin/collections", {"action": "CLUSTERSTATUS", "collection": collection})["cluster"]
    return cluster["collections"][collection]["shards"], set(cluster.get("live_nodes", []))


def unserved_shards(solr: SolrClient, collection: str) -> dict[str, list[str]]:
    """The collection's shards with no active replica on a live node, each with its replicas'
    states (``down@node``); empty when every shard serves."""
    shards, live = _cluster(solr, collection)
    return {
        name: [f"{r.get('state')}@{r.get('node_name')}" for r in shard["replicas"].values()]
        for name, shard in sorted(shards.items())
        if not any(r.get("state") == "active" and r.get("node_name") in live for r in shard["replicas"].values())
    }


def wait_served(solr: SolrClient, collection: str, timeout: float = 120.0) -> None:
    """Returns once every shard of ``collection`` has an active replica on a live node. A node
    answers (401 without credentials, even its health check) seconds before its cores are loaded,
    the in-process model read: a configset uploaded or a schema read then gets 404. Raises
    SolrError 503 naming the shards still down after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while unserved := unserved_shards(solr, collection):
        if time.monotonic() >= deadline:
            states = "; ".join(
                f"{shard}: {', '.join(replicas) or 'no replica'}" for shard, replicas in unserved.items()
            )
            raise SolrError(
                503,
                f"{collection} has shards with no active replica on a live node after {timeout:.0f} s ({states}):"
                " start the nodes that hold them, or read their solr.log",
            )
        time.sleep(0.2)


def shard_names(solr: SolrClient, collection: str) -> list[str]:
    """The collection's shards (slices), by name."""
    return sorted(_cluster(solr, collection)[0])


def leaders(solr: SolrClient, collection: str) -> dict[str, str]:
    """Each shard's leader: shard name -> node name."""
    shards = _cluster(solr, collection)[0]
    return {
        name: next((r["node_name"] for r in shard["replicas"].values() if r.get("leader") == "true"), "")
        for name, shard in sorted(shards.items())
    }


def balance_leaders(solr: SolrClient, collection: str) -> dict[str, str]:
    """Spreads the shards' leadership over the nodes holding them: Solr elects whichever replica
    comes up first, so after a cluster starts every leader sits on its first node, which then
    does all the writing (and chunk embedding) and is the one whose loss stops every write. Marks
    one ``preferredLeader`` replica per shard, evenly over the nodes (BALANCESHARDUNIQUE), and
    makes them the leaders (REBALANCELEADERS). Returns shard -> leader node."""
    if len(shard_names(solr, collection)) > 1:
        solr.get(
            "admin/collections",
            {"action": "BALANCESHARDUNIQUE", "collection": collection, "property": "preferredLeader"},
            timeout=max(solr.timeout, 60),
        )
        deadline = time.monotonic() + 60  # the Overseer sets the marks a moment later
        while not _every_shard_marked(solr, collection) and time.monotonic() < deadline:
            time.sleep(0.2)
        solr.get(
            "admin/collections",
            {"action": "REBALANCELEADERS", "collection": collection, "maxWaitSeconds": 60},
            timeout=max(solr.timeout, 90),
        )
    return leaders(solr, collection)


def _every_shard_marked(solr: SolrClient, collection: str) -> bool:
    shards = _cluster(solr, collection)[0].values()
    return all(any(r.get("property.preferredleader") == "true" for r in shard["replicas"].values()) for shard in shards)


def zip_configset(folder: Path, extra: dict[str, Path] | None = None) -> bytes:
    """The configset folder as the zip the Configsets API takes (paths relative to conf/), plus
    ``extra`` files under the names given (files that live outside the repository's configset)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())
        for name, file in (extra or {}).items():
            archive.write(file, name)
    return buffer.getvalue()


def upload_configset(solr: SolrClient, name: str, folder: Path, extra: dict[str, Path] | None = None) -> None:
    """Uploads (or overwrites) a configset; files Solr keeps there, like the model store and the
    user properties' overlay, stay."""
    solr.request(
        "POST",
        "admin/configs",
        params={"action": "UPLOAD", "name": name, "overwrite": "true"},
        data=zip_configset(folder, extra),
        headers={"Content-Type": "application/octet-stream"},
    )


def create_collection(
    solr: SolrClient, name: str, configset: str, shards: int, replicas: int, route_field: str | None = None
) -> None:
    """Creates a compositeId collection; ``route_field`` hashes that field instead of the id (a
    parent's chunks, which share ``parent_doc``, then live on one shard)."""
    solr.get(
        "admin/collections",
        {
            "action": "CREATE",
            "name": name,
            "collection.configName": configset,
            "numShards": shards,
            "replicationFactor": replicas,
            "waitForFinalState": "true",
            **({"router.field": route_field} if route_field else {}),
        },
        timeout=max(solr.timeout, 120),
    )


def reload_collection(solr: SolrClient, name: str) -> None:
    solr.get("admin/collections", {"action": "RELOAD", "name": name}, timeout=max(solr.timeout, 120))
