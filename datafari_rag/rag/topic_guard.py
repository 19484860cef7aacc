"""The forbidden-topic guard (chat-core's): a query about a configured forbidden topic is refused
before anything else runs — no rewriting, no retrieval, no LLM answer — with a configurable
guidance message, and every refusal is written to an audit log.

Four match types, each on or off (``forbidden.matchTypes``):
- ``exact``: the topic's words appear in the query (case and accents ignored), or their stems in
  one of ``forbidden.languages`` (Snowball): topics may be listed in several languages, and "armes"
  refuses "une arme", "weapons" "a weapon";
- ``synonym``: a word or pair of words of the query is close to the topic (cosine ≥
  ``forbidden.synonymThreshold``): "gun" for "weapons";
- ``contextual``: the whole query is close to the topic (cosine ≥ ``forbidden.threshold``, 0.3);
- ``llm``: when no other type matched, the LLM is asked whether the query is about one of the
  topics (chat-core's allow/block rules) — in any language: the packaged embedding models are
  English-only, so a paraphrase in another language needs it.

With ``forbidden.check.mode=llm`` a match is checked by the LLM with chat-core's allow/block rules,
so that a query that only brushes against a topic is let through. The guard fails closed: if the
topics cannot be embedded or the LLM check fails or answers neither word, the query is refused.
"""

from __future__ import annotations

import json
import re
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import snowballstemmer

from ..config import ConfigError
from ..config.guard import GuardSettings
from ..errors import DatafariError
from ..llm import LlmError, LlmService, Usage
from ..prompts import PromptContext
from .pii import KINDS as PII_KINDS
from .pii import find_pii, masked

MATCH_TYPES = ("exact", "synonym", "contextual", "llm")
# forbidden.languages' codes: Snowball's stemmers (snowballstemmer.algorithms())
STEMMERS = {
    "ar": "arabic",
    "ca": "catalan",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "eu": "basque",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
}
_WORD = re.compile(r"\w+")


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.casefold())
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def _unit(vectors: list[list[float]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1, norms)


@dataclass(frozen=True)
class Match:
    topic: str
    kind: str  # exact | synonym | contextual | error
    score: float


class TopicGuard:
    def __init__(
        self,
        settings: GuardSettings,
        embed: Callable[[list[str]], list[list[float]]],
        llm: LlmService | None = None,
        audit: Path | None = None,
    ) -> None:
        self.topics = [t.strip() for t in settings.guard_topics.split(",") if t.strip()]
        self.kinds = {k.strip() for k in settings.guard_match_types.split(",") if k.strip()}
        if self.kinds - set(MATCH_TYPES):
            unknown = ", ".join(sorted(self.kinds - set(MATCH_TYPES)))
            raise ConfigError(f"forbidden.matchTypes: {unknown} (one of {', '.join(MATCH_TYPES)})")
        codes = [c.strip() for c in settings.guard_languages.split(",") if c.strip()]
        if set(codes) - set(STEMMERS):
            unknown = ", ".join(sorted(set(codes) - set(STEMMERS)))
            raise ConfigError(f"forbidden.languages: {unknown} (one of {', '.join(sorted(STEMMERS))})")
        self.languages = [STEMMERS[c] for c in codes]
        if "llm" in self.kinds and llm is None:
            raise ConfigError("forbidden.matchTypes=llm needs an LLM")
        self.topic_llm = llm if "llm" in self.kinds else None
        self.threshold = settings.guard_threshold
        self.synonym_threshold = settings.guard_synonym_threshold
        self.message = settings.guard_message
        self.llm = llm if settings.guard_check_mode == "llm" else None
        self.embed = embed
        self.audit_path = audit
        self.pii = frozenset(k.strip() for k in settings.guard_pii_types.split(",") if k.strip())
        if self.pii - set(PII_KINDS):
            unknown = ", ".join(sorted(self.pii - set(PII_KINDS)))
            raise ConfigError(f"forbidden.pii.types: {unknown} (one of {', '.join(PII_KINDS)})")
        self.pii_message = settings.guard_pii_message
        self._topic_vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def check(self, query: str, username: str | None, usage: Usage | None = None) -> None:
        """Raises ``ragForbiddenTopic`` (with the guidance message) when ``query`` must be refused:
        it holds personal data of ``forbidden.pii.types``, or it is about a forbidden topic."""
        if self.pii:
            self._check_pii(query, username)
        if not self.topics:
            return
        try:
            found = self.match(query, usage)
        except Exception as exc:  # fail closed: a query that cannot be checked is refused
            found = Match("", "error", 0.0)
            detail = repr(exc)
        else:
            detail = ""
        if found is None:
            return
        if found.kind not in ("error", "llm") and self.llm is not None and self._allowed_by_llm(self.llm, query, usage):
            self._write(query, username, found, "allowed by the LLM check")
            return
        self._write(query, username, found, "blocked" + (f": {detail}" if detail else ""))
        raise DatafariError("ragForbiddenTopic", "The question is about a forbidden topic.", message=self.message)

    def _check_pii(self, query: str, username: str | None) -> None:
        """Refuses a question that holds personal data; the audit line keeps it masked."""
        found = find_pii(query, self.pii)
        if not found:
            return
        kinds = sorted({f.kind for f in found})
        self._write(masked(query, found), username, Match(",".join(kinds), "pii", 1.0), "blocked")
        reason = f"The question holds personal data ({', '.join(kinds)})."
        raise DatafariError("ragForbiddenTopic", reason, message=self.pii_message)

    def match(self, query: str, usage: Usage | None = None) -> Match | None:
        plain = _plain(query)
        words = _WORD.findall(plain)
        if "exact" in self.kinds:
            found = self._exact(words)
            if found is not None:
                return found
        if self.kinds & {"synonym", "contextual"}:
            found = self._similar(query, words)
            if found is not None:
                return found
        if self.topic_llm is not None and not self._allowed_by_llm(self.topic_llm, query, usage):
            return Match("", "llm", 1.0)
        return None

    def _exact(self, words: list[str]) -> Match | None:
        """A topic whose words, or their stems in one of ``forbidden.languages``, are in the query."""
        stemmers = [snowballstemmer.stemmer(name) for name in self.languages]  # not shared: they keep state
        forms = [words, *(s.stemWords(words) for s in stemmers)]
        for topic in self.topics:
            wanted = _WORD.findall(_plain(topic))
            for stemmer, seen in zip([None, *stemmers], forms, strict=True):
                sought = stemmer.stemWords(wanted) if stemmer else wanted
                if sought and any(seen[i : i + len(sought)] == sought for i in range(len(seen))):
                    return Match(topic, "exact", 1.0)
        return None

    def _similar(self, query: str, words: list[str]) -> Match | None:
        topics = self._topics()
        if "contextual" in self.kinds:
            scores = _unit(self.embed([query])) @ topics.T
            best = int(np.argmax(scores[0]))
            if scores[0][best] >= self.threshold:
                return Match(self.topics[best], "contextual", float(scores[0][best]))
        if "synonym" in self.kinds and words:
            grams = list(dict.fromkeys(words + [" ".join(p) for p in pairwise(words)]))
            scores = _unit(self.embed(grams)) @ topics.T
            row, col = np.unravel_index(int(np.argmax(scores)), scores.shape)
            if scores[row][col] >= self.synonym_threshold:
                return Match(self.topics[col], "synonym", float(scores[row][col]))
        return None

    def _topics(self) -> np.ndarray:
        """The topics' embeddings, computed once."""
        with self._lock:
            if self._topic_vectors is None:
                self._topic_vectors = _unit(self.embed(self.topics))
            return self._topic_vectors

    def _allowed_by_llm(self, llm: LlmService, query: str, usage: Usage | None) -> bool:
        prompt = PromptContext(query).prompt("guard_check", topics=", ".join(self.topics))
        try:
            reply = llm.generate(prompt.messages(), usage).strip().upper()
        except LlmError:
            return False  # fail closed
        return reply.startswith("ALLOW")

    def _write(self, query: str, username: str | None, found: Match, decision: str) -> None:
        if self.audit_path is None:
            return
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "user": username,
            "query": query,
            "topic": found.topic,
            "match": found.kind,
            "score": round(found.score, 4),
            "decision": decision,
        }
        with self._lock:
            self.audit_path.parent.mkdir(parents=True, exist_ok=True)
            with self.audit_path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
