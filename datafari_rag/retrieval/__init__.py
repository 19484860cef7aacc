"""Finding the passages an answer is built from: bm25, vector, rrf, and by document id."""

from .base import RetrievalContext, Snippet
from .dispatch import retrieve, retrieve_all, retrieve_document

__all__ = ["RetrievalContext", "Snippet", "retrieve", "retrieve_all", "retrieve_document"]
