"""DatafariUI's "Export results" on the real Solr: the page's search, the user's documents only,
in Excel or CSV, bounded, with no cell that runs as a formula."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from openpyxl import load_workbook

from datafari_rag.app import create_app
from datafari_rag.config import Settings
from datafari_rag.indexing.indexer import Indexer
from datafari_rag.solr import SolrClient
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.testing.acl_harness import EVERY_TOKEN, POOL, layers_off, random_acl, reference_allows

EXPORT = "/Datafari/rest/v2.0/results/export"


class World:
    def __init__(self, rng: random.Random) -> None:
        self.users = {f"user{i}": frozenset(rng.sample(POOL, rng.randint(0, 4))) for i in range(8)}
        self.docs = {
            f"exp-{i}": {
                "id": f"exp-{i}",
                "title": f"Valve sheet {i}",
                "url": f"file://export/{i}",
                "author": [rng.choice(["alice", "bob"])],
                "exactContent": f"The valve of line {i} is checked monthly.",
                **random_acl(rng),
            }
            for i in range(40)
        }
        self.docs["exp-formula"] = {
            "id": "exp-formula",
            "title": '=HYPERLINK("http://evil.example","valve")',
            "url": "file://export/formula",
            "exactContent": "A valve note whose title looks like a formula.",
        }

    def readable(self, user: str) -> set[str]:
        return {i for i, d in self.docs.items() if reference_allows(self.users[user], d)}


@pytest.fixture(scope="module")
def world(solr: SolrClient, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[FlaskClient, World]:
    folder: Path = tmp_path_factory.mktemp("export")
    world = World(random.Random(17))
    users = {u: sorted(t) for u, t in world.users.items()} | {EVERY_TOKEN: sorted(POOL)}
    (folder / "mapping.json").write_text(json.dumps({"users": users}))
    mine = settings.replace(
        collection_main="exp_FileShare",
        collection_vector="exp_VectorMain",
        mapping_file=str(folder / "mapping.json"),
        trusted_header="X-Remote-User",
        trusted_proxies="127.0.0.1",
    )
    bootstrap(solr, mine)
    assert all(r.status == "ok" for r in Indexer.of(solr, mine).add(list(world.docs.values()), commit=True))
    return create_app(mine).test_client(), world


def exported_csv(client: FlaskClient, user: str, **params: object) -> list[dict[str, str]]:
    query = {"query": "valve", "type": "csv", "nbResults": 100, "fl": "id,title,author", **params}
    response = client.get(EXPORT, query_string=query, headers={"X-Remote-User": user})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/csv" and "results.csv" in response.headers["Content-Disposition"]
    return list(csv.DictReader(io.StringIO(response.get_data().decode("utf-8-sig"))))


def test_each_user_exports_exactly_the_documents_they_may_read(world: tuple[FlaskClient, World]) -> None:
    client, w = world
    for user in w.users:
        assert {row["id"] for row in exported_csv(client, user)} == w.readable(user), user


def test_the_control_with_both_filters_off_exports_what_users_may_not_read(
    world: tuple[FlaskClient, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("datafari_rag.solr.search.acl_params", layers_off("both"))
    client, w = world
    leaked = [u for u in w.users if {row["id"] for row in exported_csv(client, u)} - w.readable(u)]
    assert len(leaked) >= 3


def test_an_excel_export_holds_the_page_search_and_filters(world: tuple[FlaskClient, World]) -> None:
    client, w = world
    user = max(w.users, key=lambda u: len(w.readable(u)))
    params = [
        ("query", "valve"),
        ("type", "excel"),
        ("nbResults", "5"),
        ("fl", "id,title,author"),
        ("fq[]", '{!tag=author}(author:"alice")'),
        ("facetField[]", "{!ex=author}author"),
        ("sort", "id asc"),
        ("rows", "10"),
        ("start", "0"),
        ("aggregator", ""),
    ]
    response = client.get(EXPORT, query_string=params, headers={"X-Remote-User": user})
    assert response.status_code == 200, response.get_data(as_text=True)
    sheet = load_workbook(io.BytesIO(response.get_data())).active
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("id", "title", "author") and 1 <= len(rows) - 1 <= 5
    assert all(row[2] == "alice" for row in rows[1:])
    assert [row[0] for row in rows[1:]] == sorted(row[0] for row in rows[1:])


def test_a_formula_is_written_as_text(world: tuple[FlaskClient, World]) -> None:
    client, _ = world
    rows = exported_csv(client, "user0", query="formula")
    (formula,) = [r for r in rows if r["id"] == "exp-formula"]
    assert formula["title"].startswith("'=HYPERLINK")


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"type": "pdf"}, "'type' must be one of excel, csv."),
        ({"type": "csv", "nbResults": 6000}, "'nbResults' must be between 1 and 5000."),
        ({"type": "csv", "qt": "/internal"}, "Unsupported parameter(s): qt."),
        ({"type": "csv", "fq[]": "{!join from=id to=id}*:*"}, "local parameters"),
        ({"type": "csv", "fl": "allow_token_document"}, "access-control field"),
    ],
)
def test_a_bad_export_is_refused_in_datafari_json(world: tuple[FlaskClient, World], params: dict, said: str) -> None:
    client, _ = world
    response = client.get(EXPORT, query_string={"query": "valve", **params}, headers={"X-Remote-User": "user0"})
    body = response.get_json()
    assert body["status"] == "ERROR" and said in body["content"]["error"]["reason"]
