"""Chunking settings (Datafari's vector.* keys), child documents, and Solr's JSON update syntax."""

from __future__ import annotations

import itertools

import pytest

from datafari_rag.config import Settings
from datafari_rag.indexing.children import child_documents
from datafari_rag.indexing.chunker import chunk_text
from datafari_rag.text.tokens import count_tokens

TEXT = "\n\n".join(f"Paragraph {i}. " + "The quick brown fox jumps over the lazy dog. " * 12 for i in range(6))


@pytest.mark.parametrize(
    "splitter", ["recursiveSplitter", "paragraphSplitter", "sentenceSplitter", "lineSplitter", "characterSplitter"]
)
@pytest.mark.parametrize(("unit", "size"), [("tokens", 60), ("characters", 300)])
def test_no_chunk_exceeds_the_size_and_no_text_is_lost(splitter: str, unit: str, size: int) -> None:
    settings = Settings(
        vector_splitter=splitter,
        vector_chunk_unit=unit,
        vector_chunk_size=size,
        vector_min_chunk_length=0,
        vector_min_alnum_ratio=0.0,
    )
    chunks = chunk_text(TEXT, settings)
    measure = count_tokens if unit == "tokens" else len
    assert chunks and all(measure(c) <= size for c in chunks)
    assert "".join(chunks).replace(" ", "").replace("\n", "") == TEXT.replace(" ", "").replace("\n", "")


def test_overlap_repeats_text_between_chunks() -> None:
    words = " ".join(f"w{i}" for i in range(400))
    settings = Settings(vector_chunk_size=100, vector_chunk_unit="characters", vector_max_overlap=30)
    chunks = chunk_text(words, settings)
    for a, b in itertools.pairwise(chunks):
        assert a.split()[-1] in b.split()  # the end of a chunk starts the next one
    no_overlap = chunk_text(words, settings.replace(vector_max_overlap=0))
    assert len(no_overlap) < len(chunks)


def test_filters_drop_short_and_symbol_chunks() -> None:
    settings = Settings(
        vector_chunk_size=5, vector_chunk_unit="tokens", vector_min_chunk_length=10, vector_min_alnum_ratio=0.5
    )
    chunks = chunk_text("ok.\n\n----------- ......... ---------\n\nA sentence that is long enough.", settings)
    assert chunks and all(len(c) >= 10 and sum(ch.isalnum() for ch in c) / len(c) >= 0.5 for c in chunks)
    assert not any("---" in c for c in chunks)


def test_children_copy_every_field_but_the_full_text() -> None:
    parent = {
        "id": "p1",
        "title": "T",
        "url": "u",
        "source": "s",
        "extension": "pdf",
        "language": "en",
        "last_modified": "2026-01-01T00:00:00Z",
        "exactContent": "full text",
        "content_en": "full text",
        "preview_content": "preview",
        "allow_token_document": ["a"],
        "deny_token_share": ["d"],
        "_version_": 3,
    }
    kids = child_documents(parent, ["one", "two"])
    assert [k["id"] for k in kids] == ["p1_0", "p1_1"]
    assert kids[1] == {  # an English document: no French-analysed copies
        "title": "T",
        "url": "u",
        "source": "s",
        "extension": "pdf",
        "language": "en",
        "last_modified": "2026-01-01T00:00:00Z",
        "allow_token_document": ["a"],
        "deny_token_share": ["d"],
        "id": "p1_1",
        "parent_doc": "p1",
        "chunk_index": 1,
        "chunk_count": 2,
        "parent_version": 3,  # the parent's _version_: how sync and reconcile see a changed parent
        "embedded_content": "two",
        "exactContent": "two",
    }


def test_french_documents_get_french_fields() -> None:
    [kid] = child_documents({"id": "p", "title": "Congés", "language": "fr", "exactContent": "x"}, ["Les congés."])
    assert kid["content_fr"] == "Les congés." and kid["title_fr"] == "Congés"
