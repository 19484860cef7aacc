"""What retrieval reads of a configuration is one value, built once: retrievers read it, and the
semantic cache's scope is keyed by all of it."""

from __future__ import annotations

import dataclasses

from datafari_rag.config import Settings
from datafari_rag.retrieval.base import RetrievalContext
from datafari_rag.retrieval.cache import scope
from datafari_rag.retrieval.params import RetrievalParams
from datafari_rag.security import UserAccess
from datafari_rag.solr import SolrClient


def context(params: RetrievalParams) -> RetrievalContext:
    ctx = RetrievalContext.of(SolrClient("http://127.0.0.1:1/solr"), Settings(), UserAccess.anonymous())
    return dataclasses.replace(ctx, params=params)


def _other(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, tuple):
        return tuple(v + 1 for v in value)
    return f"{value}-other"


def test_every_parameter_changes_the_cache_scope() -> None:
    params = RetrievalParams.of(Settings())
    base = scope(context(params))
    compared = [f for f in dataclasses.fields(RetrievalParams) if f.compare]
    assert {f.name for f in compared} >= {"mode", "top_k", "max_files", "weights", "operator", "query_model"}
    for f in compared:
        changed = dataclasses.replace(params, **{f.name: _other(getattr(params, f.name))})
        assert scope(context(changed)) != base, f.name
    assert scope(context(RetrievalParams.of(Settings()))) == base  # built again: the same scope


def test_the_settings_are_read_once_into_the_parameters() -> None:
    settings = Settings(retrieval_method="bm25", max_files=7, solr_top_k=4, rrf_weight_vector_fr=0.1)
    params = RetrievalParams.of(settings)
    assert (params.mode, params.max_files, params.top_k) == ("bm25", 7, 4)
    assert params.weights_fr == (settings.rrf_weight_bm25_fr, 0.1)
    assert params.kept == 7 and dataclasses.replace(params, mode="vector").kept == 4
    deeper = params.at_least(20)
    assert (deeper.top_k, deeper.max_files, deeper.mode) == (20, 20, "bm25")
    assert params.at_least(2) == params
    deep = params.deep("rrf", 100)
    assert (deep.mode, deep.hybrid_depth, deep.top_k, deep.text_field) == ("rrf", 100, 100, "exactContent")
