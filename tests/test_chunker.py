"""Chunking settings (Datafari's vector.* keys), child documents, and Solr's JSON update syntax."""

from __future__ import annotations

import itertools

import pytest

from datafari_rag.config import Settings
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
