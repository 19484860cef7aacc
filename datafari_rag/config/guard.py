"""The FAQ that answers before retrieval, and the forbidden-topic guard."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import GUARD, key


@dataclass(frozen=True)
class FaqSettings:
    """The FAQ (faq.*): curated answers given before retrieval or the LLM."""

    faq_enabled: bool = key(
        GUARD,
        "faq.enabled",
        False,
        "Answer a question close enough to a curated FAQ entry's with that entry, before retrieval or the LLM "
        "(chat-core's FAQ); the entries are FileShare documents of type_category faq.category, ACL-filtered.",
    )
    faq_category: str = key(GUARD, "faq.category", "faq", "The type_category of FAQ entries (title: the question).")
    faq_threshold: float = key(
        GUARD,
        "faq.threshold",
        0.8,
        "The cosine similarity of a question and an entry's question that answers it with the entry.",
        maximum=1,
    )
    faq_model_name: str = key(
        GUARD,
        "faq.modelName",
        "all-MiniLM-L6-v2",
        "The model of the embedding service (solr.embeddings.*) that compares questions with the entries'.",
    )


@dataclass(frozen=True)
class GuardSettings:
    """The forbidden-topic guard (forbidden.*)."""

    guard_enabled: bool = key(GUARD, "forbidden.enabled", False, "Refuse questions about forbidden topics.")
    guard_topics: str = key(GUARD, "forbidden.topics", "", "The forbidden topics or terms, comma-separated.")
    guard_match_types: str = key(
        GUARD,
        "forbidden.matchTypes",
        "exact,synonym,contextual",
        "How a question matches a topic, comma-separated: exact (its words, inflections of forbidden.languages "
        "included), synonym (a word or pair of words close to the topic), contextual (the whole question close "
        "to the topic), llm (the LLM says whether the question, in any language, is about a topic).",
    )
    guard_languages: str = key(
        GUARD,
        "forbidden.languages",
        "en,fr",
        "exact: the languages whose inflections match (Snowball stemmers, ISO 639-1 codes, comma-separated): "
        "'armes' in the topics refuses 'une arme'.",
    )
    guard_threshold: float = key(
        GUARD, "forbidden.threshold", 0.3, "contextual: the cosine similarity of question and topic that refuses."
    )
    guard_synonym_threshold: float = key(
        GUARD, "forbidden.synonymThreshold", 0.6, "synonym: the cosine similarity of a word and the topic that refuses."
    )
    guard_model_name: str = key(
        GUARD,
        "forbidden.modelName",
        "all-MiniLM-L6-v2",
        "The model of the embedding service (solr.embeddings.*) that compares questions with the topics; the "
        "thresholds are calibrated for all-MiniLM-L6-v2 (bge-small-en-v1.5 puts unrelated texts at 0.3 to 0.5).",
    )
    guard_check_mode: str = key(
        GUARD,
        "forbidden.check.mode",
        "similarity",
        "similarity: a match refuses; llm: a match is checked by the LLM (BLOCK or ALLOW), refused if the check fails.",
        choices=("similarity", "llm"),
    )
    guard_message: str = key(
        GUARD,
        "forbidden.message",
        "Sorry, I cannot answer questions on this topic. Please contact the person in charge of it.",
        "The guidance message a refused question gets.",
    )
    guard_audit_file: str = key(
        GUARD, "forbidden.auditFile", "", "Where refusals are written (JSON lines); empty: var/log/guard-audit.jsonl."
    )
    guard_pii_types: str = key(
        GUARD,
        "forbidden.pii.types",
        "",
        "Personal data a question may not hold (with forbidden.enabled), comma-separated: email, phone, iban, "
        "card, national_id (French NIR, US SSN); empty: not looked for. Checked by validators, before the topics.",
    )
    guard_pii_message: str = key(
        GUARD,
        "forbidden.pii.message",
        "Sorry, your question holds personal data. Please ask it again without it.",
        "The guidance message a question holding personal data gets.",
    )
