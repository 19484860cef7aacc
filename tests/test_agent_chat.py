"""The local agent's chat completions: an extractive, honest answerer with OpenAI's API shape."""

from __future__ import annotations

import json

import pytest
import requests
from openai import OpenAI

from datafari_rag.agent.extractive import NOT_FOUND, parse_prompt
from datafari_rag.prompts import ABSTENTIONS, Prompt, PromptContext, partial_answer_text, snippet_text

DOCS = "\n\n".join(
    [
        snippet_text(
            "Annual leave policy",
            "Every employee is entitled to 25 days of paid annual leave per year. Requests are made in the HR portal.",
        ),
        snippet_text("Parking rules", "The underground car park is open from 6 am to 10 pm."),
    ]
)


def ask(agent_url: str, prompt: Prompt, **extra: object) -> str:
    client = OpenAI(base_url=agent_url, api_key="none")
    completion = client.chat.completions.create(
        model="datafari-rag-extractive",
        messages=prompt.messages(),  # type: ignore[arg-type]
        **extra,
    )
    return completion.choices[0].message.content or ""


def test_answers_with_the_relevant_sentence_and_its_title(agent_url: str) -> None:
    prompt = PromptContext("How many days of paid leave does an employee get?").prompt("refine_initial", snippets=DOCS)
    answer = ask(agent_url, prompt)
    assert "25 days of paid annual leave" in answer and "[Annual leave policy]" in answer
    assert "car park" not in answer


def test_says_so_when_nothing_is_relevant(agent_url: str) -> None:
    prompt = PromptContext("Which team won the 1998 football world cup?").prompt("refine_initial", snippets=DOCS)
    assert ask(agent_url, prompt) == NOT_FOUND


def test_the_abstention_sentence_follows_the_answer_language(agent_url: str) -> None:
    """The prompt asks for its sentence in the answer's language; the local agent answers with it."""
    question = "Quelle équipe a gagné la coupe du monde de football de 1998 ?"
    prompt = PromptContext(question, lang="fr").prompt("refine_initial", snippets=DOCS)
    assert f"reply exactly: {ABSTENTIONS['fr']}" in prompt.system
    assert ask(agent_url, prompt) == ABSTENTIONS["fr"] == "Je n'ai pas trouvé la réponse dans les documents."
    partials = partial_answer_text(ABSTENTIONS["fr"])  # a French "nothing" is no candidate sentence
    assert ask(agent_url, PromptContext(question, lang="fr").prompt("merge", snippets=partials)) == ABSTENTIONS["fr"]


def test_refining_keeps_the_earlier_answer_when_new_documents_do_not_help(agent_url: str) -> None:
    earlier = "Every employee is entitled to 25 days of paid annual leave per year. [Annual leave policy]"
    prompt = PromptContext("How many days of paid leave?").prompt(
        "refine_refining",
        snippets=snippet_text("Parking rules", "The car park is open from 6 am."),
        previous_answer=earlier,
    )
    assert ask(agent_url, prompt) == earlier


def test_merge_combines_partial_answers(agent_url: str) -> None:
    partials = "\n\n".join(
        partial_answer_text(p)
        for p in [
            "Every employee is entitled to 25 days of paid annual leave per year. [Annual leave policy]",
            NOT_FOUND,
        ]
    )
    prompt = PromptContext("How many days of paid leave?").prompt("merge", snippets=partials)
    assert ask(agent_url, prompt).startswith("Every employee is entitled to 25 days")


def test_rewrite_keeps_the_query_and_summaries_quote_the_document(agent_url: str) -> None:
    rewrite = PromptContext("and for parking?", history=[{"role": "user", "content": "hi"}]).prompt("rewrite_bm25")
    assert ask(agent_url, rewrite) == "0"
    summary = ask(agent_url, PromptContext("").prompt("summarize", snippets=DOCS))
    assert "25 days" in summary or "car park" in summary


def test_max_tokens_bounds_the_answer(agent_url: str) -> None:
    long_doc = snippet_text(
        "Leave", " ".join(f"Paid leave rule {i} gives employees {i} extra days off." for i in range(30))
    )
    prompt = PromptContext("What are the paid leave rules for employees?").prompt("refine_initial", snippets=long_doc)
    assert len(ask(agent_url, prompt, max_tokens=20).splitlines()) == 1


def test_streaming_follows_openai_chunks(agent_url: str) -> None:
    prompt = PromptContext("How many days of paid leave?").prompt("refine_initial", snippets=DOCS)
    client = OpenAI(base_url=agent_url, api_key="none")
    stream = client.chat.completions.create(
        model="datafari-rag-extractive",
        messages=prompt.messages(),  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == ask(agent_url, prompt)
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"messages": []},
        {"messages": [{"role": "x", "content": "a"}]},
        {"messages": [{"role": "user", "content": 3}]},
        {"messages": [{"role": "user", "content": "a"}], "max_tokens": 0},
    ],
)
def test_bad_chat_requests(agent_url: str, body: dict) -> None:
    response = requests.post(
        f"{agent_url}/chat/completions", data=json.dumps(body), headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == 400 and response.json()["error"]["message"]


def test_the_answer_reads_the_system_instructions_and_the_last_user_message(agent_url: str) -> None:
    """Earlier turns are conversation, not documents: a sentence said in the history is not quoted
    as a source, and the system message's abstention sentence is used."""
    history = [
        {"role": "user", "content": "Our company has 25 days of paid annual leave per year, I was told."},
        {"role": "assistant", "content": "Noted."},
    ]
    parking = snippet_text("Parking rules", "The underground car park is open from 6 am to 10 pm.")
    prompt = PromptContext("How many days of paid annual leave per year?", history=history).prompt(
        "refine_initial", snippets=parking
    )
    assert [m["role"] for m in prompt.messages()] == ["system", "user", "assistant", "user"]
    assert ask(agent_url, prompt) == NOT_FOUND


def test_foreign_prompts_use_the_last_line_as_the_question() -> None:
    parsed = parse_prompt("Some context.\nMore context.\nWhat is it?")
    assert parsed.question == "What is it?" and parsed.documents == [("", "Some context.\nMore context.")]
