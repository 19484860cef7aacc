"""The Solr-direct leak harness: random clients of Solr itself, never through the sidecar.

On a secured Solr holding the sidecar harness's corpus (:mod:`.acl_harness`: random ACLs, a
unique marker per document), each trial is one HTTP request as a network client would send it:
a random client (anonymous, a Solr user who is one of the corpus's users, a Solr user the mapping
does not know) × a random collection (FileShare, VectorMain, a workflow's pair) × a random
handler (the secured ``/select`` and ``/vector``, and every other one: ``/internal``, ``/get``,
``/export``, ``/stream``, ``/sql``, the admin, config and v2 APIs…) × a random parameter family
(the grammar DatafariUI uses, or one of the families that evaluate a query outside the user's
documents), sometimes naming another user or group. Every byte returned is searched for the
markers and ids of documents :func:`.acl_harness.reference_allows` says the client's user may
not read, and for the ACL fields' names.

The controls switch off each half of the door on the secured handlers: ``guard`` (the service
account naming the trial's user: the filter applies, the parameter guard does not), ``filter``
(a Solr user who holds every token: the guard applies, the filter lets everything through) and
``both``. Each must show leaks, or the harness is blind; with the door whole it must show none.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import urllib3

from ..config import Settings
from ..indexing.indexer import Indexer
from ..solr import SolrClient
from ..solr.bootstrap import bootstrap, ensure_collections
from .acl_harness import EVERY_TOKEN, WORDS, Corpus, build, reference_allows

# Each family as a direct client sends it; WORD is a marker of a document (lower case, as Solr
# indexes it), DOC a document's id, TOKEN an ACL token, HOST Solr's host:port, SELF the collection.
FAMILIES: dict[str, list[tuple[str, str]]] = {
    "expand": [("fq", "{!collapse field=source}"), ("expand", "true"), ("expand.fq", "*:*"), ("expand.q", "*:*")],
    "subquery": [("fl", "id,x:[subquery]"), ("x.q", "*:*"), ("x.qt", "/internal"), ("x.fl", "*")],
    "child": [("fl", "id,[child]")],
    "explain": [("fl", "id,[explain style=nl]")],
    "docid-function": [("fl", "id,df:docfreq(content_en,'WORD')")],
    "sort-function": [("sort", "termfreq(content_en,'WORD') desc")],
    "terms": [("terms", "true"), ("terms.fl", "content_en"), ("terms.prefix", "mrk")],
    "facet-mincount-0": [("facet", "true"), ("facet.field", "title"), ("facet.mincount", "0")],
    "facet-per-field-mincount-0": [("facet", "true"), ("facet.field", "title"), ("f.title.facet.mincount", "0")],
    "json-facet-domain": [("json.facet", '{"x":{"type":"terms","field":"id","domain":{"query":"*:*"}}}')],
    "json-facet-filter": [("json.facet", '{"x":{"type":"terms","field":"id","domain":{"filter":"*:*"}}}')],
    "json-param": [("json", '{"query":"*:*","params":{"expand":"true"}}')],
    "debug": [("debug", "true")],
    "debugQuery": [("debugQuery", "true")],
    "explainOther": [("debugQuery", "true"), ("explainOther", "id:DOC")],
    "join": [("fq", "{!join from=language to=language v=$jq}"), ("jq", "content_en:WORD")],
    "join-in-q": [("defType", "lucene"), ("q", "{!join from=language to=language}content_en:WORD")],
    "nested-query": [("defType", "lucene"), ("q", '_query_:"{!join from=language to=language}content_en:mrk*"')],
    "function-in-q": [("defType", "lucene"), ("q", '_val_:"docfreq(content_en,WORD)"')],
    "frange": [("fq", "{!frange l=1}docfreq(content_en,'WORD')")],
    "graph": [("q", "{!graph from=language to=language}id:DOC"), ("defType", "lucene")],
    "func-deftype": [("defType", "func"), ("q", "docfreq(content_en,'WORD')")],
    "mlt": [("mlt", "true"), ("mlt.fl", "content_en"), ("mlt.mintf", "1"), ("mlt.mindf", "1")],
    "spellcheck": [("spellcheck", "true"), ("spellcheck.q", "WORD")],
    "stats": [("stats", "true"), ("stats.field", "id")],
    "group": [("group", "true"), ("group.field", "language"), ("group.limit", "10")],
    "rerank": [("rq", "{!rerank reRankQuery=$rqq}"), ("rqq", "content_en:WORD")],
    "boost": [("bq", "content_en:WORD^100")],
    "shards": [("shards", "HOST/solr/SELF"), ("shards.qt", "/internal")],
    "qt": [("qt", "/internal")],
    "collection": [("collection", "SELF")],
    "useParams": [("useParams", "anything")],
    "acl-query": [("defType", "lucene"), ("q", "allow_token_document:TOKEN")],
    "acl-query-escaped": [("defType", "lucene"), ("q", "allow\\_token\\_document:*")],
    "acl-fq": [("fq", "allow_token_document:TOKEN")],
    "acl-facet-query": [("facet", "true"), ("facet.query", "allow_token_document:TOKEN")],
    "acl-fl": [("fl", "id,allow_token_document")],
    "acl-sort": [("sort", "allow_token_document asc")],
    "acl-facet": [("facet", "true"), ("facet.field", "allow_token_document")],
    "acl-hl": [("hl", "true"), ("hl.fl", "allow_token_document")],
    "acl-qf": [("qf", "allow_token_document"), ("q", "TOKEN")],
    "acl-df": [("defType", "lucene"), ("df", "allow_token_document"), ("q", "TOKEN")],
    "same-field-range-and-field-facet": [
        ("facet", "true"),
        ("facet.field", "title"),
        ("facet.range", "title"),
        ("f.title.facet.mincount", "0"),
    ],
    "forged-ids": [("ids", "DOC"), ("fl", "*"), ("distrib", "false")],
}
# What DatafariUI's search page sends: each must work, filtered (see grammar()).
GRAMMAR = "grammar"
# Handlers a direct client may use, filtered and guarded; every other path is the service account's.
SECURED = {"FileShare": ("select",), "VectorMain": ("select", "vector")}
OTHER_HANDLERS = (
    "internal",
    "spell",
    "get",
    "export",
    "stream",
    "sql",
    "graph",
    "query",
    "terms",
    "update",
    "update/json/docs",
    "config",
    "config/overlay",
    "schema",
    "schema/fields",
    "admin/luke",
    "admin/segments",
    "admin/file",
    "admin/ping",
    "analysis/field",
    "debug/dump",
    "replication",
    "admin/mbeans",
    "admin/plugins",
)
SOLR_PATHS = (
    "admin/collections",
    "admin/cores",
    "admin/configs",
    "admin/info/system",
    "admin/info/properties",
    "admin/info/threads",
    "admin/metrics",
    "admin/zookeeper",
    "admin/authentication",
    "admin/authorization",
    "____v2/c/SELF/select",
    "____v2/c/SELF/get",
    "____v2/collections/SELF/config",
)
CONTROLS = ("guard", "filter", "both")
STRANGER = "harness-stranger"  # a Solr user the mapping does not know: no tokens
ACL_FIELD_NAMES = ("allow_token_", "deny_token_")
# markers are matched on their first nine hex digits, in any case: Solr lower-cases (and may stem)
# the indexed terms that terms, facets and debug output show
LOOSE_MARKER = re.compile(r"mrk([0-9a-f]{9})", re.IGNORECASE)


@dataclass
class Client:
    """Who sends a request: ``auth`` (None: anonymous) and the tokens its user holds."""

    name: str
    auth: tuple[str, str] | None
    tokens: frozenset[str]


@dataclass
class Door:
    """A secured Solr and what the harness knows of it."""

    url: str
    service: tuple[str, str]
    corpus: Corpus
    pairs: list[tuple[str, str]]  # (FileShare-like, VectorMain-like) collections holding the corpus
    clients: list[Client] = field(default_factory=list)
    every: Client | None = None  # the Solr user holding every token (the filter-off control)
    host: str = ""

    def __post_init__(self) -> None:
        self.host = self.url.split("//", 1)[1].split("/", 1)[0]
        self.by_prefix = {m[3:12].lower(): d for m, d in self.corpus.by_marker.items()}
        self.marker_of = {d: m for m, d in self.corpus.by_marker.items()}


@dataclass
class Tally:
    """What a run saw: requests by outcome, and every leak with the request that caused it."""

    requests: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    families: set[str] = field(default_factory=set)
    handlers: set[str] = field(default_factory=set)
    leaks: list[tuple[str, list[str]]] = field(default_factory=list)

    def line(self) -> str:
        o = self.outcomes
        return (
            f"{self.requests} requests ({len(self.families)} parameter families x {len(self.handlers)} paths): "
            f"{len(self.leaks)} leaks, {o['refused']} refused (400), {o['denied']} denied (401/403), "
            f"{o['answered']} answered, {o['other']} other"
        )


def add_workflow_pair(solr: SolrClient, settings: Settings, corpus: Corpus, folder: Path) -> tuple[str, str]:
    """A workflow's own pair of collections, made as the workflows API makes them
    (``ensure_collections``), holding the corpus's documents under the same mapping."""
    workflow = settings.replace(
        collection_main=f"wf{settings.collection_main}",
        collection_vector=f"wf{settings.collection_vector}",
        mapping_file=str(folder / "mapping.json"),
    )
    ensure_collections(solr, workflow)
    Indexer.of(solr, workflow).add(list(corpus.docs.values()), commit=True)
    return workflow.collection_main, workflow.collection_vector


def open_door(solr: SolrClient, url: str, corpus: Corpus, pairs: list[tuple[str, str]]) -> Door:
    """Makes the Solr users the harness signs in as (every corpus user, a stranger, the user
    holding every token) through Solr's authentication API, and waits until Solr takes them."""
    assert solr.auth is not None, "the harness needs a secured Solr and its service account"
    door = Door(url, solr.auth, corpus, pairs)
    users = {name: f"pw-{name}-{len(corpus.docs)}" for name in [*corpus.users, STRANGER, EVERY_TOKEN]}
    add_solr_users(solr, f"{url}/{pairs[0][0]}/select", users)
    door.clients = [Client("anonymous", None, frozenset())]
    door.clients += [Client(u, (u, users[u]), corpus.users[u]) for u in corpus.users]
    door.clients.append(Client(STRANGER, (STRANGER, users[STRANGER]), frozenset()))
    door.every = Client(EVERY_TOKEN, (EVERY_TOKEN, users[EVERY_TOKEN]), frozenset())
    return door


def corpus_door(solr: SolrClient, settings: Settings, folder: Path, prefix: str, seed: int) -> tuple[Door, Settings]:
    """A corpus of 30 documents with random ACLs and 6 random users on collections of a test's own
    (``<prefix>_FileShare``, ``<prefix>_VectorMain``), and the Solr users to sign in as."""
    mine = settings.replace(collection_main=f"{prefix}_FileShare", collection_vector=f"{prefix}_VectorMain")
    bootstrap(solr, mine)
    corpus = build(random.Random(seed), solr, mine, folder, docs=30, users=6)
    return open_door(solr, solr.base_url, corpus, [(mine.collection_main, mine.collection_vector)]), mine


def add_solr_users(solr: SolrClient, search_url: str, users: dict[str, str], timeout: float = 30) -> None:
    """Makes Solr users (name -> password) through Solr's authentication API as the service
    account, and waits until each signs in at ``search_url``: Solr applies new users from its
    ZooKeeper watch, a moment after the API answered."""
    solr.post("admin/authentication", json={"set-user": users})
    deadline = time.monotonic() + timeout
    for user, password in users.items():
        headers = urllib3.make_headers(basic_auth=f"{user}:{password}")
        fields = {"q": "*:*", "rows": "0"}
        while urllib3.request("GET", search_url, fields=fields, headers=headers, retries=False).status == 401:
            if time.monotonic() > deadline:
                raise RuntimeError(f"Solr did not take the user {user} within {timeout:.0f}s")
            time.sleep(0.2)


def send(door: Door, auth: tuple[str, str] | None, path: str, params: list[tuple[str, str]], body: bytes | None = None):
    """One request as any HTTP client sends it; (status, body bytes)."""
    headers = urllib3.make_headers(basic_auth=":".join(auth)) if auth else {}
    url = f"{door.url}/{path}"
    if body is not None:
        headers["Content-Type"] = "application/json"
        answer = urllib3.request("POST", url, body=body, headers=headers, timeout=60, retries=False)
    else:
        answer = urllib3.request("GET", url, fields=params, headers=headers, timeout=60, retries=False)
    return answer.status, answer.data


def fill(name: str, values: dict[str, str]) -> list[tuple[str, str]]:
    """A family's parameters with its blanks (WORD, DOC, TOKEN, HOST, SELF) filled."""
    filled = []
    for key, value in FAMILIES[name]:
        for blank, text in values.items():
            value = value.replace(blank, text)
        filled.append((key, value))
    return filled


def family(name: str, door: Door, doc_id: str, token: str, collection: str) -> list[tuple[str, str]]:
    """A family's parameters for one of the corpus's documents and one collection."""
    word = door.marker_of[doc_id].lower()
    return fill(name, {"WORD": word, "DOC": doc_id, "TOKEN": token, "HOST": door.host, "SELF": collection})


def grammar(rng: random.Random, query: str) -> list[tuple[str, str]]:
    """What DatafariUI's search page sends (the sidecar's grammar), a random part of it."""
    params = [("q", query), ("rows", str(rng.choice([10, 50, 200])))]
    if rng.random() < 0.5:
        params += [("facet", "true"), ("facet.field", "{!ex=ids key=ids}id"), ("facet.field", "title")]
        params += [("facet.query", "{!key=all}id:acl-*"), ("fq", "{!tag=ids}id:acl-*")]
    if rng.random() < 0.5:
        params += [("hl", "true"), ("hl.fl", "exactContent"), ("hl.fl", "title")]
    params.append(("fl", rng.choice(["*", "*,score", "id,title,exactContent,url", "id,parent_doc,content"])))
    if rng.random() < 0.3:
        params.append(("sort", rng.choice(["id asc", "score desc", "title asc"])))
    return params


def shipped_vector(rng: random.Random, text: str, dimension: int = 384) -> str:
    """A ``queryVector`` as a receiving node sends it to a shard (the text's key, then numbers),
    of random numbers."""
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return key + ":" + ",".join(f"{rng.uniform(-1, 1):.6f}" for _ in range(dimension))


def random_request(
    rng: random.Random, door: Door, secured_only: bool
) -> tuple[str, list[tuple[str, str]], bytes | None]:
    """(path, parameters, JSON body or None) of one random request, its family and handler
    recorded in the description the caller makes."""
    main, vectors = rng.choice(door.pairs)
    kind, collection = rng.choice([("FileShare", main), ("VectorMain", vectors)])
    paths = [f"{collection}/{h}" for h in SECURED[kind]]
    if not secured_only and rng.random() < 0.3:
        paths = [f"{collection}/{h}" for h in OTHER_HANDLERS] + [p.replace("SELF", collection) for p in SOLR_PATHS]
    path = rng.choice(paths)
    doc_id = rng.choice(list(door.corpus.docs))
    query = rng.choice([" ".join(rng.sample(WORDS, 2)), "*:*", door.marker_of[doc_id].lower(), doc_id])
    name = GRAMMAR if rng.random() < 0.35 else rng.choice([*FAMILIES, "json-body"])
    body = None
    if name == GRAMMAR:
        params = grammar(rng, query)
    elif name == "json-body":
        params = []
        body = json.dumps({"query": "*:*", "params": {"rows": 200, "fl": "*", "expand": "true"}}).encode()
    else:
        params = family(name, door, doc_id, rng.choice(["t1", "t2", "t3", "t4", "t5", "t6"]), collection)
        if not any(k == "q" for k, _ in params):
            params = [("q", query), *params]
    if path.endswith("/vector"):
        text = query if query != "*:*" else "maintenance procedure"
        if name == GRAMMAR:  # /vector fixes q (its query is the text's vector): a q of one's own is refused
            params = [(k, v) for k, v in params if k != "q"]
        params.append(("queryrag", text))
        if rng.random() < 0.3:  # a graph searched wide and deep: still the user's documents only
            params += [("topK", str(rng.choice([1, 10, 200]))), ("efSearch", str(rng.choice([5, 100, 1000])))]
        if rng.random() < 0.15:  # posing as a shard with a vector of its own: the user's documents only
            params += [("isShard", "true"), ("queryVector", shipped_vector(rng, text))]
    if rng.random() < 0.3:  # naming another user or group: honoured from the service account only
        params.append(("AuthenticatedUserName", rng.choice([EVERY_TOKEN, *door.corpus.users])))
    if rng.random() < 0.15:
        params.append(("AuthenticatedUserGroup", rng.choice(["admins", "everyone", EVERY_TOKEN])))
    return f"{name} {path}", params, body


def leaked(door: Door, tokens: frozenset[str], answer: bytes, params: list[tuple[str, str]]) -> list[str]:
    """What the answer shows that ``tokens`` may not read: documents by marker or id, and ACL
    field names; what the client itself sent (Solr echoes parameters in errors) does not count."""
    text = answer.decode("utf-8", "replace")
    sent = " ".join(v for _, v in params).lower()
    sent_markers = {m.lower() for m in LOOSE_MARKER.findall(sent)}
    sent_ids = set(re.findall(r"acl-\d+", sent))
    found = {door.by_prefix.get(m.lower(), "") for m in LOOSE_MARKER.findall(text) if m.lower() not in sent_markers}
    found |= set(re.findall(r"acl-\d+", text)) - sent_ids
    found &= set(door.corpus.docs)
    hidden = sorted(d for d in found if not reference_allows(tokens, door.corpus.docs[d]))
    fields = [f for f in ACL_FIELD_NAMES if f in text and f not in sent]
    return hidden + fields


def run(rng: random.Random, door: Door, trials: int, control: str | None = None) -> Tally:
    """``trials`` random requests; ``control`` (guard, filter or both) switches off that part of
    the door on the secured handlers, leaks counted against the trial's user as before."""
    tally = Tally()
    for _ in range(trials):
        client = rng.choice(door.clients)
        what, params, body = random_request(rng, door, secured_only=control is not None)
        auth = client.auth
        if control in ("guard", "both"):  # the service account is not held to the grammar
            auth = door.service
            named = EVERY_TOKEN if control == "both" else (client.name if client.auth else STRANGER)
            params = [p for p in params if not p[0].startswith("Authenticated")]
            params.append(("AuthenticatedUserName", named))
        elif control == "filter":  # guarded, but filtered as a user who may read everything
            assert door.every is not None
            auth = door.every.auth
        elif control is not None:
            raise ValueError(f"unknown control {control!r}")
        status, answer = send(door, auth, what.split(" ", 1)[1], params, body)
        tally.requests += 1
        tally.families.add(what.split(" ", 1)[0])
        tally.handlers.add(re.sub(r"^[^/]*_(FileShare|VectorMain)/", r"\1/", what.split(" ", 1)[1]))
        outcome = {200: "answered", 400: "refused", 401: "denied", 403: "denied"}.get(status, "other")
        tally.outcomes[outcome] += 1
        shown = leaked(door, client.tokens, answer, params)
        if shown:
            tally.leaks.append((f"{what} as {client.name} ({control or 'door whole'}) -> {status}", shown))
    return tally


def parity(door: Door, sidecar: Any) -> list[str]:
    """For every client, the documents Solr's ``/select`` gives it directly equal those the
    sidecar's search API gives the same user, and, of the corpus, the reference's readable set.
    Returns the differences (none expected)."""
    differences = []
    main = door.pairs[0][0]
    for client in door.clients:
        status, body = send(door, client.auth, f"{main}/select", [("q", "*:*"), ("rows", "1000"), ("fl", "id")])
        direct = {d["id"] for d in json.loads(body)["response"]["docs"]} if status == 200 else {f"status {status}"}
        headers = {"X-Remote-User": client.name} if client.auth else {}
        answer = sidecar.get(
            "/Datafari/rest/v2.0/search/select", query_string={"q": "*:*", "rows": 1000}, headers=headers
        )
        through = {d["id"] for d in answer.get_json()["response"]["docs"]}
        expected = {d for d, doc in door.corpus.docs.items() if reference_allows(client.tokens, doc)}
        # the same documents through both doors; the corpus's ones as the reference says (a
        # collection may hold other documents too, e.g. the benchmarks' sample corpus)
        if direct != through or direct & set(door.corpus.docs) != expected:
            differences.append(f"{client.name}: Solr {len(direct)}, sidecar {len(through)}, reference {len(expected)}")
    return differences
