"""FAQ direct answers (chat-core's): a curated question-and-answer entry answers a question that
is close enough to its own, before any rewriting, retrieval or LLM call.

The entries are FileShare documents like any other — indexed the usual way, with their ACL — whose
``type_category`` is ``faq.category``: the title is the question, the text its answer. They are
read through the same secured search as every read, so a user is answered only from entries they
may read. The question and the readable entries' titles are compared by the embedding model
``faq.modelName`` (cosine ≥ ``faq.threshold``); each title is embedded once per text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..config.guard import FaqSettings
from ..security import UserAccess
from ..solr.collection import Collection, term_query

MAX_ENTRIES = 2000  # entries read per question (a curated FAQ is far smaller)


@dataclass(frozen=True)
class FaqHit:
    id: str
    question: str
    answer: str
    url: str
    score: float


class Faq:
    def __init__(
        self, settings: FaqSettings, embed: Callable[[list[str]], list[list[float]]], main: Collection
    ) -> None:
        self.category = settings.faq_category
        self.threshold = settings.faq_threshold
        self.embed = embed
        self.main = main
        self._vectors: dict[str, np.ndarray] = {}  # a title's unit vector, by its text
        self._lock = threading.Lock()

    def _unit(self, texts: list[str]) -> list[np.ndarray]:
        """Unit vectors of ``texts``, each text embedded once."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            computed = np.asarray(self.embed(missing), dtype=np.float32)
            norms = np.linalg.norm(computed, axis=1, keepdims=True)
            with self._lock:
                if len(self._vectors) > MAX_ENTRIES * 4:  # titles edited over time: start again
                    self._vectors.clear()
                self._vectors.update(zip(missing, computed / np.where(norms == 0, 1, norms), strict=True))
        with self._lock:
            return [self._vectors[t] for t in texts]

    def _read(self, access: UserAccess, fields: str, rows: int, also: str | None = None) -> list[dict[str, object]]:
        """FAQ entries ``access`` may read (the secured search filters them)."""
        params = [
            ("q", "*:*"),
            ("defType", "lucene"),
            ("fq", term_query("type_category", self.category, also)),
            ("fl", fields),
            ("rows", rows),
        ]
        return list(self.main.search("select", params, access)["response"]["docs"])

    def entries(self, access: UserAccess) -> list[dict[str, str]]:
        """The questions of the FAQ entries ``access`` may read (their answers are read only for
        the entry that answers)."""
        docs = self._read(access, "id,title,url", MAX_ENTRIES)
        out = []
        for doc in docs:
            title = _first(doc.get("title"))
            if title.strip():
                out.append({"id": str(doc["id"]), "title": title, "url": _first(doc.get("url")) or str(doc["id"])})
        return out

    def answer(self, question: str, access: UserAccess) -> FaqHit | None:
        """The readable entry whose question is closest to ``question``, if close enough."""
        entries = self.entries(access)
        if not entries:
            return None
        asked, *titles = self._unit([question, *(e["title"] for e in entries)])
        scores = np.stack(titles) @ asked
        best = int(np.argmax(scores))
        if scores[best] < self.threshold:
            return None
        e = entries[best]
        found = self._read(access, "exactContent", 1, term_query("id", e["id"]))
        answer = _first(found[0].get("exactContent")).strip() if found else ""
        if not answer:  # gone, or emptied, since the questions were read
            return None
        return FaqHit(e["id"], e["title"], answer, e["url"], float(scores[best]))


def _first(value: object) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)
