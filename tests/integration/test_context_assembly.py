"""Context assembly on the real Solr: neighbours read from VectorMain with the user's access,
segments, duplicates, caps and the token budget, as the LLM receives them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import ConfigError, Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
TOPICS = ["boilers", "ladders", "forklifts", "chemicals", "scaffolds", "welding", "noise", "lifting"]
MANUAL = "\n\n".join(
    f"Part {i}. Rules about {topic}: every {topic} check is logged in register R{i} by the site lead."
    for i, topic in enumerate(TOPICS)
)
RESTRICTED_PART = "Part 8. Annex for the board: the lifting budget is kept in register B8."
BOARD = "Part 9. Rules about forklifts for the board: the forklift budget is kept in register B9."


@pytest.fixture(scope="module")
def ctx_settings(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("assembly")
    mine = mapped_users(settings, folder, "assembly", {"bea": ["board"], "otto": []})
    mine = mine.replace(vector_chunk_size=120, vector_chunk_unit="characters", retrieval_method="vector")
    bootstrap(solr, mine)
    docs = [
        {"id": "manual", "title": "Safety manual", "url": "file://m/manual.txt", "exactContent": MANUAL},
        {"id": "copy", "title": "Safety manual (copy)", "url": "file://m/copy.txt", "exactContent": MANUAL},
        {
            "id": "board",
            "title": "Board notes",
            "url": "file://m/board.txt",
            "exactContent": BOARD,
            "allow_token_document": ["board"],
        },
    ]
    results = Indexer.of(solr, mine).add(docs, commit=True)
    assert all(r.status == "ok" for r in results)
    chunks = solr.get(f"{mine.collection_vector}/select", params={"q": "parent_doc:manual", "rows": 0})
    assert chunks["response"]["numFound"] == len(TOPICS)  # one part per chunk
    # a chunk of the manual more restricted than the manual itself (written by another writer)
    restricted = {
        "id": "manual_8",
        "parent_doc": "manual",
        "chunk_index": len(TOPICS),
        "title": "Safety manual",
        "url": "file://m/manual.txt",
        "embedded_content": RESTRICTED_PART,
        "allow_token_document": ["board"],
    }
    solr.post(f"{mine.collection_vector}/update", json=[restricted], params={"commit": "true"})
    return mine.replace(solr_top_k=2)


@pytest.fixture
def client_for(ctx_settings: Settings, fake_llm_server: tuple[FakeLlm, str]) -> Callable[..., FlaskClient]:
    return lambda **o: create_app(ctx_settings.replace(llm_endpoint=fake_llm_server[1], **o)).test_client()


def sent(client: FlaskClient, fake: FakeLlm, query: str, user: str = "otto") -> tuple[str, dict[str, Any]]:
    fake.reset()
    response = client.post(f"{API}/ai/rag", json={"query": query}, headers={"X-Remote-User": user})
    assert response.status_code == 200, response.get_data(as_text=True)
    return fake.messages()[-1][-1]["content"], response.get_json()["content"]


def test_a_chunk_brings_its_neighbours_in_order(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    query = "Which register logs the forklifts checks?"
    alone, _ = sent(client_for(), fake_llm, query)
    assert "Part 2." in alone and "Part 1." not in alone and "Part 3." not in alone
    prompt, _ = sent(client_for(context_neighbours=1), fake_llm, query)
    window = prompt[prompt.index("Part 1.") :]
    assert window.index("Part 1.") < window.index("Part 2.") < window.index("Part 3.")
    assert "Part 0." not in prompt and "Part 4." not in prompt


def test_neighbours_never_bring_a_chunk_the_user_cannot_read(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    """Part 7's neighbour, Part 8, is a chunk only the board may read: it joins the window for
    bea, never for otto (the neighbours are read with the user's access filter)."""
    client = client_for(context_neighbours=1, solr_top_k=1)
    query = "Which register logs the lifting checks by the site lead?"
    otto, _ = sent(client, fake_llm, query, "otto")
    bea, _ = sent(client, fake_llm, query, "bea")
    assert "Part 7." in otto and "Part 6." in otto and "register B8" not in otto
    assert "Part 7." in bea and "register B8" in bea


def test_a_copy_is_dropped_and_sources_are_capped(client_for: Callable[..., FlaskClient], fake_llm: FakeLlm) -> None:
    query = "Which register logs the ladders checks?"
    _, both = sent(client_for(), fake_llm, query)
    assert {d["url"] for d in both["documents"]} == {"file://m/manual.txt", "file://m/copy.txt"}
    _, deduplicated = sent(client_for(context_dedup=True), fake_llm, query)
    assert len(deduplicated["documents"]) == 1
    prompt, capped = sent(client_for(solr_top_k=6, context_max_chunks_per_source=1), fake_llm, query)
    assert len(capped["documents"]) == 2 and prompt.count("<document") == 2


def test_the_token_budget_and_the_segment_limit_what_is_sent(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm
) -> None:
    query = "Which register logs the welding checks?"
    wide, _ = sent(client_for(solr_top_k=6), fake_llm, query)
    budget, _ = sent(client_for(solr_top_k=6, context_max_tokens=40), fake_llm, query)
    assert wide.count("<document") == 6 and budget.count("<document") == 1
    whole, _ = sent(client_for(retrieval_method="bm25", max_files=1), fake_llm, query)
    segment, _ = sent(client_for(retrieval_method="bm25", max_files=1, context_segment_max_chars=100), fake_llm, query)
    assert "Part 0." in whole and "Part 7." in whole
    assert "welding check is logged in register R5" in segment and "Part 0." not in segment


def test_a_tokenizer_that_cannot_be_read_stops_the_start(ctx_settings: Settings) -> None:
    with pytest.raises(ConfigError, match=r"context\.tokenizer"):
        create_app(ctx_settings.replace(context_max_tokens=100, context_tokenizer="/nonexistent/tokenizer.json"))


def test_chunks_of_parents_past_the_neighbour_cap_are_sent_as_found(
    client_for: Callable[..., FlaskClient], fake_llm: FakeLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neighbours are read for the first MAX_PARENTS documents in one request; the chunks of the
    others keep their own text (the manual and its copy both answer here; the cap is 1)."""
    monkeypatch.setattr("datafari_rag.retrieval.neighbours.MAX_PARENTS", 1)
    prompt, content = sent(client_for(context_neighbours=1, solr_top_k=4), fake_llm, "Which register logs ladders?")
    assert {d["url"] for d in content["documents"]} == {"file://m/manual.txt", "file://m/copy.txt"}
    assert prompt.count("Part 1.") >= 2  # the window of one, the chunk itself of the other
