"""ManifoldCF document-level security as a Solr filter.

A document carries allow and deny tokens at three levels (share, parent, document). A user
with tokens T may read it when, at every level L::

    ((allow_L = __nosecurity__ AND deny_L = __nosecurity__) OR allow_L ∩ T ≠ ∅) AND deny_L ∩ T = ∅

The filter text is a constant; the tokens travel in request parameters (``acl_tokens``)
that ``{!terms}`` dereferences, so no token, however odd, is ever parsed as query syntax.

This is the sidecar's layer. Solr enforces the same rule itself (the ``{!manifoldCFSecurity}``
filter its secured handlers append): the sidecar names the user and their groups
(``AuthenticatedUserName``, ``AuthenticatedUserGroup``), which Solr honours from its service
account only, and Solr finds the tokens on its own. A document must pass both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LEVELS = ("share", "parent", "document")
NO_SECURITY = "__nosecurity__"
SEPARATOR = "\u001f"  # ASCII unit separator: cannot occur in a token (they are refused)


@dataclass(frozen=True)
class UserAccess:
    """A user and the tokens they hold; no tokens means only fully public documents."""

    username: str | None = None
    tokens: frozenset[str] = field(default_factory=frozenset)
    # Only the indexer's own reads (sync, reconcile, delete by query) are unrestricted;
    # no request handler ever builds one.
    unrestricted: bool = False
    groups: tuple[str, ...] = ()  # from the identity (JWT claim, header): Solr's layer maps them too

    @classmethod
    def anonymous(cls) -> UserAccess:
        return cls()

    @classmethod
    def indexer(cls) -> UserAccess:
        return cls(username="datafari-rag indexer", unrestricted=True)


def _level_clause(level: str, with_tokens: bool) -> str:
    public = f"(allow_token_{level}:{NO_SECURITY} AND deny_token_{level}:{NO_SECURITY})"
    if not with_tokens:
        return public
    terms = "{{!terms f={field}_token_{level} separator=$acl_sep v=$acl_tokens}}"
    allow = '_query_:"' + terms.format(field="allow", level=level) + '"'
    deny = '_query_:"' + terms.format(field="deny", level=level) + '"'
    return f"(({public} OR {allow}) AND NOT {deny})"


def acl_params(access: UserAccess) -> list[tuple[str, str]]:
    """The ``fq`` (and its token parameters) that restricts a search to what ``access`` may read."""
    if access.unrestricted:
        return []
    # Solr's own layer: who the user is (honoured from the service account only)
    named = [("AuthenticatedUserName", access.username)] if access.username else []
    named += [("AuthenticatedUserGroup", group) for group in access.groups]
    tokens = sorted(t for t in access.tokens if t and t != NO_SECURITY and SEPARATOR not in t)
    clause = " AND ".join(_level_clause(level, bool(tokens)) for level in LEVELS)
    params = [("fq", "{!lucene q.op=AND}" + clause), *named]
    if tokens:
        params += [("acl_tokens", SEPARATOR.join(tokens)), ("acl_sep", SEPARATOR)]
    return params
