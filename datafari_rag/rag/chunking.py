"""Query-time chunking: documents cut into pieces of at most ``chunking.chunk.size`` characters."""

from __future__ import annotations

from dataclasses import replace

from langchain_text_splitters import RecursiveCharacterTextSplitter

from ..retrieval import Snippet


def chunk_snippets(snippets: list[Snippet], chunk_size: int) -> list[Snippet]:
    """Each snippet split by paragraphs, then lines, sentences and words; no overlap."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=0)
    out: list[Snippet] = []
    for snippet in snippets:
        if len(snippet.content) <= chunk_size:  # what the splitter returns for a text that fits, without its work
            text = snippet.content.strip()
            out += [replace(snippet, content=text)] if text else []
            continue
        for piece in splitter.split_text(snippet.content):
            out.append(replace(snippet, content=piece))
    return out
