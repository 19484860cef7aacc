"""The sidecar's chunkers on the real Solr: the parent carries the chunks the sidecar cut and
FileShare's update processor embeds them as they are (the field is never stored). The
evaluator's rejects never reach VectorMain."""

from __future__ import annotations

import json

import pytest

from datafari_rag.chunk_fields import GIVEN_CHUNKS
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.llm import OpenAiLlmService
from datafari_rag.llm.params import LlmParams
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.fake_llm import FakeLlm
from tests.integration.test_indexing import chunks_of, parent_of

STATEMENTS = [
    "The cooling pump is checked every Monday.",
    "The cooling pump's filter is replaced every six months.",
    "Menu | Home | Contact",
    "The backup generator is tested on the first day of each month.",
]
TEXT = "The cooling pump is checked on Mondays, and its filter every six months. Menu | Home | Contact. " * 3


def scripted(prompt: str) -> str:
    if "Task: propositions" in prompt:
        return json.dumps({"propositions": STATEMENTS})
    if "Task: chunk evaluation" in prompt:
        return '{"score": 0.2}' if "Menu | Home" in prompt else '{"score": 0.97}'
    return ""


def test_proposition_chunks_judged_by_the_evaluator_are_what_vectormain_holds(
    solr: SolrClient,
    settings: Settings,
    fake_llm: FakeLlm,
    fake_llm_server: tuple[FakeLlm, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    fake_llm.answer = scripted
    mine = settings.replace(
        collection_main="chk_FileShare",
        collection_vector="chk_VectorMain",
        vector_chunker="proposition",
        vector_chunk_unit="characters",
        vector_chunk_size=70,  # one statement per chunk
        vector_chunker_evaluator=True,
        llm_endpoint=fake_llm_server[1],
    )
    bootstrap(solr, mine)
    llm = OpenAiLlmService(LlmParams.of(mine))
    indexer = Indexer.of(solr, mine, llm)
    [result] = indexer.add([{"id": "manual", "title": "Plant manual", "exactContent": TEXT}], commit=True)
    assert result.status == "ok", result
    solr.get(f"{mine.collection_vector}/update", {"commit": "true"})
    chunks = chunks_of(solr, mine, "manual")
    expected = [s for s in STATEMENTS if "Menu" not in s]
    assert [c["exactContent"] for c in chunks] == expected
    assert all(c["has_vector"] for c in chunks) and [c["chunk_count"] for c in chunks] == [3, 3, 3]
    [parent] = parent_of(solr, mine, "manual")
    assert GIVEN_CHUNKS not in parent and parent["exactContent"] == TEXT
    # written again unchanged (a repair resends it): the same chunks, none left over
    indexer.rechunk(["manual"])
    solr.get(f"{mine.collection_vector}/update", {"commit": "true"})
    assert [c["exactContent"] for c in chunks_of(solr, mine, "manual")] == expected
