"""The local runtime with a security.json, and the sidecar's Solr client with Basic auth."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient, SolrError, admin
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.runtime import LocalSolr
from datafari_rag.solr.security_json import credential
from datafari_rag.testing.servers import free_port


@pytest.mark.skipif(bool(os.environ.get("DATAFARI_RAG_SOLR_URL")), reason="needs the local runtime")
def test_local_solr_with_basic_auth(tmp_path: Path, agent_url: str) -> None:
    security = {
        "authentication": {
            "class": "solr.BasicAuthPlugin",
            "blockUnknown": True,
            "credentials": {"sidecar": credential("s3cret-pass")},
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
        assert sorted(bootstrap(client, settings).created) == ["FileShare", "VectorMain"]
    finally:
        node.stop()


def _ids(client: SolrClient, collection: str, params: dict[str, str]) -> set[str]:
    found = client.get(f"{collection}/select", {"q": "*:*", "fl": "id", "rows": "100", **params})
    return {d["id"] for d in found["response"]["docs"]}


@pytest.mark.skipif(bool(os.environ.get("DATAFARI_RAG_SOLR_URL")), reason="needs the local runtime")
def test_only_the_service_account_may_name_another_user(tmp_path: Path, agent_url: str) -> None:
    """Solr authenticates (BasicAuth) and authorizes (rules): anyone may search /select and
    /vector, filtered; only the sidecar's service account may name the user it speaks for; another
    Solr user is filtered as themself, an anonymous client as anonymous; the unfiltered handlers
    (/internal, /get) are the service account's alone."""
    node = LocalSolr(port=free_port(), home=tmp_path / "home")
    node.start(timeout=180)
    try:
        settings = Settings(
            solr_url=node.url, solr_username="datafari-rag", solr_password="svc-pass", embeddings_endpoint=agent_url
        )
        # a Solr with no authentication: bootstrap --secure installs the product's security.json
        report = bootstrap(SolrClient(node.url), settings, secure=True)
        assert report.security == "installed (BasicAuth, rule-based authorization)"
        with pytest.raises(SolrError) as refused:
            SolrClient(node.url).get("admin/collections", {"action": "LIST"})
        assert refused.value.status == 401
        service = SolrClient(node.url, auth=("datafari-rag", "svc-pass"))
        # an administrator adds another Solr user; bootstrap --secure again keeps them and adds nothing
        service.post("admin/authentication", json={"set-user": {"bob": "bob-pass"}})
        again = bootstrap(SolrClient(node.url), settings, secure=True)  # conf/acl-mapping.json: alice, bob
        assert again.security == "updated: datafari-rag has role datafari-rag-service; 0 permission(s) added"
        docs = [
            {"id": "pub", "exactContent": "A public notice about the canteen menu."},
            {"id": "hr", "exactContent": "Salary review notes.", "allow_token_document": ["hr-managers"]},
            {"id": "staff", "exactContent": "Staff rota for December.", "allow_token_document": ["staff"]},
        ]
        service.post("FileShare/update", json=docs, params={"commit": "true"})
        alice = {"AuthenticatedUserName": "alice"}
        assert _ids(service, "FileShare", alice) == {"pub", "hr", "staff"}
        assert _ids(service, "FileShare", {}) == {"pub"}
        bob = SolrClient(node.url, auth=("bob", "bob-pass"))
        assert _ids(bob, "FileShare", alice) == {"pub", "staff"}  # filtered as bob, whoever he names
        anonymous = SolrClient(node.url)
        assert _ids(anonymous, "FileShare", alice) == {"pub"}
        assert _ids(anonymous, "FileShare", {"fq": "*:*", **alice}) == {"pub"}
        for path, params in (("FileShare/internal", {"q": "*:*"}), ("FileShare/get", {"id": "hr"})):
            for client in (anonymous, bob):
                with pytest.raises(SolrError) as refused:
                    client.get(path, params)
                assert refused.value.status in (401, 403)
    finally:
        node.stop()
