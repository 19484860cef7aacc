"""The local runtime with a security.json, and the sidecar's Solr client with Basic auth."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient, SolrError, admin
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.runtime import LocalSolr
from datafari_rag.testing.servers import free_port


def basic_auth_credential(password: str) -> str:
    """Solr's Sha256AuthenticationProvider format: base64(sha256(sha256(salt + password))) salt."""
    salt = os.urandom(32)
    digest = hashlib.sha256(hashlib.sha256(salt + password.encode()).digest()).digest()
    return f"{base64.b64encode(digest).decode()} {base64.b64encode(salt).decode()}"


@pytest.mark.skipif(bool(os.environ.get("DATAFARI_RAG_SOLR_URL")), reason="needs the local runtime")
def test_local_solr_with_basic_auth(tmp_path: Path, agent_url: str) -> None:
    security = {
        "authentication": {
            "class": "solr.BasicAuthPlugin",
            "blockUnknown": True,
            "credentials": {"sidecar": basic_auth_credential("s3cret-pass")},
        },
        "authorization": {
            "class": "solr.RuleBasedAuthorizationPlugin",
            "user-role": {"sidecar": "admin"},
            "permissions": [{"name": "all", "role": "admin"}],
        },
    }
    (tmp_path / "security.json").write_text(json.dumps(security))
    node = LocalSolr(port=free_port(), home=tmp_path / "home", security_json=tmp_path / "security.json")
    node.start(timeout=180)
    try:
        with pytest.raises(SolrError) as refused:
            admin.system_info(SolrClient(node.url))
        assert refused.value.status == 401
        with pytest.raises(SolrError):
            admin.system_info(SolrClient(node.url, auth=("sidecar", "wrong")))
        client = SolrClient(node.url, auth=("sidecar", "s3cret-pass"))
        assert admin.system_info(client)["version"] == "9.10.1"
        settings = Settings(
            solr_url=node.url, solr_username="sidecar", solr_password="s3cret-pass", embeddings_endpoint=agent_url
        )
        assert bootstrap(client, settings).created == ["FileShare", "VectorMain"]
    finally:
        node.stop()
