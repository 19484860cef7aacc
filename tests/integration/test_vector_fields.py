"""VectorMain holds vector fields for models of several sizes, and bootstrap checks the configured
field against the configured model's dimension (the real model, through the real agent) before
any chunk is written: a field that does not exist or does not fit stops it with what to set."""

from __future__ import annotations

import pytest

from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import SchemaProblem, bootstrap, vector_fields


def test_the_vector_fields_and_the_check_of_the_configured_one(solr: SolrClient, settings: Settings) -> None:
    mine = settings.replace(collection_main="vf_FileShare", collection_vector="vf_VectorMain")
    report = bootstrap(solr, mine)
    assert vector_fields(solr, mine.collection_vector) == {
        "vector_384": 384,
        "vector_768": 768,
        "vector_1024": 1024,
        "vector_1536": 1536,
    }
    assert report.vector_field == "vector_384 (384), the model's dimension"
    assert "vector field: vector_384 (384)" in "\n".join(report.lines())
    with pytest.raises(SchemaProblem) as wrong_size:
        bootstrap(solr, mine.replace(vector_field="vector_768"))
    said = str(wrong_size.value)
    assert "gives 384-dimension vectors" in said and "holds 768" in said and "set solr.vector.field=vector_384" in said
    with pytest.raises(SchemaProblem) as missing:
        bootstrap(solr, mine.replace(vector_field="vector_999"))
    assert "has no such vector field" in str(missing.value) and "vector_768 (768)" in str(missing.value)
    # the field is VectorMain's chain's and /vector's default, through the vector.field property
    properties = solr.get(f"{mine.collection_vector}/config/overlay")["overlay"].get("userProps", {})
    assert properties.get("vector.field") == "vector_384"
