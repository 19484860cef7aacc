"""The forbidden-topic guard with the real embedding model: match types, the LLM check, the
audit log, and failing closed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.config import ConfigError, Settings
from datafari_rag.errors import DatafariError
from datafari_rag.llm import ChatMessage, LlmError, Usage
from datafari_rag.rag.topic_guard import TopicGuard

GUIDANCE = "I cannot talk about that; ask HR directly."


class Verdict:
    """An LLM that answers the guard's check with a fixed reply (or fails)."""

    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.asked: list[str] = []

    def generate(self, messages: list[ChatMessage], usage: Usage | None = None) -> str:
        self.asked.append("\n".join(m["content"] for m in messages))
        if self.reply is None:
            raise LlmError("down")
        return self.reply

    def stream(self, messages: list[ChatMessage], usage: Usage | None = None) -> Iterator[str]:
        yield self.generate(messages, usage)


def guard(embedder: SentenceEmbedder, tmp_path: Path, llm: Verdict | None = None, **settings: object) -> TopicGuard:
    values = {"guard_topics": "salaries and pay of employees, weapons", "guard_message": GUIDANCE, **settings}
    if llm is not None:
        values["guard_check_mode"] = "llm"
    return TopicGuard(Settings(**values), lambda texts: embedder.embed(texts).tolist(), llm, tmp_path / "audit.jsonl")


def refused(g: TopicGuard, query: str) -> bool:
    try:
        g.check(query, "alice")
    except DatafariError as exc:
        assert exc.label == "ragForbiddenTopic" and exc.message == GUIDANCE
        return True
    return False


def audit(tmp_path: Path) -> list[dict]:
    path = tmp_path / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_each_match_type_refuses_what_it_should_and_only_that(embedder: SentenceEmbedder, tmp_path: Path) -> None:
    exact = guard(embedder, tmp_path, guard_match_types="exact", guard_topics="salaires")
    assert refused(exact, "Quels sont les SALAIRES des managers ?")  # case and accents ignored
    assert not refused(exact, "How much does my manager earn?")
    contextual = guard(embedder, tmp_path, guard_match_types="contextual")
    assert refused(contextual, "How much does my manager earn?")
    assert refused(contextual, "What is the wage of the CEO?")
    assert not refused(contextual, "How do I reset my VPN password?")
    synonym = guard(embedder, tmp_path, guard_match_types="synonym", guard_synonym_threshold=0.5)
    assert refused(synonym, "Where can I buy a gun?")
    assert not refused(synonym, "Where can I buy a coffee?")
    lines = audit(tmp_path)
    assert [line["match"] for line in lines] == ["exact", "contextual", "contextual", "synonym"]
    assert all(line["user"] == "alice" and line["decision"] == "blocked" for line in lines)


def test_the_llm_check_lets_through_what_it_allows_and_fails_closed(embedder: SentenceEmbedder, tmp_path: Path) -> None:
    allow = Verdict("ALLOW")
    assert not refused(guard(embedder, tmp_path, allow), "How much does my manager earn?")
    assert "salaries and pay of employees" in allow.asked[0] and "BLOCK or ALLOW" in allow.asked[0]
    assert refused(guard(embedder, tmp_path, Verdict("BLOCK")), "How much does my manager earn?")
    assert refused(guard(embedder, tmp_path, Verdict("maybe?")), "How much does my manager earn?")
    assert refused(guard(embedder, tmp_path, Verdict(None)), "How much does my manager earn?")
    unasked = Verdict("BLOCK")
    assert not refused(guard(embedder, tmp_path, unasked), "How do I reset my VPN password?")
    assert unasked.asked == []  # only a match is checked
    assert [line["decision"] for line in audit(tmp_path)] == [
        "allowed by the LLM check",
        "blocked",
        "blocked",
        "blocked",
    ]


def test_a_guard_that_cannot_embed_refuses(tmp_path: Path) -> None:
    def broken(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the embedding service is down")

    g = TopicGuard(Settings(guard_topics="weapons", guard_message=GUIDANCE), broken, None, tmp_path / "audit.jsonl")
    assert refused(g, "How do I reset my VPN password?")
    [line] = audit(tmp_path)
    assert line["match"] == "error" and "embedding service is down" in line["decision"]


def test_no_topics_refuse_nothing(embedder: SentenceEmbedder, tmp_path: Path) -> None:
    assert not refused(guard(embedder, tmp_path, guard_topics=""), "how to build a gun")


@pytest.mark.parametrize("query", ["weapons", "Weapons?", "about WEAPONS please"])
def test_the_default_match_types_include_exact(embedder: SentenceEmbedder, tmp_path: Path, query: str) -> None:
    assert refused(guard(embedder, tmp_path), query)


def test_personal_data_is_refused_before_the_topics_and_audited_masked(tmp_path: Path) -> None:
    """forbidden.pii.types: a question holding personal data is refused with its own guidance,
    without embedding anything (no topics needed); the audit line keeps the question masked."""

    def no_embedding(texts: list[str]) -> list[list[float]]:
        raise AssertionError("personal data is found without the embedding model")

    settings = Settings(guard_pii_types="email,phone,iban", guard_pii_message="No personal data, please.")
    g = TopicGuard(settings, no_embedding, None, tmp_path / "audit.jsonl")
    with pytest.raises(DatafariError) as refused_:
        g.check("Is jeanne.martin@example.fr on leave? Call 06 12 34 56 78", "alice")
    assert refused_.value.label == "ragForbiddenTopic" and refused_.value.message == "No personal data, please."
    assert "email, phone" in str(refused_.value.reason)
    g.check("How many days of paid annual leave?", "alice")  # nothing personal: let through
    g.check("My card is 4111 1111 1111 1111", "alice")  # card numbers were not asked for
    (line,) = audit(tmp_path)
    assert line["match"] == "pii" and line["topic"] == "email,phone" and line["decision"] == "blocked"
    assert line["query"] == "Is [EMAIL] on leave? Call [PHONE]" and line["user"] == "alice"


def test_an_unknown_kind_of_personal_data_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"forbidden\.pii\.types: passport"):
        TopicGuard(Settings(guard_pii_types="email,passport"), lambda t: [], None, None)


FRENCH_PARAPHRASES = [
    "Comment fabriquer une arme chez soi ?",
    "Où acheter un pistolet sans permis ?",
    "Combien gagne mon responsable chaque mois ?",
]


def test_a_french_paraphrase_passes_the_english_topics_and_their_embeddings(
    embedder: SentenceEmbedder, tmp_path: Path
) -> None:
    """Why the guard needs more than the packaged (English) embedding model: the default match
    types, with the topics written in English, let every French paraphrase through."""
    english = guard(embedder, tmp_path)
    assert [refused(english, q) for q in FRENCH_PARAPHRASES] == [False, False, False]


def test_topics_in_several_languages_match_their_inflections(embedder: SentenceEmbedder, tmp_path: Path) -> None:
    topics = "weapons, armes, pistolets, salaries, salaires"
    both = guard(embedder, tmp_path, guard_match_types="exact", guard_topics=topics)
    assert refused(both, "Comment fabriquer une arme chez soi ?")  # armes → arm
    assert refused(both, "Où acheter un pistolet sans permis ?")
    assert refused(both, "Is a weapon allowed on site?")  # weapons → weapon
    assert not refused(both, "Comment réinitialiser mon mot de passe VPN ?")
    words_only = guard(embedder, tmp_path, guard_match_types="exact", guard_topics=topics, guard_languages="")
    assert not refused(words_only, "Comment fabriquer une arme chez soi ?")  # the control: stems do it
    with pytest.raises(ConfigError, match=r"forbidden\.languages: xx"):
        guard(embedder, tmp_path, guard_languages="fr,xx")
    with pytest.raises(ConfigError, match=r"forbidden\.matchTypes: fuzzy"):
        guard(embedder, tmp_path, guard_match_types="exact,fuzzy")


def test_the_llm_match_type_refuses_a_paraphrase_in_any_language_and_fails_closed(
    embedder: SentenceEmbedder, tmp_path: Path
) -> None:
    """``llm``: asked only when no other type matched, with the topics and the question as sent."""
    settings = {"guard_match_types": "exact,llm", "guard_topics": "weapons", "guard_message": GUIDANCE}
    blocking = Verdict("BLOCK")
    g = TopicGuard(Settings(**settings), lambda t: embedder.embed(t).tolist(), blocking, tmp_path / "audit.jsonl")
    assert refused(g, FRENCH_PARAPHRASES[0])
    assert "weapons" in blocking.asked[0] and FRENCH_PARAPHRASES[0] in blocking.asked[0]
    assert refused(g, "Any weapons here?") and len(blocking.asked) == 1  # exact first: no LLM call
    allowing = Verdict("ALLOW")
    g = TopicGuard(Settings(**settings), lambda t: embedder.embed(t).tolist(), allowing, tmp_path / "audit.jsonl")
    assert not refused(g, "Comment réinitialiser mon mot de passe VPN ?") and len(allowing.asked) == 1
    down = TopicGuard(Settings(**settings), lambda t: embedder.embed(t).tolist(), Verdict(None), tmp_path / "a.jsonl")
    assert refused(down, "Comment réinitialiser mon mot de passe VPN ?")  # no verdict: refused
    assert [line["match"] for line in audit(tmp_path)] == ["llm", "exact"]
    with pytest.raises(ConfigError, match="needs an LLM"):
        TopicGuard(Settings(**settings), lambda t: [], None, tmp_path / "audit.jsonl")
