"""Query-time chunking: documents cut into pieces of at most ``chunking.chunk.size`` characters."""

from __future__ import annotations

from dataclasses import dataclass, replace

from langchain_text_splitters import RecursiveCharacterTextSplitter

from ..config import Settings
from ..retrieval import Snippet
from .hygiene import Hygiene


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


@dataclass(frozen=True)
class PromptChunking:
    """The retrieved text as a prompt takes it: cleaned (``prompt.cleaning``), then cut into
    ``chunking.chunk.size`` pieces unless ``chunking.enable`` is false or a request wants texts
    whole (then packing cuts only a text too large for a prompt alone)."""

    enabled: bool  # chunking.enable
    size: int  # chunking.chunk.size
    hygiene: Hygiene

    @classmethod
    def of(cls, settings: Settings) -> PromptChunking:
        return cls(settings.chunking_enabled, settings.chunk_size, Hygiene.of(settings))

    def chunks(self, found: list[Snippet], whole: bool = False) -> list[Snippet]:
        h = self.hygiene
        cleaned = [replace(x, title=h.snippet(x.title), content=h.snippet(x.content)) for x in found]
        return chunk_snippets(cleaned, self.size) if self.enabled and not whole else cleaned
