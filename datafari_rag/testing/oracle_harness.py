"""The differential oracle harness: does any answer tell a word of a document the client may not
read from a word no document holds?

Every request is sent twice, identical but for one word: once a marker only documents the
client's user may not read hold (the secret), once a marker no document holds (the absent). The
two answers are compared byte for byte, less what is the request's own echo (Solr's
``responseHeader.params`` and ``QTime``, the word itself wherever an answer repeats it, the ids and
times a surface makes up). Any other difference — numFound, facet counts, scores, order,
highlighting, an error, an answer's length — is an oracle: "does a document I may not read hold
this word?", which repeated reads titles and texts a prefix at a time.

The requests: every way of writing an oracle into each query parameter (a join, a frange, a
function, as local parameters, inline, nested in ``_query_`` or ``_val_`` however escaped, behind a
parser default, through a macro from any parameter, a dereference, a repeated or empty parameter,
a ``json`` parameter or body) and the term-level forms a search page uses, straight to Solr's
secured handlers of both collections as anonymous and as a Solr user, and through each of the
sidecar's surfaces that takes a query or a filter. The control sends the same pairs with the
door's judgement off — to Solr as the service account naming the client's user (filtered, not
judged), through the sidecar with its users' parameters sent as its own — and must find oracles,
or the harness is blind.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..solr import search as solr_search
from .acl_harness import API, Corpus, reference_allows
from .solr_door_harness import Client, Door, send

TERM = "TERM"
ALERTS = "/Datafari/rest/v1.0/users/current/alerts"
# an unreadable document holding TERM leads, by its other words, to readable documents sharing one
JOIN = "{!join from=content_en to=content_en}content_en:TERM"
DOCFREQ = "docfreq(content_en,'TERM')"
# Solr's parameters that take a query, each with what makes Solr read it
QUERY_PARAMS: dict[str, list[tuple[str, str]]] = {
    "q": [("defType", "lucene")],
    "fq": [],
    "facet.query": [("facet", "true")],
    "hl.q": [("hl", "true"), ("hl.fl", "exactContent"), ("hl.qparser", "lucene")],
}
# parameters a macro can be read from: "any value" rules before the door judged what Solr runs
MACRO_SOURCES = ("m", "_", "rid", "version", "shard.url", "cursorMark", "AuthenticatedUserName", "x__terms", "queryrag")
# the answer's own echo and made-up values, left out of the comparison
ECHO_KEYS = {"QTime", "params", "_id", "nextRun", "lastRun", "id_conversation", "conversationId", "requestId", "took"}
ECHO_KEYS |= {"latency_ms"}


def query_forms(param: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every way of writing the oracle into ``param`` (or around it), and the term-level forms."""
    other = "language:en" if param != "q" else "*:*"
    forms: list[tuple[str, list[tuple[str, str]]]] = [
        ("local", [(param, JOIN)]),
        ("local-deref", [(param, "{!join from=content_en to=content_en v=$j}"), ("j", "content_en:TERM")]),
        ("inline", [(param, "language:en AND " + JOIN)]),
        ("space", [(param, " " + JOIN)]),
        ("tab", [(param, "\t" + JOIN)]),
        ("frange", [(param, "{!frange l=1}" + DOCFREQ)]),
        ("_val_", [(param, f'_val_:"{DOCFREQ}"'), ("fl", "id,score")]),
        ("_val_-u", [(param, f'\\u005fval_:"{DOCFREQ}"'), ("fl", "id,score")]),
        ("df-_val_", [("df", "_val_"), (param, f'"{DOCFREQ}"'), ("fl", "id,score")]),
        ("nested-u-braces", [(param, JOIN.replace("{", '\\u005fquery_:"\\u007b', 1) + '"')]),
        ("macro-name", [("${y}", JOIN), ("y", param)]),
        ("repeated", [(param, other), (param, JOIN)]),
        ("empty", [(param, ""), (param, JOIN)]),
        ("percent", [(param, JOIN.replace("{", "%7B"))]),
        ("name-case", [(param.upper(), JOIN)]),
        ("json-params", [("json", json.dumps({"params": {param: JOIN}}))]),
        # the term-level forms a search page uses: accepted, and no oracle
        ("term", [(param, "content_en:TERM")]),
        ("term-u", [(param, "content_\\u0065n:TERM")]),
        ("prefix", [(param, "content_en:TERM*")]),
        ("phrase", [(param, 'content_en:"TERM pump"')]),
        ("range", [(param, "content_en:[TERM TO TERM]")]),
        ("fuzzy", [(param, "content_en:TERM~1")]),
    ]
    for name, spelled in (("_query_", "_query_"), ("u", "\\u005fquery_"), ("x", "\\_query\\_"), ("e", "_qu\\ery_")):
        forms.append((f"nested-{name}", [(param, f'{spelled}:"{JOIN}"')]))
    forms.append(("nested-case", [(param, f'_QUERY_:"{JOIN}"')]))
    forms += [(f"macro-{src}", [(param, "${" + src + "}"), (src, JOIN)]) for src in MACRO_SOURCES]
    return forms


def solr_requests() -> list[tuple[str, list[tuple[str, str]], bytes | None]]:
    """(family, parameters, JSON body) of every request sent straight to Solr, TERM to fill."""
    out: list[tuple[str, list[tuple[str, str]], bytes | None]] = []
    for param, needs in QUERY_PARAMS.items():
        base = [] if param == "q" else [("q", "*:*")]
        for label, params in query_forms(param):
            out.append((f"{param}:{label}", [*base, *needs, *params], None))
    out.append(("q:edismax-default", [("q", JOIN)], None))
    out.append(("q:dismax", [("defType", "dismax"), ("q", JOIN)], None))
    out.append(("q:edismax-uf", [("uf", "* _query_"), ("q", f'_query_:"{JOIN}"')], None))
    out.append(("q:edismax-term", [("q", "TERM")], None))
    # facets of a text field: values of readable documents only, whatever word is asked for
    facet = [("q", "*:*"), ("facet", "true"), ("facet.field", "content_en")]
    out.append(("facet:prefix", [*facet, ("facet.prefix", "TERM")], None))
    out.append(("facet:prefix-per-field", [*facet, ("f.content_en.facet.prefix", "TERM")], None))
    listed = [("q", "*:*"), ("facet", "true"), ("facet.field", "{!terms=$content_en__terms}content_en")]
    out.append(("facet:listed-terms", [*listed, ("content_en__terms", "TERM,pump")], None))
    out.append(("json:query", [("json", json.dumps({"query": JOIN}))], None))
    out.append(("json:filter", [("q", "*:*"), ("json", json.dumps({"filter": [JOIN]}))], None))
    body = json.dumps({"query": "*:*", "filter": [JOIN]}).encode()
    out.append(("body:filter", [], body))
    return out


@dataclass
class Tally:
    """Pairs sent and the oracles found, each with what showed it."""

    pairs: int = 0
    families: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)
    outcomes: dict[str, int] = field(default_factory=dict)
    oracles: list[tuple[str, str]] = field(default_factory=list)

    def add(self, family: str, path: str, secret: str, absent: str, status: int) -> None:
        self.pairs += 1
        self.families.add(family.split(":", 1)[-1])
        self.paths.add(path)
        kind = "answered" if status == 200 else "refused" if status == 400 else str(status)
        self.outcomes[kind] = self.outcomes.get(kind, 0) + 1
        if secret != absent:
            self.oracles.append((f"{family} {path}", _first_difference(secret, absent)))

    def line(self) -> str:
        shown = ", ".join(f"{n} {k}" for k, n in sorted(self.outcomes.items()))
        return (
            f"{self.pairs} pairs ({len(self.families)} forms x {len(self.paths)} paths; {shown}): "
            f"{len(self.oracles)} oracles"
        )


def _first_difference(one: str, other: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), min(len(one), len(other)))
    return f"...{one[max(0, at - 60) : at + 60]!r} vs {other[max(0, at - 60) : at + 60]!r}"


def normalized(raw: bytes, words: tuple[str, ...]) -> str:
    """An answer less its echo: the request's words, Solr's parameters and times, made-up ids."""
    text = raw.decode("utf-8", "replace")
    with suppress(ValueError):
        text = json.dumps(_without_echo(json.loads(text)), sort_keys=True)
    for word in words:
        text = re.sub(re.escape(word), TERM, text, flags=re.IGNORECASE)
    return text


def _without_echo(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_echo(v) for k, v in value.items() if k not in ECHO_KEYS}
    if isinstance(value, list):
        return [_without_echo(v) for v in value]
    return value


def secret_and_absent(rng: random.Random, corpus: Corpus, tokens: frozenset[str]) -> tuple[str, str]:
    """A marker only documents ``tokens`` may not read hold, and one no document holds (lower
    case, as Solr indexes them; the same length, so that no error's column moves)."""
    hidden = [m for m, d in corpus.by_marker.items() if not reference_allows(tokens, corpus.docs[d])]
    secret = rng.choice(sorted(hidden)).lower()
    absent = secret
    while absent.upper() in {m.upper() for m in corpus.by_marker}:
        absent = f"mrk{rng.getrandbits(40):010x}"
    return secret, absent


def _filled(params: list[tuple[str, str]], word: str) -> list[tuple[str, str]]:
    return [(k, v.replace(TERM, word)) for k, v in params]


def solr_direct(rng: random.Random, door: Door, clients: list[Client], control: bool = False) -> Tally:
    """Every request of :func:`solr_requests` to each secured handler of each collection, as each
    client; ``control``: sent as the service account naming the client's user (the filter
    applies, the door does not judge)."""
    tally = Tally()
    paths = [f"{main}/select" for main, _ in door.pairs] + [
        f"{v}/{h}" for _, v in door.pairs for h in ("select", "vector")
    ]
    for client in clients:
        secret, absent = secret_and_absent(rng, door.corpus, client.tokens)
        auth = door.service if control else client.auth
        named = [("AuthenticatedUserName", client.name)] if control and client.auth else []
        for path in paths:
            vector = [("queryrag", "pump procedure")] if path.endswith("/vector") else []
            for family, params, body in solr_requests():
                if path.endswith("/vector"):
                    if any(k == "queryrag" for k, _ in params):
                        continue  # the word would be in the text embedded: every score moves with it
                    params = [p for p in params if p[0] != "q"] if family.startswith("q:") else params
                answers = []
                for word in (secret, absent):
                    sent = [*_filled(params, word), *vector, *named]
                    status, raw = send(door, auth, path, sent, body.replace(b"TERM", word.encode()) if body else None)
                    answers.append((status, normalized(raw, (secret, absent))))
                tally.add(family, path, answers[0][1], answers[1][1], answers[0][0])
    return tally


# --- the sidecar's surfaces ---------------------------------------------------------------------


def sidecar_forms() -> list[tuple[str, str]]:
    """The query or filter texts a user can put in the sidecar's parameters (one value each)."""
    forms = [(label, value) for label, params in query_forms("fq") if len(params) == 1 for _, value in params]
    forms += [("macro-own", "${q}"), ("macro-acl", "${acl_tokens}"), ("macro-hl", "${hl.q}")]
    return forms


Surface = Callable[[Any, dict[str, str], str], tuple[int, bytes]]


def _get(client: Any, path: str, headers: dict[str, str], params: list[tuple[str, str]]) -> tuple[int, bytes]:
    response = client.get(f"{API}/{path}", query_string=params, headers=headers)
    return response.status_code, response.get_data()


def surfaces(main: Any, corpus: Corpus) -> dict[str, Surface]:
    """Each sidecar surface that takes a query or a filter, as a function of (test client, headers,
    the user's text) -> (status, answer bytes). ``main`` is FileShare's Collection, for alerts' runs."""
    from ..alerts.runner import new_documents
    from ..alerts.store import AlertSpec
    from ..security.acl import UserAccess

    def alert(client: Any, headers: dict[str, str], text: str) -> tuple[int, bytes]:
        """Saving the alert, and, saved, what its run finds as its user (then it is deleted)."""
        body = {"subject": "oracle", "keyword": "*:*", "filters": text, "core": "FileShare"}
        body |= {"mail": "ada@example.org", "frequency": "daily"}
        saved = client.post(ALERTS, json=body, headers=headers)
        answer: dict[str, Any] = {"saved": saved.get_json()}
        made = (answer["saved"] or {}).get("content", {}).get("alert")
        if saved.status_code == 200 and made:
            user = headers["X-Remote-User"]
            spec = AlertSpec("oracle", "*:*", text, "FileShare", "ada@example.org", "daily")
            since = datetime(2000, 1, 1, tzinfo=UTC)
            answer["found"] = new_documents(main, UserAccess(user, corpus.users[user]), spec, since, datetime.now(UTC))
            client.delete(f"{ALERTS}/{made['_id']}", headers=headers)
        return saved.status_code, json.dumps(answer).encode()

    def rag(client: Any, headers: dict[str, str], text: str) -> tuple[int, bytes]:
        response = client.post(f"{API}/ai/rag", json={"query": f"pump {text}"}, headers=headers)
        return response.status_code, response.get_data()

    return {
        "search/select q": lambda c, h, t: _get(c, "search/select", h, [("q", t), ("rows", "50")]),
        "search/select fq": lambda c, h, t: _get(c, "search/select", h, [("q", "*:*"), ("fq", t), ("rows", "50")]),
        "search/select facet.query": lambda c, h, t: _get(
            c, "search/select", h, [("q", "*:*"), ("facet", "true"), ("facet.query", t), ("rows", "0")]
        ),
        "results/export query": lambda c, h, t: _get(c, "results/export", h, [("query", t), ("type", "csv")]),
        "results/export fq[]": lambda c, h, t: _get(
            c, "results/export", h, [("query", "*:*"), ("type", "csv"), ("fq[]", t)]
        ),
        "search/suggest": lambda c, h, t: _get(c, "search/suggest", h, [("q", t)]),
        "alerts filters": alert,
        "ai/rag": rag,
    }


def mcp_surfaces(url: str) -> dict[str, Surface]:
    """The MCP tools that take a query, called with the SDK's client on the served sidecar."""
    from .mcp_client import call

    def tool(name: str, argument: str) -> Surface:
        def surface(client: Any, headers: dict[str, str], text: str) -> tuple[int, bytes]:
            result = call(url, headers.get("X-Remote-User"), name, {argument: f"pump {text}"})
            shown = [getattr(c, "text", "") for c in result.content]
            body = {"error": result.is_error, "content": result.structured_content, "text": shown}
            return (400 if result.is_error else 200), json.dumps(body, sort_keys=True).encode()

        return surface

    return {"mcp search": tool("search", "query"), "mcp rag": tool("rag", "question")}


def workflow_surface(workflow_id: str, keys: dict[str, str]) -> dict[str, Surface]:
    """A workflow's ``query``, with the API key made for each user."""

    def surface(client: Any, headers: dict[str, str], text: str) -> tuple[int, bytes]:
        key = {"X-API-Key": keys[headers["X-Remote-User"]]}
        response = client.post(f"{API}/workflows/{workflow_id}/query", json={"query": f"pump {text}"}, headers=key)
        return response.status_code, response.get_data()

    return {"workflow query": surface}


def through_sidecar(
    rng: random.Random,
    client: Any,
    main: Any,
    corpus: Corpus,
    users: list[str],
    extra: dict[str, Surface] | None = None,
) -> Tally:
    """Every form of :func:`sidecar_forms` through every surface, as each user (a trusted header)."""
    tally = Tally()
    every = {**surfaces(main, corpus), **(extra or {})}
    for user in users:
        headers = {"X-Remote-User": user}
        secret, absent = secret_and_absent(rng, corpus, corpus.users[user])
        for name, surface in every.items():
            for label, text in sidecar_forms():
                answers = [surface(client, headers, text.replace(TERM, word)) for word in (secret, absent)]
                seen_secret, seen_absent = (normalized(a[1], (secret, absent)) for a in answers)
                tally.add(label, name, seen_secret, seen_absent, answers[0][0])
    return tally


@contextmanager
def judgement_off() -> Iterator[None]:
    """The control of the sidecar's surfaces: its users' parameters sent to Solr as its own (the
    door does not judge the service account's)."""
    kept = solr_search.CLIENT
    solr_search.CLIENT = ""
    try:
        yield
    finally:
        solr_search.CLIENT = kept
