"""``search/select`` as DatafariUI's search page calls it: facets, filters, highlighting and
``responseHeader.params`` on the real Solr, counted over what the user may read only."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
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
# DatafariUI's default field list (src/Contexts/ui-config-context.js)
FIELDS = "title,url,id,extension,preview_content,last_modified,crawl_date,author,original_file_size,emptied,repo_source"
DOCS = [
    # (id, author, extension, ACL): "hr" documents are readable by members of team-hr only
    ("ui-1", "alice", "pdf", {}),
    ("ui-2", "alice", "docx", {}),
    ("ui-3", "bob", "pdf", {}),
    ("ui-4", "carol", "pdf", {"allow_token_document": ["team-hr"]}),
    ("ui-5", "dave", "txt", {"allow_token_document": ["team-hr"]}),
]


@pytest.fixture(scope="module")
def ui(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("ui")
    mine = mapped_users(settings, folder, "ui", {"hana": ["team-hr"], "otto": [], EVERY_TOKEN: ["team-hr"]})
    bootstrap(solr, mine)
    docs = [
        {
            "id": doc_id,
            "title": f"Pump report {doc_id}",
            "url": f"file://share/{doc_id}.{ext}",
            "author": [author],
            "extension": ext,
            "last_modified": (datetime.now(UTC) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "exactContent": f"The cooling pump of site {doc_id} was inspected by {author}. " * 3,
            **acl,
        }
        for doc_id, author, ext, acl in DOCS
    ]
    results = Indexer.of(solr, mine).add(docs, commit=True)
    assert all(r.status == "ok" for r in results), results
    return mine


def search(client: FlaskClient, params: list[tuple[str, str]], user: str | None = None) -> dict[str, Any]:
    headers = {"X-Remote-User": user} if user else {}
    response = client.get(f"{API}/search/select", query_string=params, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def ui_request(q: str, selected_authors: list[str] = (), start: int = 0) -> list[tuple[str, str]]:
    """The parameters DatafariUI's query context builds (src/Contexts/query-context.js)."""
    params = [
        ("q", q),
        ("fl", FIELDS),
        ("sort", "score desc"),
        ("q.op", "AND"),
        ("rows", "2"),
        ("start", str(start)),
        ("aggregator", ""),
        ("facet", "true"),
        ("facet.field", "{!ex=author}author"),
        ("facet.field", "{!ex=extension}extension"),
        ("facet.query", "{!key=date__lastmodified_facet_0}last_modified:[NOW/DAY TO NOW]"),
        ("facet.query", "{!key=date__lastmodified_facet_1}last_modified:[NOW/DAY-30DAY TO NOW/DAY]"),
        (
            "facet.query",
            "{!key=date__lastmodified_facet_2}last_modified:"
            + "([* TO 1970-08-31T23:59:59Z] || [1970-09-01T00:01:00Z TO NOW/DAY-31DAY])",
        ),
    ]
    if selected_authors:
        clause = " OR ".join(f'author:"{a}"' for a in selected_authors)
        params.append(("fq", "{!tag=author}(" + clause + ")"))
    return params


def counts(body: dict[str, Any], field: str) -> dict[str, int]:
    flat = body["facet_counts"]["facet_fields"][field]
    return dict(zip(flat[::2], flat[1::2], strict=True))


def test_the_search_page_gets_facets_params_and_snippets(ui: Settings) -> None:
    client = create_app(ui).test_client()
    body = search(client, ui_request("cooling pump"))
    header = body["responseHeader"]["params"]
    assert header["rows"] == "2" and header["q"] == "cooling pump" and header["aggregator"] == ""
    assert header["facet.field"] == ["{!ex=author}author", "{!ex=extension}extension"]
    assert not {"AuthenticatedUserName", "acl_tokens", "acl_sep", "hl.q", "hl.qparser"} & set(header)
    assert all("manifoldCF" not in str(v) and "allow_token" not in str(v) for v in header.values())
    # anonymous: the three public documents only, counted by author and extension
    assert body["response"]["numFound"] == 3 and len(body["response"]["docs"]) == 2
    assert counts(body, "author") == {"alice": 2, "bob": 1}
    assert counts(body, "extension") == {"pdf": 2, "docx": 1}
    queries = body["facet_counts"]["facet_queries"]
    assert queries["date__lastmodified_facet_1"] == 3 and queries["date__lastmodified_facet_0"] == 0
    doc = body["response"]["docs"][0]
    assert isinstance(doc["title"], list) and doc["title"][0].startswith("Pump report")
    assert doc["preview_content"][0].startswith("The cooling pump of site")
    snippet = "".join(body["highlighting"][doc["id"]]["exactContent"])
    assert '<span class="em">cooling</span>' in snippet and '<span class="em">pump</span>' in snippet


def test_a_clicked_facet_filters_and_keeps_its_own_counts(ui: Settings) -> None:
    client = create_app(ui).test_client()
    body = search(client, ui_request("*:*", ["alice"]), user="hana")
    assert body["response"]["numFound"] == 2
    assert {d["id"] for d in body["response"]["docs"]} == {"ui-1", "ui-2"}
    # {!ex=author}: the author facet ignores its own filter; the extension facet does not
    assert counts(body, "author") == {"alice": 2, "bob": 1, "carol": 1, "dave": 1}
    assert counts(body, "extension") == {"pdf": 1, "docx": 1}
    second_page = search(client, ui_request("*:*", ["alice", "carol"], start=2), user="hana")
    assert second_page["response"]["start"] == 2 and [d["id"] for d in second_page["response"]["docs"]] != []
    # otto has no token: hana's documents are neither listed nor counted
    body = search(client, ui_request("*:*", ["carol"]), user="otto")
    assert body["response"]["numFound"] == 0 and counts(body, "author") == {"alice": 2, "bob": 1}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("fq", "{!join from=id to=id}*:*"),
        ("fq", '_query_:"{!lucene}*:*"'),
        ("fq", "{!tag=a v=$q}"),
        ("fq", "author:x AND {!frange l=0}1"),
        ("facet.field", "{!ex=a terms=x}author"),
        ("facet.field", "allow_token_document"),
        ("facet.field", "author,extension"),
        ("facet.query", "{!key='a b'}*:*"),
        ("facet.mincount", "0"),
        ("f.author.facet.mincount", "0"),
        ("f.author.facet.limit", "many"),
        ("facet.range.gap", "+1DAY;x"),
        ("facet.pivot", "author,extension"),
        ("hl.fl", "allow_token_share"),
        ("hl.simple.pre", "<script>"),
        ("aggregator", "remote1"),
        # the ACL fields are never queried, sorted or returned for a client
        ("fq", "allow_token_document:team-hr"),
        ("fq", "allow\\_token\\_document:*"),
        ("facet.query", "{!key=x}deny_token_share:*"),
        ("q", "allow_token_document:team-hr"),
        ("q", "pump~1"),  # edismax runs it: a fuzzy query weighs terms of unreadable documents
        ("fq", '_val_:"docfreq(content_en,pump)"'),
        ("fq", "\\u0061llow_token_document:*"),
        ("sort", "allow_token_document asc"),
        ("fl", "id,allow_token_share"),
    ],
)
def test_parameters_outside_the_known_forms_are_refused(ui: Settings, name: str, value: str) -> None:
    client = create_app(ui).test_client()
    response = client.get(
        f"{API}/search/select", query_string=[*([("q", "pump")] if name != "q" else []), (name, value)]
    )
    body = response.get_json()
    assert body["status"] == "ERROR" and body["content"]["error"]["label"] == "ragBadRequest", (name, value, body)
    assert body["content"]["error"]["reason"]


def test_ranges_and_per_field_options_reach_solr(ui: Settings) -> None:
    client = create_app(ui).test_client()
    body = search(
        client,
        [
            ("q", "*:*"),
            ("rows", "0"),
            ("facet", "true"),
            ("facet.range", "{!ex=date}last_modified"),
            ("f.last_modified.facet.range.start", "NOW/DAY-28DAYS"),
            ("f.last_modified.facet.range.end", "NOW/DAY+1DAY"),
            ("f.last_modified.facet.range.gap", "+7DAYS"),
            ("facet.field", "extension"),
            ("f.extension.facet.limit", "1"),
            ("hl", "false"),
        ],
        user="hana",
    )
    buckets = body["facet_counts"]["facet_ranges"]["last_modified"]["counts"]
    assert sum(buckets[1::2]) == 5 and len(buckets) == 2 * 5  # 29 days in buckets of 7, empty ones too
    assert counts(body, "extension") == {"pdf": 3}
    assert "highlighting" not in body


V1 = "/Datafari/rest/v1.0"


def test_datafariui_start_up_calls_are_answered_for_what_the_product_is(ui: Settings) -> None:
    client = create_app(ui).test_client()
    anonymous = client.get(f"{V1}/users/current")
    assert anonymous.status_code == 404
    assert anonymous.get_json() == {
        "status": "ERROR",
        "content": {"code": 404, "reason": "No user currently connected."},
    }
    hana = {"X-Remote-User": "hana", "Accept-Language": "fr-FR,fr;q=0.9"}
    assert client.get(f"{V1}/users/current", headers=hana).get_json() == {
        "status": "OK",
        "content": {"name": "hana", "roles": [], "lang": "fr", "uiConfig": {}},
    }
    licence = client.get(f"{V1}/licence").get_json()
    assert licence["status"] == "OK" and licence["content"]["time"] == licence["content"]["files"] == "valid"
    assert client.get(f"{V1}/status/features/favorites").status_code == 401
    favorites = client.get(f"{V1}/status/features/favorites", headers=hana).get_json()
    assert favorites == {"status": "OK", "content": {"activated": "false"}}
    emails = client.get(f"{V1}/emails/admin").get_json()
    assert emails == {"status": "OK", "content": {"emails": {"bugs": "", "dpo": "", "feedbacks": ""}}}
    assert client.get(f"{V1}/aggregator").get_json() == {"status": "OK", "content": {"aggregatorList": []}}


def suggestions(client: FlaskClient, typed: str, user: str | None = None) -> list[str]:
    headers = {"X-Remote-User": user} if user else {}
    body = client.get(f"{API}/search/suggest", query_string={"q": typed, "autocomplete": "true"}, headers=headers)
    collations = body.get_json()["spellcheck"]["collations"]
    assert collations[::2] == ["collation"] * (len(collations) // 2)
    return [c["collationQuery"] for c in collations[1::2]]


def test_suggestions_are_titles_of_documents_the_user_may_read(ui: Settings) -> None:
    client = create_app(ui).test_client()
    every = [f"Pump report ui-{i}" for i in range(1, 6)]
    assert sorted(suggestions(client, "pump rep", "hana")) == every
    assert sorted(suggestions(client, "pump rep")) == every[:3]
    assert sorted(suggestions(client, "PUMP re", "otto")) == every[:3]
    assert suggestions(client, "") == [] and suggestions(client, "valve") == []
    # what is typed is words: Solr's syntax in it is searched as words, never run
    assert suggestions(client, "{!lucene}title:*") == []


def test_each_random_user_sees_only_their_own_identity(ui: Settings) -> None:
    """users/current answers from the request's identity alone: for random users, in any order,
    the answer names that user and nobody else."""
    rng = random.Random(20261124)
    client = create_app(ui).test_client()
    users = [f"user-{rng.getrandbits(32):08x}" for _ in range(12)]
    for user in rng.sample(users * 2, len(users) * 2):
        body = client.get(f"{V1}/users/current", headers={"X-Remote-User": user}).get_json()
        assert body["content"]["name"] == user
        assert not any(other in str(body) for other in users if other != user)


def test_every_field_never_includes_the_acl_fields(ui: Settings) -> None:
    """``fl=*`` answers each document's stored fields less the six ACL fields, on both search proxies."""
    client = create_app(ui).test_client()
    for path, args in (
        ("search/select", {"q": "*:*", "fl": "*", "rows": 50}),
        ("search/vector", {"queryrag": "pump", "fl": "*"}),
    ):
        response = client.get(f"{API}/{path}", query_string=args)
        assert response.status_code == 200, response.get_json()
        docs = response.get_json()["response"]["docs"]
        assert docs and all("id" in d for d in docs)
        assert not [k for d in docs for k in d if "_token_" in k], path


def entities(client: FlaskClient, typed: str, user: str | None = None) -> list[str]:
    headers = {"X-Remote-User": user} if user else {}
    params = {"action": "suggest", "q": typed, "autocomplete": "true", "spellcheck.collateParam.q.op": "AND"}
    response = client.get("/Datafari/rest/v1.0/search/suggestEntityAuthors", query_string=params, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    found = response.get_json()["suggest"]["suggesterEntityAuthors"]
    word = typed.split()[-1] if typed.split() else ""
    return [s["term"] for s in found[word]["suggestions"]]


def test_people_are_suggested_from_the_documents_the_user_may_read(ui: Settings) -> None:
    client = create_app(ui).test_client()
    assert entities(client, "report by A") == ["alice"]  # the last word, any case
    assert entities(client, "ca") == [] and entities(client, "ca", "otto") == []  # carol: team-hr documents only
    assert entities(client, "ca", "hana") == ["carol"] and entities(client, "d", "hana") == ["dave"]
    assert entities(client, "") == []


def test_the_control_with_both_filters_off_suggests_the_teams_people(
    ui: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    assert entities(create_app(ui).test_client(), "ca", "otto") == ["carol"]
