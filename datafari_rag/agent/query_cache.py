"""Query vectors kept (MATIH's query-embedding cache): a question asked again — the same text for
the same model — is not embedded again. Only query-sized requests (at most ``QUERY_TEXTS`` texts,
what Solr's ``knn_text_to_vector`` and the sidecar's cache and guard send) use it: indexing
batches are new text each time and would only push the queries out.

Bounded (``agent.embeddings.queryCache`` vectors, least recently used out first), per process,
thread-safe; a vector is the model's own output, so a hit is the same vector as a miss."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

QUERY_TEXTS = 4  # a request of at most this many texts is a query (as admission counts them)


class QueryVectors:
    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = self.misses = 0
        self._kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(
        self, model: str, texts: list[str], compute: Callable[[list[str]], Sequence[np.ndarray]]
    ) -> list[np.ndarray]:
        """``texts``' vectors: those kept, and ``compute`` of the others (then kept)."""
        if self.size <= 0 or len(texts) > QUERY_TEXTS:
            return list(compute(texts))
        with self._lock:
            found = {t: self._kept[(model, t)] for t in texts if (model, t) in self._kept}
            for text in found:
                self._kept.move_to_end((model, text))
            self.hits += sum(1 for t in texts if t in found)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            computed = dict(zip(missing, compute(missing), strict=True))
            with self._lock:
                self.misses += len(missing)
                for text, vector in computed.items():
                    self._kept[(model, text)] = vector
                    self._kept.move_to_end((model, text))
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
            found.update(computed)
        return [found[t] for t in texts]
