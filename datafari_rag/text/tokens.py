"""Tokens of the embedding model (all-MiniLM-L6-v2's WordPiece, from the packaged model): what a
chunk's size in tokens and the context's token budget are counted in."""

from __future__ import annotations

from functools import lru_cache

from tokenizers import Tokenizer

from ..agent.model import model_dir


@lru_cache(maxsize=1)
def wordpiece() -> Tokenizer:
    """all-MiniLM-L6-v2's WordPiece tokenizer (the packaged model's), without truncation or padding."""
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=1 << 16)
def count_tokens(text: str) -> int:
    """Tokens of the embedding model (all-MiniLM-L6-v2's WordPiece), without [CLS]/[SEP].

    Cached: the splitter measures every word of a long text, and words repeat.
    """
    return len(wordpiece().encode(text, add_special_tokens=False).ids)
