"""Opening, previewing and describing documents as DatafariUI does, on the real Solr: every read
with the user's filter, the same 404 for a missing document and one the user may not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import EVERY_TOKEN, layers_off
from tests.integration.conftest import mapped_users

API = "/Datafari/rest/v2.0"
V1 = "/Datafari/rest/v1.0"
HR = {"allow_token_document": ["team-hr"]}
DOCS = [
    ("doc-public", "file://share/public.txt", {}),
    ("doc-hr", "file://share/hr/salaries.txt", HR),
    ("doc-web", "https://intranet.example/pump.html", {}),
    ("doc-web-hr", "https://intranet.example/hr.html", HR),
]


@pytest.fixture(scope="module")
def client(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> FlaskClient:
    folder: Path = tmp_path_factory.mktemp("dui")
    users = {"hana": ["team-hr"], "otto": [], EVERY_TOKEN: ["team-hr"]}  # the last: for the control
    mine = mapped_users(settings, folder, "dui", users)
    bootstrap(solr, mine)
    docs = [
        {
            "id": doc_id,
            "title": f"Pump note {doc_id}",
            "url": url,
            "author": ["alice"],
            "last_modified": "2026-11-01T10:00:00Z",
            "exactContent": f"The cooling pump of {doc_id} needs a new gasket. Second sentence of {doc_id}.",
            **acl,
        }
        for doc_id, url, acl in DOCS
    ]
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(docs, commit=True))
    return create_app(mine).test_client()


def as_user(user: str | None) -> dict[str, str]:
    return {"X-Remote-User": user} if user else {}


def select(client: FlaskClient, params: dict[str, Any], user: str | None = None) -> dict[str, Any]:
    response = client.get(f"{API}/search/select", query_string=params, headers=as_user(user))
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def test_every_result_links_to_the_document_and_the_link_opens_it(client: FlaskClient) -> None:
    docs = select(client, {"q": "cooling pump", "rows": 10}, "hana")["response"]["docs"]
    links = {d["id"]: d["click_url"] for d in docs}
    assert set(links) == {d[0] for d in DOCS}
    assert links["doc-hr"] == "/Datafari/URL?id=doc-hr"
    # DatafariUI appends the search and the position: they change nothing
    opened = client.get(f"{links['doc-hr']}&q=cooling%20pump&position=2", headers=as_user("hana"))
    assert opened.status_code == 200 and opened.mimetype == "text/plain"
    assert "needs a new gasket" in opened.get_data(as_text=True)
    assert "salaries.txt" in opened.headers["Content-Disposition"]
    web = client.get(links["doc-web"], headers=as_user("hana"))
    assert web.status_code == 302 and web.headers["Location"] == "https://intranet.example/pump.html"


def test_a_document_the_user_may_not_read_is_not_found_like_a_missing_one(client: FlaskClient) -> None:
    for doc_id in ("doc-hr", "doc-web-hr"):
        hidden = client.get("/Datafari/URL", query_string={"id": doc_id}, headers=as_user("otto"))
        missing = client.get("/Datafari/URL", query_string={"id": "no-such-doc"}, headers=as_user("otto"))
        assert hidden.status_code == missing.status_code == 404
        assert hidden.get_json() == missing.get_json() and hidden.get_json()["content"]["error"]["label"] == (
            "documentNotFound"
        )
        assert "gasket" not in hidden.get_data(as_text=True) and "Location" not in hidden.headers
    by_url = client.get("/Datafari/URL", query_string={"url": "file://share/hr/salaries.txt"}, headers=as_user("otto"))
    assert by_url.status_code == 404
    assert client.get("/Datafari/URL", query_string={"url": "file://share/public.txt"}).status_code == 200
    assert client.get("/Datafari/URL").status_code == 400


def test_a_citation_opens_its_passage_highlighted_for_its_readers_only(client: FlaskClient) -> None:
    """``passage`` (the cited chunk, its spaces and punctuation as sent to the LLM): a page with the
    passage marked (escaped, under a policy that runs nothing), or JSON with where it is; a web
    document redirects, or answers JSON; otto gets the same 404 for the HR document as for none."""
    passage = {"id": "doc-hr", "passage": "The  cooling pump of doc-hr needs a new gasket."}
    page = client.get("/Datafari/URL", query_string=passage, headers=as_user("hana"))
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert '<mark id="passage">The cooling pump of doc-hr needs a new gasket.</mark>' in html
    assert "default-src 'none'" in page.headers["Content-Security-Policy"] and "<script" not in html
    as_json = {**as_user("hana"), "Accept": "application/json"}
    document = client.get("/Datafari/URL", query_string=passage, headers=as_json).get_json()["content"]["document"]
    start, end = document["passage"]["start"], document["passage"]["end"]
    assert document["text"][start:end] == "The cooling pump of doc-hr needs a new gasket."
    unknown = client.get("/Datafari/URL", query_string={**passage, "passage": "words found nowhere"}, headers=as_json)
    assert unknown.get_json()["content"]["document"]["passage"] is None
    web = {"id": "doc-web", "passage": "cooling pump"}
    assert client.get("/Datafari/URL", query_string=web, headers=as_user("hana")).status_code == 302
    assert client.get("/Datafari/URL", query_string=web, headers=as_json).get_json()["content"]["document"]["url"] == (
        "https://intranet.example/pump.html"
    )
    missing = client.get("/Datafari/URL", query_string={**passage, "id": "no-such-doc"}, headers=as_user("otto"))
    for accept in ("text/html", "application/json"):
        hidden = client.get("/Datafari/URL", query_string=passage, headers={**as_user("otto"), "Accept": accept})
        assert hidden.status_code == 404 and hidden.get_json() == missing.get_json()
        assert "gasket" not in hidden.get_data(as_text=True)
    too_long = client.get("/Datafari/URL", query_string={**passage, "passage": "x" * 4001}, headers=as_user("hana"))
    assert too_long.status_code == 400 and too_long.get_json()["content"]["error"]["label"] == "badRequest"


def test_a_preview_gets_every_property_and_the_text_as_datafariui_reads_it(client: FlaskClient) -> None:
    body = select(client, {"q": "cooling pump", "rows": 3, "start": 0, "action": "OPEN_PREVIEW", "wt": "json"})
    doc = body["response"]["docs"][0]
    assert isinstance(doc["exactContent"], list) and "needs a new gasket" in doc["exactContent"][0]
    assert {"author", "last_modified", "url", "click_url"} <= set(doc)
    assert not [k for k in doc if "token" in k]
    assert body["highlighting"][doc["id"]]  # the terms the preview marks


def test_a_shared_preview_opens_for_readers_only(client: FlaskClient) -> None:
    shared = {"q": 'id:("doc-hr")', "action": "OPEN_PREVIEW_SHARED", "wt": "json"}
    assert [d["id"] for d in select(client, shared, "hana")["response"]["docs"]] == ["doc-hr"]
    assert select(client, shared, "otto")["response"]["numFound"] == 0
    assert select(client, shared)["response"]["numFound"] == 0


def test_the_advanced_search_lists_searchable_fields_never_the_acl_ones(client: FlaskClient) -> None:
    info = client.get(f"{V1}/fields/info").get_json()
    assert info["status"] == "OK"
    fields = {f["name"]: f for f in info["content"]["fields"]}
    assert {"author", "title", "last_modified", "exactContent"} <= set(fields)
    assert fields["last_modified"]["type"] == "date" and fields["last_modified"]["solrType"] == "pdate"
    assert fields["original_file_size"]["type"] == "long"
    assert not [n for n in fields if "token" in n or n.startswith("_")]
    assert "preview_content" not in fields  # stored only: nothing to search on
    assert client.get(f"{V1}/fields/exact").get_json()["content"] == {"exactFieldsList": []}
    assert client.get(f"{V1}/fields/fixedvalues").get_json()["content"] == {"fixedValuesFields": {}}
    assert client.get(f"{V1}/fields/autocomplete").get_json()["content"] == {"autocompleteFields": {}}
    assert client.get(f"{V1}/fields/label").get_json()["content"] == {"mappingFieldNameValues": {}}


def test_an_unknown_action_is_still_refused(client: FlaskClient) -> None:
    refused = client.get(f"{API}/search/select", query_string={"q": "pump", "action": "EXPORT"})
    assert (
        refused.get_json()["status"] == "ERROR" and "OPEN_PREVIEW" in refused.get_json()["content"]["error"]["reason"]
    )


def test_the_control_with_both_filters_off_opens_what_otto_may_not_read(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """These tests are not blind: with the sidecar's filter and Solr's both switched off, otto
    opens, previews and shares the team's document."""
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    opened = client.get("/Datafari/URL", query_string={"id": "doc-hr"}, headers=as_user("otto"))
    assert opened.status_code == 200 and "gasket" in opened.get_data(as_text=True)
    shared = {"q": 'id:("doc-hr")', "action": "OPEN_PREVIEW_SHARED", "wt": "json"}
    assert select(client, shared, "otto")["response"]["numFound"] == 1
