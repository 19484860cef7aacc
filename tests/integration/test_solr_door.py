"""Solr's own door: a client that searches Solr directly — anonymous, or a Solr user other than the
service account — reads only what its user may read, through every handler, component and
parameter; a secured Solr keeps indexing when ``bootstrap --secure`` arrives while it runs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import urllib3

from datafari_rag.config import Settings
from datafari_rag.solr import SolrClient, SolrError
from datafari_rag.solr.bootstrap import bootstrap
from datafari_rag.solr.runtime import LocalSolr
from datafari_rag.testing.servers import free_port
from datafari_rag.testing.solr_door_harness import FAMILIES, fill

pytestmark = pytest.mark.skipif(bool(os.environ.get("DATAFARI_RAG_SOLR_URL")), reason="needs the local runtime")

SERVICE = ("datafari-rag", "door-service-pass")
BOB = ("bob", "bob-pass")  # a Solr user other than the service account
SECRET = "ZEBRAQUARTZ"  # in the restricted document's text
TITLE = "OCELOTMEMO"  # in its title
TOKEN = "hr-board-only"  # its ACL token
DOCS = [
    {"id": "pub", "title": "Canteen", "exactContent": "A public notice about the canteen menu.", "language": "en"},
    {
        "id": "secret",
        "title": f"Board {TITLE}",
        "exactContent": f"Salary review: the code word is {SECRET} for the board.",
        "language": "en",
        "source": "board",
        "allow_token_document": [TOKEN],
    },
    {
        "id": "staff",
        "title": "Rota",
        "exactContent": "Staff rota for December and the canteen.",
        "language": "en",
        "source": "board",
        "allow_token_document": ["staff"],
    },
]
MARKERS = (SECRET, SECRET.lower(), TITLE, TITLE.lower(), TOKEN)


def leaked(body: bytes, sent: Any = ()) -> list[str]:
    """The markers in an answer that the client did not send itself (Solr echoes parameters)."""
    asked = " ".join(str(v) for _, v in sent)
    return [m for m in MARKERS if m.encode() in body and m not in asked]


@dataclass
class Door:
    url: str
    settings: Settings
    prefixes: tuple[str, ...]  # one collection pair of one shard (made before security), one of two

    def collections(self) -> list[str]:
        return [f"{p}_{c}" for p in self.prefixes for c in ("FileShare", "VectorMain")]


def _raw(url: str, path: str, auth: tuple[str, str] | None, fields: Any = None, body: bytes | None = None) -> Any:
    """One request as any HTTP client would send it: status and body bytes, nothing interpreted."""
    headers = urllib3.make_headers(basic_auth=":".join(auth)) if auth else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
        return urllib3.request("POST", f"{url}/{path}", body=body, headers=headers, timeout=60)
    return urllib3.request("GET", f"{url}/{path}", fields=fields, headers=headers, timeout=60)


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory, agent_url: str) -> Iterator[Door]:
    folder = tmp_path_factory.mktemp("door")
    (folder / "mapping.json").write_text(json.dumps({"users": {"alice": [TOKEN, "staff"], "bob": ["staff"]}}))
    node = LocalSolr(port=free_port(), home=folder / "home")
    node.start(timeout=180)
    try:
        base = Settings(
            solr_url=node.url,
            solr_username=SERVICE[0],
            solr_password=SERVICE[1],
            embeddings_endpoint=agent_url,
            mapping_file=str(folder / "mapping.json"),
        )
        one = base.replace(collection_main="door_FileShare", collection_vector="door_VectorMain")
        # made and written to while Solr is open: the chunk writer's client predates security
        bootstrap(SolrClient(node.url, 120), one)
        SolrClient(node.url).post("door_FileShare/update", json=DOCS[:1], params={"commit": "true"})
        bootstrap(SolrClient(node.url, 120), one, secure=True)
        service = SolrClient(node.url, 120, auth=SERVICE)
        service.post("admin/authentication", json={"set-user": {BOB[0]: BOB[1]}})
        two = base.replace(collection_main="door2_FileShare", collection_vector="door2_VectorMain")
        bootstrap(service, two, shards=2)
        for settings in (one, two):
            service.post(f"{settings.collection_main}/update", json=DOCS, params={"commit": "true"})
            service.get(f"{settings.collection_vector}/update", {"commit": "true"})
        yield Door(node.url, base, ("door", "door2"))
    finally:
        node.stop()


def test_indexing_keeps_working_after_bootstrap_secure_on_a_running_solr(door: Door) -> None:
    """The chunk-and-embed processor wrote every parent's chunks after security arrived (its Solr
    client is made again with the signed inter-node requests), with no restart."""
    service = SolrClient(door.url, auth=SERVICE)
    for prefix in door.prefixes:
        chunks = service.get(
            f"{prefix}_VectorMain/internal", {"q": "*:*", "fl": "parent_doc", "rows": 100, "facet": "false"}
        )
        assert {d["parent_doc"] for d in chunks["response"]["docs"]} == {d["id"] for d in DOCS}


def _ids(body: bytes) -> set[str]:
    docs = json.loads(body)["response"]["docs"]
    return {d.get("parent_doc", d.get("id")) for d in docs}


def test_the_filter_and_the_grammar_datafariui_uses_work_straight_from_solr(door: Door) -> None:
    """Anonymous, bob and the service account naming alice search each collection with filters,
    facets, highlighting and fl=*: each sees their documents only, never an ACL field."""
    grammar = [
        ("q", "canteen OR salary OR rota"),
        ("fq", "{!tag=src}language:en"),
        ("facet", "true"),
        ("facet.field", "{!ex=src key=ids}id"),
        ("facet.query", "{!key=all}language:en"),
        ("hl", "true"),
        ("hl.fl", "exactContent"),
        ("fl", "*,score"),
        ("rows", "50"),
        ("sort", "score desc"),
    ]
    for collection in door.collections():
        handlers = ["select", "vector"] if "Vector" in collection else ["select"]
        for handler in handlers:
            # /vector fixes q (the text's vector): its text is queryrag
            vector = [*[p for p in grammar if p[0] != "q"], ("queryrag", "salary canteen rota")]
            fields = vector if handler == "vector" else grammar
            for auth, named, readable in (
                (None, [], {"pub"}),
                (BOB, [("AuthenticatedUserName", "alice")], {"pub", "staff"}),
                (SERVICE, [("AuthenticatedUserName", "alice")], {"pub", "staff", "secret"}),
            ):
                answer = _raw(door.url, f"{collection}/{handler}", auth, [*fields, *named])
                assert answer.status == 200, (
                    collection,
                    handler,
                    auth,
                    json.loads(answer.data)["error"]["msg"][80:300],
                )
                assert _ids(answer.data) == readable, (collection, handler, auth)
                if auth != SERVICE:  # the service account's fl=* is every stored field
                    assert b"allow_token" not in answer.data and b"deny_token" not in answer.data
                    assert not leaked(answer.data), (collection, handler, auth)


# Every family that could evaluate a query outside the user's documents (the Solr-direct leak
# harness's), as a direct client sends it; forged shard ids are answered, filtered (tested below).
REFUSED = [name for name in FAMILIES if name != "forged-ids"]


def test_every_family_is_refused_with_solr_s_error_json(door: Door) -> None:
    """Each family answers 400 with Solr's error JSON naming the parameter, for anonymous and
    for bob, on both collections of both pairs (one shard and two) and on each secured handler."""
    tried = 0
    host = door.url.split("//")[1].split("/")[0]
    for collection in door.collections():
        handlers = ["select", "vector"] if "Vector" in collection else ["select"]
        for handler in handlers:
            for auth in (None, BOB):
                for family in REFUSED:
                    values = {"WORD": SECRET.lower(), "DOC": "secret", "TOKEN": TOKEN, "HOST": host, "SELF": collection}
                    params = fill(family, values)
                    fields = [("q", "*:*"), *params] if not any(k == "q" for k, _ in params) else params
                    answer = _raw(door.url, f"{collection}/{handler}", auth, [*fields, ("queryrag", "salary")])
                    tried += 1
                    assert answer.status == 400, (family, collection, handler, auth, answer.data[:400])
                    error = json.loads(answer.data)["error"]
                    assert error["code"] == 400 and "'" in error["msg"], (family, error)
                    assert not leaked(answer.data, fields), family
    assert tried == 6 * 2 * len(REFUSED)


def test_a_request_body_is_refused_and_ids_return_only_readable_documents(door: Door) -> None:
    body = json.dumps({"query": "*:*", "params": {"expand": "true", "expand.q": "*:*"}}).encode()
    for auth in (None, BOB):
        answer = _raw(door.url, "door_FileShare/select", auth, body=body)
        assert answer.status == 400 and b"request body" in answer.data
        # a shard's "fields of these ids" request, forged: Solr would serve them without filters
        for collection in ("door_FileShare", "door2_FileShare"):
            for extra in ([], [("distrib", "false")], [("isShard", "true"), ("distrib", "false")]):
                answer = _raw(
                    door.url, f"{collection}/select", auth, [("q", "*:*"), ("ids", "secret,pub"), ("fl", "*"), *extra]
                )
                assert answer.status == 200, answer.data[:300]
                assert not leaked(answer.data), (collection, extra)
    answer = _raw(door.url, "door_FileShare/select", SERVICE, [("ids", "secret"), ("fl", "id"), ("distrib", "false")])
    assert _ids(answer.data) == {"secret"}  # the service account's own reads are untouched


@pytest.mark.parametrize(
    "path",
    [
        "door_FileShare/internal?q=*:*",
        "door_FileShare/get?id=secret",
        "door_FileShare/export?q=*:*&fl=id&sort=id+asc",
        "door_FileShare/stream?expr=search(door_FileShare,q=*:*,fl=id,sort=id+asc,qt=/export)",
        "door_FileShare/sql?stmt=select+id+from+door_FileShare",
        "door_FileShare/update?commit=true",
        "door_FileShare/config",
        "door_FileShare/schema",
        "door_VectorMain/internal?q=*:*",
        "admin/collections?action=LIST",
        "admin/authentication",
    ],
)
def test_every_other_handler_is_the_service_account_s(door: Door, path: str) -> None:
    for auth in (None, BOB):
        answer = _raw(door.url, path, auth)
        assert answer.status in (401, 403), (path, auth, answer.status)
        assert not leaked(answer.data)


def test_the_service_account_is_not_held_to_the_grammar(door: Door) -> None:
    """The sidecar's own reads (JSON facets for repairs, any parameter) run as before."""
    service = SolrClient(door.url, auth=SERVICE)
    found = service.get("door2_FileShare/select", {"q": "*:*", "debug": "true", "AuthenticatedUserName": "alice"})
    assert found["response"]["numFound"] == 3
    with pytest.raises(SolrError):  # anonymous is not
        SolrClient(door.url).get("door2_FileShare/select", {"q": "*:*", "debug": "true"})
