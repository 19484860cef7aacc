"""The search proxy's ``responseHeader.params``: the client's own parameters, never Solr's echo."""

from __future__ import annotations

import json

from flask import Flask

from datafari_rag.api.datafari.search import _solr_json


def test_echoed_parameters_are_the_clients_own() -> None:
    """A handler configured to force echoParams would send the ACL tokens back: Solr's echo is
    replaced by what the client sent, as Solr writes it (a list for a repeated parameter)."""
    body = {"responseHeader": {"status": 0, "params": {"acl_tokens": "group-secret", "q": "x"}}, "response": {}}
    with Flask(__name__).test_request_context("/search/select?q=pump&rows=5&fq=a&fq=b"):
        out = json.loads(_solr_json(body).get_data())
    assert out["responseHeader"] == {"status": 0, "params": {"q": "pump", "rows": "5", "fq": ["a", "b"]}}
    assert "group-secret" not in json.dumps(out)
