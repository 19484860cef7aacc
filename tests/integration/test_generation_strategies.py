"""Generation strategies on the real Solr, with a recording fake LLM: cot, reflect, multihop, and
the confidence and citations every answer carries."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Generator
from typing import Any, ClassVar

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import board_world

API = "/Datafari/rest/v2.0"
HOLIDAYS = "file://share/hr/holidays.txt"
BONUS = "file://share/board/bonus.txt"
QUESTION = "How many days of paid annual leave do employees get?"


@pytest.fixture(scope="module")
def strategy_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    bonus = {
        "id": BONUS,
        "title": "Executive leave bonus",
        "exactContent": "Executives receive a leave bonus of ten extra days, decided by the board.",
    }
    mine = board_world(solr, settings, tmp_path_factory.mktemp("strategies"), "strategies", bonus)
    return mine.replace(retrieval_method="bm25", max_files=2)


@pytest.fixture
def client_for(strategy_settings: Settings, fake_llm_server: tuple[FakeLlm, str]) -> Callable[..., FlaskClient]:
    return lambda **o: create_app(strategy_settings.replace(llm_endpoint=fake_llm_server[1], **o)).test_client()


def by_task(answer: str, **replies: Any) -> Callable[[str], str]:
    """Replies per prompt task (a list is used in order, its last item repeating), else ``answer``."""
    queues = {task: list(r) if isinstance(r, list) else [r] for task, r in replies.items()}

    def reply(prompt: str) -> str:
        for task, queue in queues.items():
            if f"Task: {task}" in prompt:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return answer

    return reply


def ask(client: FlaskClient, query: str = QUESTION, user: str = "otto") -> dict[str, Any]:
    response = client.post(f"{API}/ai/rag", json={"query": query}, headers={"X-Remote-User": user})
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_json()
    assert body["status"] == "OK", body
    return body["content"]


def streamed(client: FlaskClient, query: str = QUESTION) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    lines = client.post(f"{API}/ai/stream", json={"query": query}, headers={"X-Remote-User": "otto"})
    events = [json.loads(x) for x in lines.get_data(as_text=True).splitlines()]
    text = "".join(e["data"]["text"] for e in events if e["type"] == "message.delta")
    [final] = [e["data"] for e in events if e["type"] == "message.final"]
    return text, final, [e["data"] for e in events if e["type"] == "phase"]


def test_every_answer_carries_confidence_and_citations_with_excerpts(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    fake_llm.reset(lambda p: "Every employee gets 25 days of paid annual leave per calendar year [1].\nSOURCES_USED: 1")
    out = ask(client_for(confidence_relevance="false"))
    assert out["confidence"] == 1.0 and out["confidence_basis"] == "lexical-support"
    [citation] = out["citations"]
    assert citation["url"] == HOLIDAYS and citation["number"] == 1 and citation["score"] > 0
    assert citation["excerpt"].startswith("Every employee is entitled to 25 days of paid annual leave")
    assert {k: citation[k] for k in ("number", "id", "title", "url")} == out["references"][0]
    assert out["reasoning_steps"] == []
    fake_llm.reset(lambda p: "The moon is made of green cheese [1].")
    assert ask(client_for())["confidence"] == 0.0  # nothing in the sources says so
    fake_llm.reset(lambda p: "I could not find the answer in the documents.")
    abstained = ask(client_for())
    assert abstained["confidence"] == 0.0 and abstained["confidence_basis"] == "no-support"


def test_the_confidence_weighs_how_well_the_answer_answers_and_below_min_confidence_it_abstains(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """Two answers the sources support whole: the one that answers the question is more confident
    (rag.confidence.relevance, on for the local generator, whose default model name the fake LLM
    is asked with). Below rag.minConfidence (0.1 by default) the abstention sentence is shown
    instead, in ai/rag and in a stream's final event, with the reason among the steps."""
    assert Settings().relevance_weighed  # the default LLM: the local extractive generator
    on_topic = "Every employee gets 25 days of paid annual leave per calendar year [1]."
    off_topic = "Requests are submitted in the HR portal at least two weeks in advance [1]."
    fake_llm.reset(lambda p: on_topic)
    answering = ask(client_for(min_confidence=0))
    fake_llm.reset(lambda p: off_topic)
    aside = ask(client_for(min_confidence=0))
    assert answering["confidence_basis"] == aside["confidence_basis"] == "lexical-support+relevance"
    assert 0 < aside["confidence"] < answering["confidence"] < 1, (aside["confidence"], answering["confidence"])
    assert aside["message"] == off_topic  # rag.minConfidence 0: every answer shown
    between = (aside["confidence"] + answering["confidence"]) / 2
    strict = client_for(min_confidence=between)
    fake_llm.reset(lambda p: on_topic)
    assert ask(strict)["message"] == on_topic
    fake_llm.reset(lambda p: off_topic)
    withdrawn = ask(strict)
    assert withdrawn["message"] == "I could not find the answer in the documents."
    assert withdrawn["references"] == [] and withdrawn["confidence"] == aside["confidence"]
    assert any("below rag.minConfidence" in step for step in withdrawn["reasoning_steps"])
    assert withdrawn["documents"]  # what was searched is still listed
    _, final, _ = streamed(strict)
    assert final["text"] == "I could not find the answer in the documents." and final["references"] == []
    # the product's default (0.1): an answer that neither the sources hold nor answers is not shown
    fake_llm.reset(lambda p: "The canteen serves lunch from noon [1].")
    assert Settings().min_confidence == 0.1
    default = ask(client_for(min_confidence=Settings().min_confidence))
    assert default["message"] == "I could not find the answer in the documents."


def test_an_llms_concise_answer_is_shown_whatever_its_distance_to_the_question(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """The relevance was fitted on the local generator's whole sentences: a concise answer of
    another LLM is far from its question in embedding space. Left to auto, it is not weighed for
    another LLM, whose answers the minimum confidence then never hides; forced on, it would have
    hidden this right one."""
    concise = "25 days [1]."
    fake_llm.reset(lambda p: concise)
    default = Settings().min_confidence
    llm = ask(client_for(llm_model="gpt-4o-mini", min_confidence=default))
    assert llm["message"] == concise and llm["references"]
    assert llm["confidence"] == 1.0 and llm["confidence_basis"] == "lexical-support"
    forced = ask(client_for(llm_model="gpt-4o-mini", min_confidence=default, confidence_relevance="true"))
    assert forced["confidence_basis"] == "lexical-support+relevance" and forced["confidence"] < default
    assert forced["message"] == "I could not find the answer in the documents."
    fake_llm.reset(lambda p: "Staff are entitled to twenty-five holidays annually [1].")  # a paraphrase
    paraphrase = ask(client_for(llm_model="gpt-4o-mini", min_confidence=default))
    assert paraphrase["confidence"] < default and paraphrase["message"].startswith("Staff are entitled")


def test_cot_returns_the_steps_apart_and_never_streams_them(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    reply = "REASONING:\n- Document 1 gives 25 days.\n- It is per calendar year.\nANSWER:\nEmployees get 25 days [1]."
    fake_llm.reset(lambda p: reply + "\nSOURCES_USED: 1")
    client = client_for(rag_strategy="cot")
    out = ask(client)
    assert out["message"] == "Employees get 25 days [1]."
    assert out["reasoning_steps"] == ["Document 1 gives 25 days.", "It is per calendar year."]
    [messages] = fake_llm.messages()
    assert "Reason step by step before answering" in messages[0]["content"]
    text, final, _ = streamed(client)
    assert text == final["text"] == "Employees get 25 days [1]." and final["reasoning_steps"] == out["reasoning_steps"]
    fake_llm.reset(lambda p: "Employees get 25 days [1].")  # a model that ignores the format: all answer
    assert ask(client)["message"] == "Employees get 25 days [1]." and ask(client)["reasoning_steps"] == []


def test_reflect_checks_the_draft_and_corrects_it(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    checks = [
        json.dumps({"statements": 2, "supported": 1, "unsupported": ["Employees also get a company car."]}),
        json.dumps({"statements": 1, "supported": 1, "unsupported": []}),
    ]
    script = {"faithfulness": checks, "correct": "Employees get 25 days of paid annual leave [1]."}
    fake_llm.reset(
        by_task("Employees get 25 days of paid annual leave [1]. Employees also get a company car.", **script)
    )
    client = client_for(rag_strategy="reflect", confidence_relevance="false")
    out = ask(client)
    assert out["message"] == "Employees get 25 days of paid annual leave [1]."
    assert out["confidence"] == 1.0 and out["confidence_basis"] == "faithfulness-check"
    assert len(out["reasoning_steps"]) == 2 and "1 of 2 statements" in out["reasoning_steps"][0]
    prompts = fake_llm.prompts()
    assert [("Task: faithfulness" in p, "Task: correct" in p) for p in prompts[1:]] == [
        (True, False),
        (False, True),
        (True, False),
    ]
    assert "company car" in prompts[2] and "25 days of paid annual leave" in prompts[1]  # the documents are read
    fake_llm.reset(
        by_task("Employees get 25 days of paid annual leave [1]. Employees also get a company car.", **script)
    )
    text, final, phases = streamed(client)
    assert text == final["text"] == out["message"]  # the draft is never shown
    assert "rag:reflect" in [p["name"] for p in phases]


def test_a_check_that_fails_keeps_the_draft(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    fake_llm.reset(by_task("Employees get 25 days [1].", faithfulness="no idea"))
    out = ask(client_for(rag_strategy="reflect", reflect_max_rounds=3))
    assert out["message"] == "Employees get 25 days [1]." and out["confidence_basis"] == "lexical-support+relevance"
    assert sum("Task: faithfulness" in p for p in fake_llm.prompts()) == 1  # no verdict: no more rounds


def test_multihop_follows_up_with_the_users_access(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    hops = [json.dumps({"followup": "executive leave bonus board"}), json.dumps({"followup": None})]
    client = client_for(rag_strategy="multihop", multihop_max_hops=3)
    fake_llm.reset(by_task("An answer [1].", multihop=hops))
    bea = ask(client, user="bea")
    assert BONUS in [d["url"] for d in bea["documents"]] and HOLIDAYS in [d["url"] for d in bea["documents"]]
    assert bea["reasoning_steps"] == ["search: executive leave bonus board"]
    assert sum("Task: multihop" in p for p in fake_llm.prompts()) == 2  # the second says enough
    fake_llm.reset(by_task("An answer [1].", multihop=hops))
    otto = ask(client, user="otto")
    assert BONUS not in [d["url"] for d in otto["documents"]]
    assert not any("ten extra days" in p for p in fake_llm.prompts())
    always = [json.dumps({"followup": q}) for q in ("remote work", "vpn", "printers", "parking")]
    fake_llm.reset(by_task("An answer [1].", multihop=always))
    bounded = ask(client_for(rag_strategy="multihop", multihop_max_hops=2))
    assert len(bounded["reasoning_steps"]) == 2  # rag.multihop.maxHops


def test_tree_of_thought_keeps_the_best_supported_branch_within_its_bounds(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """tot: branches × depth candidates, each told the ones already written, each checked; the
    best supported is the answer, every branch a reasoning step; an answer fully supported ends
    the tree early; nothing but the kept answer is shown while streaming."""
    branches = [
        "Employees get 30 days [1].",  # 1.1: half supported
        "Employees get 25 days of paid annual leave [1].",  # 1.2: fully supported
        "Employees get 25 days and a car [1].",  # 1.3
    ]
    verdicts = [
        json.dumps({"statements": 2, "supported": 1, "unsupported": ["30 days"]}),
        json.dumps({"statements": 1, "supported": 1, "unsupported": []}),
        json.dumps({"statements": 2, "supported": 1, "unsupported": ["a car"]}),
    ]
    fake_llm.reset(by_task("unused", branch=branches, faithfulness=verdicts))
    client = client_for(rag_strategy="tot", tot_branches=3, tot_depth=2)
    out = ask(client)
    assert out["message"] == "Employees get 25 days of paid annual leave [1]."
    assert out["reasoning_steps"][:3] == [
        "branch 1.1: 1 of 2 statements supported (score 0.50)",
        "branch 1.2: 1 of 1 statements supported (score 1.00)",
        "branch 1.3: 1 of 2 statements supported (score 0.50)",
    ]
    assert out["reasoning_steps"][-1] == "kept: branch 1.2" and len(out["reasoning_steps"]) == 4  # no level 2
    prompts = fake_llm.prompts()
    written = [p for p in prompts if "Task: branch" in p]
    assert len(written) == 3 and "Employees get 30 days" in written[1] and "<candidate>" not in written[0]
    assert sum("Task: faithfulness" in p for p in prompts) == 3
    # no branch fully supported: a second level, told the best so far, and no more (rag.tot.depth)
    half = json.dumps({"statements": 2, "supported": 1, "unsupported": ["x"]})
    fake_llm.reset(by_task("unused", branch=["A [1].", "B [1].", "C [1]."], faithfulness=[half]))
    deep = ask(client_for(rag_strategy="tot", tot_branches=2, tot_depth=2))
    assert sum(s.startswith("branch 2.") for s in deep["reasoning_steps"]) == 2
    assert sum("Improve on this candidate" in p for p in fake_llm.prompts()) == 2
    fake_llm.reset(by_task("unused", branch=branches, faithfulness=verdicts))
    text, final, phases = streamed(client)
    assert text == final["text"] == out["message"] and "rag:tree of thought" in [p["name"] for p in phases]


def test_a_new_answer_strategy_needs_its_entry_and_its_class_only(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONTRIBUTING.md's "Add an answer strategy", followed: a class in rag/answer_strategies.py
    with its parameter (read once by ``of``) and its part of the write step, in
    ``ANSWER_STRATEGIES``; the pipeline runs it by its name, nothing else changed. (Its Entry in
    registry.STRATEGIES is what makes rag.strategy, workflows and the OpenAPI enum accept the name;
    tests/test_registry.py holds every entry to its class.)"""
    from datafari_rag.rag import answer_strategies
    from datafari_rag.rag.generation import final_answer

    @dataclasses.dataclass(frozen=True)
    class Twice(answer_strategies.Simple):
        """Asks the LLM twice and keeps the second answer (a strategy of the recipe's shape)."""

        name: ClassVar[str] = "twice"
        rounds: int = 2

        @classmethod
        def of(cls, settings: Settings) -> Twice:
            return cls(settings.reflect_max_rounds + 1)

        def write(self, turn: Any, llm: Any, limit: int) -> Generator[Any, None, None]:
            for _ in range(self.rounds):
                turn.raw = yield from final_answer(llm, turn.final, turn.usage, stream=False)

    monkeypatch.setitem(answer_strategies.ANSWER_STRATEGIES, "twice", Twice)
    answers = ["A first draft [1].", "Every employee gets 25 days of paid annual leave per calendar year [1]."]
    fake_llm.reset(lambda p: answers.pop(0) if len(answers) > 1 else answers[0])
    out = ask(client_for(rag_strategy="twice", reflect_max_rounds=1, min_confidence=0))
    assert out["message"].startswith("Every employee gets 25 days") and len(fake_llm.messages()) == 2


def test_a_new_retrieval_mode_needs_its_entry_and_its_retriever_only(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONTRIBUTING.md's "Add a retrieval mode", followed: an Entry in registry.RETRIEVAL_MODES and
    a retriever in retrieval/ named in dispatch.py's RETRIEVERS, every Solr read through
    Collection.search; ai/rag runs it by its name, and the ACL filter holds without it asking."""
    from datafari_rag import registry
    from datafari_rag.retrieval import dispatch
    from datafari_rag.retrieval.base import RetrievalContext, Snippet, to_snippet
    from datafari_rag.solr.search import from_user

    def titles(ctx: RetrievalContext, query: str) -> list[Snippet]:
        """Documents whose title holds one of the question's words."""
        params = [from_user("q", query), ("defType", "edismax"), ("qf", "title_en")]
        params += [("fl", "id,title,url,score,exactContent"), ("rows", ctx.params.max_files)]
        return [
            to_snippet(d, "exactContent") for d in ctx.main.search("select", params, ctx.access)["response"]["docs"]
        ]

    entry = registry.Entry("titles", "documents whose title holds the question's words", returns="documents")
    modes = registry.Registry("retrieval.method", (*registry.RETRIEVAL_MODES.entries, entry))
    monkeypatch.setattr(registry, "RETRIEVAL_MODES", modes)
    monkeypatch.setitem(dispatch.RETRIEVERS, "titles", titles)
    fake_llm.reset(lambda p: "Executives receive ten extra days [1].")
    client = client_for(retrieval_method="titles", min_confidence=0)
    question = "What is the executive leave bonus?"
    assert ask(client, question, user="bea")["references"][0]["url"] == BONUS  # the board's note
    refused = client.post(f"{API}/ai/rag", json={"query": question}, headers={"X-Remote-User": "otto"}).get_json()
    assert BONUS not in json.dumps(refused)  # otto may not read it: the filter applied by itself
