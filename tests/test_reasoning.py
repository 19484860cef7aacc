"""The strategies' parsing and the confidence measure, without Solr."""

from __future__ import annotations

import math
import random

import pytest

from datafari_rag.config import Settings
from datafari_rag.rag.citations import citations
from datafari_rag.rag.confidence import RELEVANCE, confidence, is_abstention, lexical_support, relevance
from datafari_rag.rag.reasoning import AnswerAfterReasoning, split_reasoning


def test_split_reasoning_takes_the_steps_out() -> None:
    text = "REASONING:\n- one\n2) two\n\n**ANSWER:** The answer [1].\nSOURCES_USED: 1"
    assert split_reasoning(text) == (["one", "two"], "The answer [1].\nSOURCES_USED: 1")
    assert split_reasoning("Just an answer.") == ([], "Just an answer.")


@pytest.mark.parametrize("seed", range(20))
def test_the_stream_filter_shows_exactly_the_answer_whatever_the_pieces(seed: int) -> None:
    text = "REASONING:\n- a step\n- another\nANSWER:\nThe answer is 25 days [1]."
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), 8))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    f = AnswerAfterReasoning()
    shown = "".join(f.feed(p) for p in pieces) + f.finish()
    assert shown == split_reasoning(text)[1]
    plain = AnswerAfterReasoning()
    assert "".join(plain.feed(p) for p in ["No ", "format."]) + plain.finish() == "No format."


def test_lexical_support_counts_sentences_the_sources_hold() -> None:
    sources = ["Every employee is entitled to 25 days of paid annual leave per calendar year."]
    assert lexical_support("Employees are entitled to paid annual leave [1].", sources) == 1.0
    half = "Employees are entitled to paid annual leave [1]. Managers receive company helicopters."
    assert lexical_support(half, sources) == 0.5
    assert confidence(half, sources, None, False) == (0.5, "lexical-support")
    assert confidence(half, sources, 0.75, False) == (0.75, "faithfulness-check")
    assert confidence(half, [], None, False) == (0.0, "no-support")


def test_an_abstention_is_recognised_only_as_the_whole_sentence() -> None:
    sentence = "I could not find the answer in the documents."
    assert is_abstention("I could not find the answer in the documents", sentence)
    assert not is_abstention("I could not find the answer in the documents, but [1] says 25 days.", sentence)


def test_a_citation_excerpt_is_the_sentence_closest_to_the_answer() -> None:
    sources = [{"id": "d1", "title": "Leave", "url": "u1"}, {"id": "d2", "title": "VPN", "url": "u2"}]
    passages = [
        ("u1", "Requests go through the HR portal. Unused days can be carried over until March.", 3.5),
        ("u1", "Every employee is entitled to 25 days of paid annual leave.", 4.0),
        ("u2", "Install the VPN client.", 1.0),
    ]
    [cited] = citations("Unused days are carried over until March [1].", sources, passages)
    assert cited == {
        "number": 1,
        "id": "d1",
        "title": "Leave",
        "url": "u1",
        "excerpt": "Unused days can be carried over until March.",
        "score": 4.0,
    }


def test_relevance_is_the_fitted_chance_an_answer_answers_its_question() -> None:
    """Closer to the question and holding more of its words: more likely right; the citation
    numbers are not part of what is embedded."""
    embedded: list[list[str]] = []

    def embed_at(cosine: float):
        def embed(texts: list[str]) -> list[list[float]]:
            embedded.append(texts)
            return [[1.0, 0.0], [cosine, (1 - cosine**2) ** 0.5]]

        return embed

    question = "How many days of paid leave do employees get?"
    on_topic = "Employees get 25 days of paid leave [1]."
    near, far = relevance(question, on_topic, embed_at(0.9)), relevance(question, on_topic, embed_at(0.6))
    assert 0 < far < near < 1 and embedded[0] == [question, "Employees get 25 days of paid leave."]
    off_words = relevance(question, "The canteen opens at noon [2].", embed_at(0.9))
    assert off_words < near
    intercept, by_cosine, by_words = RELEVANCE
    expected = 1 / (1 + math.exp(-(intercept + by_cosine * 0.9 + by_words * 1.0)))
    assert relevance(question, "Employees get paid leave days, many.", embed_at(0.9)) == pytest.approx(expected)
    # the confidence is the support times the relevance, and says so
    sources = ["Every employee gets 25 days of paid leave."]
    assert confidence(on_topic, sources, None, False, 0.5) == (0.5, "lexical-support+relevance")
    assert confidence(on_topic, sources, 0.8, False, 0.5) == (0.4, "faithfulness-check+relevance")
    assert confidence(on_topic, sources, None, True, 0.9) == (0.0, "no-support")


@pytest.mark.parametrize(
    ("changes", "weighed"),
    [
        ({}, True),  # the local agent's extractive generator, where it was fitted
        ({"llm_model": "gpt-4o-mini"}, False),
        ({"agent_generator": "gguf"}, False),
        ({"llm_model": "gpt-4o-mini", "confidence_relevance": "true"}, True),
        ({"confidence_relevance": "false"}, False),
    ],
)
def test_the_relevance_is_weighed_by_default_only_for_the_generator_it_was_fitted_on(
    changes: dict[str, str], weighed: bool
) -> None:
    assert Settings(**changes).relevance_weighed is weighed
