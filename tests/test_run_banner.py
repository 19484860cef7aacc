"""What `datafari-rag run` says of an external LLM, from /health's report of it."""

from __future__ import annotations

from datafari_rag.cli import llm_warning


def test_an_llm_that_does_not_answer_or_lacks_the_model_is_told_and_a_good_one_is_not() -> None:
    url = "https://llm.example/v1"
    down = llm_warning({"url": url, "model": "m", "status": "DOWN", "error": "HTTP 401: ai.api.token is refused"})
    assert down == (
        f"The LLM at {url} does not answer (HTTP 401: ai.api.token is refused): answers will fail until "
        "ai.api.endpoint and ai.api.token are right."
    )
    unlisted = llm_warning({"url": url, "model": "datafari-rag-extractive", "status": "UP", "modelListed": False})
    assert unlisted == (
        f"The LLM at {url} does not list the model 'datafari-rag-extractive': set llm.model to one it serves."
    )
    assert llm_warning({"url": url, "model": "gpt-4o-mini", "status": "UP", "modelListed": True}) is None
    assert llm_warning({"url": url, "model": "m", "status": "UNCHECKED", "error": "HTTP 404"}) is None
    assert llm_warning(None) is None  # the local agent: no llm part
