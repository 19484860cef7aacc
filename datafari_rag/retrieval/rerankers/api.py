"""Scores from a Cohere/Jina-compatible ``/rerank`` endpoint (Cohere, Jina, Voyage, and the local
servers that copy their API: text-embeddings-inference, Infinity, LocalAI, vLLM)."""

from __future__ import annotations

from typing import Any

import requests

from ...llm import Usage
from . import RerankError


class ApiScorer:
    """``POST {url}`` with ``{model, query, documents, top_n}``; reads ``results[].index`` and
    ``results[].relevance_score``. A passage the answer leaves out scores lowest."""

    def __init__(self, url: str, key: str = "", model: str = "", timeout: float = 5.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise RerankError("rerank.backend=api needs rerank.api.url, an http(s) URL")
        self.url, self.model, self.timeout = url, model, timeout
        self.session = requests.Session()
        if key:
            self.session.headers["Authorization"] = f"Bearer {key}"

    def scores(self, query: str, passages: list[str], usage: Usage | None = None) -> list[float]:
        body: dict[str, Any] = {"query": query, "documents": passages, "top_n": len(passages)}
        if self.model:
            body["model"] = self.model
        try:
            response = self.session.post(self.url, json=body, timeout=self.timeout)
            response.raise_for_status()
            results = response.json()["results"]
            found = {int(r["index"]): float(r["relevance_score"]) for r in results}
        except requests.RequestException as exc:
            raise RerankError(f"the rerank endpoint failed: {exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise RerankError(f"the rerank endpoint's answer is not a rerank result: {exc!r}") from exc
        if any(not 0 <= i < len(passages) for i in found):
            raise RerankError("the rerank endpoint named a passage it was not sent")
        lowest = min(found.values(), default=0.0) - 1.0
        return [found.get(i, lowest) for i in range(len(passages))]
