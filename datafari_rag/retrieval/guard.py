"""The parent check: a chunk is returned, or sent to the LLM, only if its parent is readable now.

VectorMain's chunks copy their parent's ACL when they are written. A document whose ACL is
tightened, or which is deleted, straight in FileShare (by ManifoldCF, an atomic update, any client)
keeps its old chunks until they are rewritten; this check closes that gap at query time. The
parents of the chunks about to be used are looked up in FileShare, with the same user filter, in
one request; a chunk whose parent is missing or unreadable is dropped. Callers ask Solr for more
chunks than they need so that the top K still holds where possible.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import chunk_fields
from ..security import UserAccess
from ..security.acl import SEPARATOR  # never in an id either (refused at indexing): such an id is not found
from ..solr.collection import Collection


def readable_parents(main: Collection, access: UserAccess, parent_ids: Iterable[str]) -> set[str]:
    """Which of ``parent_ids`` exist in FileShare and may be read by ``access``, now."""
    ids = sorted({i for i in parent_ids if i})
    if not ids:
        return set()
    params = [
        ("q", "*:*"),
        ("defType", "lucene"),
        ("fq", "{!terms f=id separator=$guard_sep v=$guard_ids}"),
        ("guard_ids", SEPARATOR.join(ids)),
        ("guard_sep", SEPARATOR),
        ("rows", len(ids)),
        ("fl", "id"),
    ]
    return {d["id"] for d in main.search("select", params, access)["response"]["docs"]}


def parent_of(chunk: dict[str, Any]) -> str:
    parent = chunk.get(chunk_fields.PARENT)
    return str(parent[0] if isinstance(parent, list) and parent else parent or "")


def readable_chunks(main: Collection, access: UserAccess, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``chunks`` (Solr documents with ``parent_doc``), in order, without those of unreadable parents."""
    allowed = readable_parents(main, access, (parent_of(c) for c in chunks))
    return [c for c in chunks if parent_of(c) in allowed]
