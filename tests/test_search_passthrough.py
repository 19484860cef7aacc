"""The search proxy passes Solr's JSON through unparsed, but never echoed request parameters."""

from __future__ import annotations

import json

from datafari_rag.api.search import _solr_json


def test_solr_bytes_pass_through_unchanged() -> None:
    body = b'{\n  "responseHeader":{"status":0,"QTime":1},\n  "response":{"numFound":0,"docs":[]}}'
    assert _solr_json(body).get_data() == body


def test_echoed_parameters_are_removed() -> None:
    """A handler configured to force echoParams would send the ACL tokens back: they are dropped."""
    body = {"responseHeader": {"status": 0, "params": {"acl_tokens": "group-secret"}}, "response": {"docs": []}}
    out = _solr_json(json.dumps(body).encode()).get_data()
    assert b"group-secret" not in out and json.loads(out)["response"] == {"docs": []}
