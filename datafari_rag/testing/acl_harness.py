"""The leak harness: random ACLs, random users, random requests; nothing unauthorized may pass.

Each document has random allow/deny tokens at the three levels and a unique marker in its
text. Users get random token sets (through the local mapping file and a trusted header).
Every trial sends one request (rag by query or by id, in each retrieval mode, streaming,
summarize, the search proxies) and checks every byte the LLM received and every document the
client got against :func:`reference_allows`, written independently of the Solr filter.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from ..indexing.indexer import Indexer
from ..security.acl import UserAccess, acl_params
from ..solr import SolrClient
from ..solr.bootstrap import bootstrap

LEVELS = ("share", "parent", "document")
PUBLIC = "__nosecurity__"
POOL = ["t1", "t2", "t3", "t4", "t5", 'DOM\\grp:"x"', "with space", "a,b", "{!lucene}*:*", "t6"]
MARKER = re.compile(r"MRK[0-9a-f]{10}")
WORDS = ["pump", "valve", "safety", "boiler", "inspection", "procedure", "pressure", "maintenance", "filter"]
API = "/Datafari/rest/v2.0"


def reference_allows(tokens: frozenset[str], acl: dict[str, list[str]]) -> bool:
    """ManifoldCF's rule, level by level, on plain sets."""
    user = set(tokens) - {PUBLIC}
    for level in LEVELS:
        allow = set(acl.get(f"allow_token_{level}") or [PUBLIC])
        deny = set(acl.get(f"deny_token_{level}") or [PUBLIC])
        if not ((PUBLIC in allow and PUBLIC in deny) or allow & user) or deny & user:
            return False
    return True


def random_acl(rng: random.Random) -> dict[str, list[str]]:
    acl: dict[str, list[str]] = {}
    for level in LEVELS:
        if rng.random() < 0.45:
            acl[f"allow_token_{level}"] = rng.sample(POOL, rng.randint(1, 3))
        if rng.random() < 0.25:
            acl[f"deny_token_{level}"] = rng.sample(POOL, 1)
    return acl


EVERY_TOKEN = "harness-every-token"
LAYERS = ("sidecar", "solr", "both")


def layers_off(which: str) -> Any:
    """``solr.search.acl_params`` with a layer switched off, for the harness's controls: "sidecar"
    drops the sidecar's own ``fq`` (the user still named to Solr), "solr" names to Solr a user who
    holds every token (the sidecar's ``fq`` kept), "both" does both. Each layer alone must hold
    (0 leaks); both off must show leaks, or the harness is blind."""
    if which not in LAYERS:
        raise ValueError(f"unknown layer {which!r}")

    def params(access: UserAccess) -> list[tuple[str, str]]:
        own = acl_params(access)
        fq = [p for p in own if not p[0].startswith("Authenticated")]
        named = [p for p in own if p[0].startswith("Authenticated")]
        every = [] if access.unrestricted else [("AuthenticatedUserName", EVERY_TOKEN)]
        return {"sidecar": named, "solr": fq + every, "both": every}[which]

    return params


@dataclass
class Corpus:
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> document
    by_marker: dict[str, str] = field(default_factory=dict)  # marker -> id
    users: dict[str, frozenset[str]] = field(default_factory=dict)


def build(
    rng: random.Random, solr: SolrClient, settings: Settings, folder: Path, docs: int = 80, users: int = 24
) -> Corpus:
    corpus = Corpus()
    for i in range(docs):
        marker = f"MRK{rng.getrandbits(40):010x}"
        words = " ".join(rng.choices(WORDS, k=12))
        doc: dict[str, Any] = {
            "id": f"acl-{i}",
            "title": f"Note {i} {marker}",  # a title shown to a user who may not read it is a leak
            "url": f"file://acl/{i}",
            "exactContent": f"{words.capitalize()}. Reference {marker} for the {rng.choice(WORDS)} team.",
            **random_acl(rng),
        }
        corpus.docs[doc["id"]] = doc
        corpus.by_marker[marker] = doc["id"]
    results = Indexer.of(solr, settings).add(list(corpus.docs.values()), commit=True)
    assert all(r.status == "ok" for r in results), results
    for j in range(users):
        corpus.users[f"user{j}"] = frozenset(rng.sample(POOL, rng.randint(0, 4)))
    users_json = {u: sorted(t) for u, t in corpus.users.items()}
    users_json[EVERY_TOKEN] = sorted(POOL)  # not a harness user: the "filter off" checks name it
    (folder / "mapping.json").write_text(json.dumps({"users": users_json}))
    # Solr's own security layer reads the same mapping from the configsets
    bootstrap(solr, settings.replace(mapping_file=str(folder / "mapping.json")))
    return corpus


def harness_settings(settings: Settings, folder: Path, llm_url: str) -> Settings:
    return settings.replace(
        mapping_file=str(folder / "mapping.json"),
        trusted_header="X-Remote-User",
        trusted_proxies="127.0.0.1",
        llm_endpoint=llm_url,
        chunk_size=400,
    )


def one_trial(rng: random.Random, clients: dict[str, Any], corpus: Corpus, fake: Any) -> tuple[str, list[str]]:
    """Runs one random request; returns (what was tried, leaked document ids)."""
    user = rng.choice([*corpus.users, None])
    tokens = corpus.users.get(user, frozenset()) if user else frozenset()
    headers = {"X-Remote-User": user} if user else {}
    mode = rng.choice(list(clients))
    client = clients[mode]
    query = " ".join(rng.sample(WORDS, 3))
    doc_id = rng.choice(list(corpus.docs))
    kinds = ["rag", "rag-id", "stream", "summarize", "select", "vector", "select-rag", "facets", "suggest", "ai"]
    kinds += ["open", "preview", "preview-shared"]  # DatafariUI: a result's link, its preview, a shared preview
    kind = rng.choice(kinds)
    fake.reset()
    if kind == "rag":
        response = client.post(f"{API}/ai/rag", json={"query": query}, headers=headers)
    elif kind == "rag-id":
        response = client.post(f"{API}/ai/rag", json={"query": query, "id": doc_id}, headers=headers)
    elif kind == "stream":
        response = client.post(f"{API}/ai/stream", json={"query": query}, headers=headers)
    elif kind == "summarize":
        response = client.post(f"{API}/ai/summarize", json={"id": doc_id}, headers=headers)
    elif kind == "select":
        response = client.get(f"{API}/search/select", query_string={"q": query, "rows": 50}, headers=headers)
    elif kind == "facets":  # DatafariUI's search page: every id, title and token counted by facets
        response = client.get(
            f"{API}/search/select",
            query_string=[
                ("q", rng.choice([query, "*:*"])),
                ("rows", "0"),
                ("facet", "true"),
                ("facet.field", "{!ex=ids}id"),
                ("facet.field", "title"),
                ("facet.limit", "-1"),
                ("facet.query", "{!key=all_0}id:acl-*"),
                ("fq", "{!tag=ids}id:acl-*"),
            ],
            headers=headers,
        )
    elif kind == "ai":  # Datafari 7.0's AI API, sources restricted to two documents
        others = rng.sample(list(corpus.docs), 2)
        body = {"q": query, "filters": {"id": others}, "action": rng.choice(["rag", "search"])}
        response = client.post(f"{API}/ai", json=body, headers=headers)
    elif kind == "suggest":  # DatafariUI's autocomplete: titles of documents
        typed = f"note {rng.randrange(10)}"
        response = client.get(f"{API}/search/suggest", query_string={"q": typed, "rows": 10}, headers=headers)
    elif kind == "open":  # a title's or a citation's link: the text (a passage marked) or the same 404
        cited = rng.choice([{}, {"passage": query}, {"passage": corpus.docs[doc_id]["exactContent"][:60]}])
        accept = {"Accept": rng.choice(["text/html", "application/json", "text/plain"])}
        opened = {"id": doc_id, **cited}
        response = client.get(f"{API.removesuffix('/rest/v2.0')}/URL", query_string=opened, headers=headers | accept)
    elif kind == "preview":  # every stored field of three results
        params = {"q": query, "rows": 3, "action": "OPEN_PREVIEW", "wt": "json"}
        response = client.get(f"{API}/search/select", query_string=params, headers=headers)
    elif kind == "preview-shared":  # a shared link names the document
        params = {"q": f'id:("{doc_id}")', "action": "OPEN_PREVIEW_SHARED", "wt": "json"}
        response = client.get(f"{API}/search/select", query_string=params, headers=headers)
    elif kind == "select-rag":
        response = client.get(f"{API}/search/select", query_string={"q": query, "action": "rag"}, headers=headers)
    else:
        response = client.get(f"{API}/search/vector", query_string={"queryrag": query, "topK": 20}, headers=headers)
    seen = "\n".join(fake.prompts()) + response.get_data(as_text=True)
    asked = doc_id if kind in ("rag-id", "summarize", "open", "preview-shared") else None
    return f"{kind}/{mode}/{user}", leaked(seen, tokens, corpus, asked)


def random_tool_call(rng: random.Random, corpus: Corpus) -> tuple[str, dict[str, Any], str | None]:
    """One random MCP tool call over the corpus: (tool, arguments, the document id it names)."""
    query = " ".join(rng.sample(WORDS, 3))
    doc_id = rng.choice(list(corpus.docs))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": query, "rows": 50}),
        ("vector_search", {"query": query, "top_k": 20}),
        ("rag", {"question": query}),
        ("summarize", {"id": doc_id}),
    ]
    tool, arguments = rng.choice(calls)
    return tool, arguments, doc_id if tool == "summarize" else None


def tool_leaks(result: Any, prompts: list[str], tokens: frozenset[str], corpus: Corpus, asked: str | None) -> list[str]:
    """The documents an MCP tool result, or the prompts the LLM received for it, leaked."""
    text = json.dumps(result.structured_content) + " ".join(c.text for c in result.content if hasattr(c, "text"))
    return leaked("\n".join(prompts) + text, tokens, corpus, asked)


def tool_shows_documents(result: Any) -> bool:
    """Whether an MCP tool result holds readable documents (the harness is not looking at nothing)."""
    return not result.is_error and "acl-" in json.dumps(result.structured_content)


def leaked(seen: str, tokens: frozenset[str], corpus: Corpus, asked: str | None = None) -> list[str]:
    """The documents whose marker or id appears in ``seen`` though ``tokens`` may not read them
    (except ``asked``, the id the user sent, which an error message names back)."""
    exposed = {corpus.by_marker[m] for m in MARKER.findall(seen) if m in corpus.by_marker}
    named = {i.rsplit("_", 1)[0] for i in re.findall(r"acl-\d+(?:_\d+)?", seen)}
    exposed |= named - ({asked} if asked else set())
    return sorted(d for d in exposed if d in corpus.docs and not reference_allows(tokens, corpus.docs[d]))
