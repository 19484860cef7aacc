"""The chunk documents of a parent, as Datafari's VectorUpdateProcessor writes them.

Child id ``<parentId>_<i>`` (0-based), ``parent_doc`` = parent id, ``chunk_index`` = i,
``parent_version`` = the parent's ``_version_`` in FileShare (how sync and reconcile see changes),
``chunk_count`` = how many chunks that version has (how a set cut short is seen),
``embedded_content`` = ``exactContent`` = the chunk text; every other field of the parent is
copied (title, url, source, extension, language, last_modified, the six ACL token fields…),
except its full-text fields, its vectors and the fields Solr manages.
"""

from __future__ import annotations

from typing import Any

FULL_TEXT = {"exactContent", "preview_content", "embedded_content", "title_en", "title_fr"}
MANAGED = {
    "id",
    "_version_",
    "_root_",
    "indexed_at",
    "parent_doc",
    "chunk_index",
    "chunk_count",
    "has_vector",
    "parent_version",
}


def language_fields(doc: dict[str, Any], text: str) -> dict[str, Any]:
    """French documents also get French-analysed copies (the schema copies every text to the
    English fields); other languages stay on the English analysis."""
    language = doc.get("language")
    language = language[0] if isinstance(language, list) and language else language
    if isinstance(language, str) and language.lower().startswith("fr"):
        return {"content_fr": text, "title_fr": doc.get("title") or ""}
    return {}


def copied_fields(parent: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in parent.items()
        if k not in FULL_TEXT and k not in MANAGED and not k.startswith(("content_", "vector_"))
    }


def child_documents(parent: dict[str, Any], chunks: list[str]) -> list[dict[str, Any]]:
    shared = copied_fields(parent)
    return [
        {
            **shared,
            "id": f"{parent['id']}_{i}",
            "parent_doc": parent["id"],
            "chunk_index": i,
            "chunk_count": len(chunks),
            **({"parent_version": parent["_version_"]} if parent.get("_version_") else {}),
            "embedded_content": chunk,
            "exactContent": chunk,
            **language_fields(parent, chunk),
        }
        for i, chunk in enumerate(chunks)
    ]
