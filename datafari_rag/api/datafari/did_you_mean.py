""" "Did you mean": a spelling of a search that found nothing, shown only when it finds documents
the user may read.

Solr's spellchecker (FileShare's ``/spell``, the service account's only) proposes spellings from
the words of every document, readable or not. Each proposal is then searched as the user, with
the user's filter and filters, every word required (``q.op=AND``): the first that finds a document
is the suggestion; none that does, no suggestion. A word that exists only in documents the user
may not read can therefore never be suggested. DatafariUI reads it as Solr's flat collations
(``["collation", "<the query>"]``) and searches it at once.
"""

from __future__ import annotations

from typing import Any

from ...security.acl import UserAccess
from ...solr import SolrError
from ...solr.collection import Collection
from ...solr.search import from_user

MAX_WORDS = 8  # longer queries are not respelled


def candidates(main: Collection, access: UserAccess, query: str) -> list[str]:
    """Solr's proposed spellings of ``query``, best first (unverified: never shown as they are)."""
    params = [("q", query), ("spellcheck.q", query), ("rows", 0)]
    found = main.search("spell", params, access).get("spellcheck", {})
    flat = found.get("collations") or []
    proposals = [flat[i + 1] for i in range(0, len(flat) - 1, 2) if flat[i] == "collation"]
    texts = [p if isinstance(p, str) else p.get("collationQuery", "") for p in proposals]
    return [t for t in dict.fromkeys(texts) if t and t.strip().lower() != query.strip().lower()]


def finds_readable(main: Collection, access: UserAccess, query: str, filters: list[tuple[str, Any]]) -> bool:
    """Whether the proposal finds a document the user may read under the page's filters (the
    user's own parameters, as the page's search sent them)."""
    params = [from_user("q", query), ("defType", "edismax"), ("q.op", "AND"), ("rows", 0), ("hl", "false"), *filters]
    return int(main.search("select", params, access)["response"]["numFound"]) > 0


def suggestion(main: Collection, access: UserAccess, query: str, filters: list[tuple[str, Any]]) -> str | None:
    """The first proposed spelling that finds a document ``access`` may read under ``filters``."""
    if not query.strip() or query.strip() == "*:*" or len(query.split()) > MAX_WORDS:
        return None
    try:
        for proposal in candidates(main, access, query):
            if finds_readable(main, access, proposal, filters):
                return proposal
    except SolrError:  # a suggestion is a courtesy: the results stand without it
        return None
    return None
