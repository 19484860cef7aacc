"""The HTTP contract is declared once, on the views: the OpenAPI document, the parameters a view
accepts, the refusals of its body and which endpoints need no identity all come from it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from datafari_rag.api.datafari.search import RAG_SELECT_PARAMS, SEARCH_PARAMS, VECTOR_PARAMS, select, vector
from datafari_rag.api.http.contract import contract_of, names
from datafari_rag.api.http.openapi import document, operations
from datafari_rag.api.http.shapes import MAX_QUERY, AiBody, RagBody, Reading, SummarizeBody, rag_request
from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.errors import DatafariError


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app(Settings())


SETTINGS = Settings()


def test_every_route_declares_its_contract(app: Flask) -> None:
    undeclared = [f"{rule.rule} {method}" for rule, method, contract in operations(app) if contract is None]
    assert undeclared == []
    paths = document(app, 4000)["paths"]
    assert sum(len(item) for item in paths.values()) == len(list(operations(app))) > 40


def test_a_route_without_a_contract_stops_the_document(app: Flask) -> None:
    bare = Flask("bare")
    bare.add_url_rule("/nothing", "nothing", lambda: "")
    with pytest.raises(LookupError, match="/nothing"):
        document(bare, 4000)


def test_the_endpoints_without_identity_are_exactly_these(app: Flask) -> None:
    """The security list: a view is public only by its contract, and these are all of them."""
    public = {rule.endpoint for rule, _, contract in operations(app) if contract is not None and contract.public}
    assert public == {
        "health.health",
        "health.alive",
        "metrics.scrape",
        "openapi.openapi",
        "users.login",
        "ui.index",
        "ui.static",
        "resource_metadata.protected_resource",
        "oauth_sign_in.page",
        "oauth_sign_in.sign_in",
        "datafari_v1.login_link",
    }
    paths = document(app, 4000)["paths"]
    assert "security" not in paths["/Datafari/rest/v2.0/ai/rag"]["post"]
    assert paths["/health/live"]["get"]["security"] == []


def test_the_parameters_documented_are_those_the_views_accept() -> None:
    select_contract, vector_contract = contract_of(select), contract_of(vector)
    assert select_contract is not None and vector_contract is not None
    assert names(select_contract.params) == SEARCH_PARAMS | RAG_SELECT_PARAMS
    assert names(vector_contract.params) == VECTOR_PARAMS


def test_the_configured_longest_query_is_in_the_document(app: Flask) -> None:
    schemas = document(app, 1234)["components"]["schemas"]
    assert schemas["RagBody"]["properties"]["query"]["maxLength"] == 1234
    assert schemas["RagBody"]["required"] == ["query"]
    assert MAX_QUERY not in json.dumps(schemas)  # no placeholder left


def _refusal(model: type[Any], body: dict[str, Any], label: str = "ragBadRequest") -> DatafariError:
    with pytest.raises(DatafariError) as error:
        model.model_validate(body, context=Reading(label, 50))
    return error.value


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({}, "'query' is required and must be a string."),
        ({"query": 3}, "'query' is required and must be a string."),
        ({"query": "x" * 51}, "'query' is longer than 50 characters."),
        ({"query": "q", "lang": "zz"}, "'lang' must be an ISO 639-1 language code (en, fr, de…)."),
        ({"query": "q", "history": [{"role": "bot", "content": "x"}]}, "'history[0]' must be"),
        ({"query": "q", "format": "poem"}, "'format' must be one of"),
        ({"query": "q", "search_type": "web"}, "'search_type' must be one of rag, gpt, agentic, pa."),
        ({"query": "q", "prompt": ""}, "'prompt' is empty."),
    ],
)
def test_an_answer_body_is_refused_with_its_parser_sentence(body: dict[str, Any], said: str) -> None:
    error = _refusal(RagBody, body)
    assert error.label == "ragBadRequest" and said in str(error.reason)


def test_an_answer_body_is_read_as_the_pipeline_request() -> None:
    body = {"query": "pumps", "lang": "FR_ca", "format": "default", "history": [{"role": "user", "message": "hi"}]}
    rag, keep = rag_request(body | {"unknown": 1}, SETTINGS, "en")  # 6.2 ignores fields it does not know
    assert (rag.query, rag.lang, rag.format, rag.mode, keep) == ("pumps", "fr", None, "rag", True)
    assert rag.history == [{"role": "user", "content": "hi"}]
    assert rag_request({"query": "pumps"}, SETTINGS, "de")[0].lang == "de"  # Accept-Language's, when absent


# chat-core's example request, field for field
CHAT_CORE = {
    "query": "What is the leave policy?",
    "room_id": None,
    "user_id": "someone-else",
    "collection_name": "FileShare",
    "search_type": "rag",
    "metadata_filter_key": "extension",
    "metadata_filter_values": ["pdf", "docx"],
    "top_k": 4,
    "temperature": 0.3,
    "use_paragraph": False,
    "is_test": True,
}


def test_chat_cores_request_is_read_field_for_field() -> None:
    from datafari_rag.api.datafari.ai import KNOWN

    assert set(CHAT_CORE) <= KNOWN and set(CHAT_CORE) <= set(RagBody.model_fields)
    rag, keep = rag_request(CHAT_CORE, SETTINGS, None)
    assert (rag.top_k, rag.temperature, rag.whole_documents, keep) == (4, 0.3, True, False)
    assert rag.filters.values == {"extension": ("pdf", "docx")}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"collection_name": "Other"}, "'collection_name' names no collection"),
        ({"metadata_filter_key": "allow_token_document"}, "'metadata_filter_key' is one of"),
        ({"metadata_filter_values": None}, "together"),
        ({"metadata_filter_values": []}, "1 to 1000 strings"),
        ({"top_k": 0}, "'top_k' is a whole number from 1 to 50"),
        ({"top_k": True}, "'top_k'"),
        ({"temperature": 2.5}, "'temperature' is a number from 0 to 2"),
        ({"use_paragraph": "no"}, "'use_paragraph' is true or false"),
        ({"is_test": 1}, "'is_test' is true or false"),
        ({"user_id": 5}, "'user_id' is a string"),
    ],
)
def test_a_bad_chat_core_field_is_refused_with_a_sentence(change: dict[str, object], said: str) -> None:
    with pytest.raises(DatafariError) as refused:
        rag_request(CHAT_CORE | change, SETTINGS, None)
    assert refused.value.label == "ragBadRequest" and said in str(refused.value.reason)


def test_collection_name_accepts_the_collection_and_its_aliases_only() -> None:
    from datafari_rag.api.http.chat_core import collections

    mine = SETTINGS.replace(collection_main="hr_FileShare", chat_collection_aliases="hr, people")
    assert collections(mine) == {"hr_FileShare", "hr", "people"}


def test_a_summary_body_refuses_with_its_own_label() -> None:
    assert _refusal(SummarizeBody, {"id": "d", "lang": 5}, "summarizationBadRequest").label == (
        "summarizationBadRequest"
    )
    assert SummarizeBody.model_validate({"id": "d"}, context=Reading("summarizationBadRequest", 1)).id == "d"


def test_a_body_read_without_its_reading_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        RagBody.model_validate({"query": "q"})


def test_the_ai_body_lists_every_field_ai_reads() -> None:
    from datafari_rag.api.datafari.ai import KNOWN

    assert KNOWN == set(AiBody.model_fields) >= {"query", "q", "action", "filters", "memoryId", "room_id"}


def test_chat_cores_pa_mode_is_the_agentic_mode() -> None:
    assert rag_request({"query": "pumps", "search_type": "pa"}, SETTINGS, None)[0].mode == "agentic"
