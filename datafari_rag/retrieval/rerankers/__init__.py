"""Rerank backends: each scores (query, passage) pairs; :mod:`..rerank` orders by those scores."""

from __future__ import annotations

from typing import Protocol

from ...llm import Usage


class RerankError(RuntimeError):
    """The backend could not score the passages (unreachable, bad answer, missing model)."""


class Scorer(Protocol):
    def scores(self, query: str, passages: list[str], usage: Usage | None = None) -> list[float]:
        """One score per passage, higher is more relevant; raises :class:`RerankError`."""
        ...
