"""Splitting a document's text into the chunks that VectorMain holds (langchain-text-splitters).

``vector.splitter`` picks how text is cut (recursively by paragraph, line, sentence and word;
or only at paragraphs, sentences, lines or characters), ``vector.chunksize`` and
``vector.maxoverlap`` are measured in tokens of the embedding model or in characters, and the
filters drop chunks too short or made mostly of symbols.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_text_splitters import RecursiveCharacterTextSplitter, TextSplitter

from ..config.indexing import IndexingSettings
from ..text.tokens import count_tokens

_SENTENCE_ENDS = [". ", "! ", "? ", "… "]
# Where each splitter cuts first; a piece still too large is cut at the next, finer separators
# (as Datafari's splitters fall back to a sub-splitter), so no chunk exceeds the size. Each
# separator stays at the end of its piece, so joined pieces read as the original text.
SEPARATORS = {
    "recursiveSplitter": ["\n\n", "\n", *_SENTENCE_ENDS, " ", ""],
    "paragraphSplitter": ["\n\n", *_SENTENCE_ENDS, " ", ""],
    "sentenceSplitter": [*_SENTENCE_ENDS, "\n", " ", ""],
    "lineSplitter": ["\n", " ", ""],
    "characterSplitter": [""],
}


def make_splitter(settings: IndexingSettings) -> TextSplitter:
    length: Callable[[str], int] = count_tokens if settings.vector_chunk_unit == "tokens" else len
    size, overlap = settings.vector_chunk_size, min(settings.vector_max_overlap, settings.vector_chunk_size - 1)
    return RecursiveCharacterTextSplitter(
        separators=SEPARATORS[settings.vector_splitter],
        keep_separator="end",
        chunk_size=size,
        chunk_overlap=overlap,
        length_function=length,
    )


def keep(chunk: str, settings: IndexingSettings) -> bool:
    """The filters: long enough, and enough letters and digits (not a table of dots or dashes)."""
    text = chunk.strip()
    if len(text) < settings.vector_min_chunk_length:
        return False
    alnum = sum(ch.isalnum() for ch in text)
    return alnum / len(text) >= settings.vector_min_alnum_ratio


def chunk_text(text: str, settings: IndexingSettings) -> list[str]:
    return [c.strip() for c in make_splitter(settings).split_text(text) if keep(c, settings)]
