"""The only code that talks HTTP to Solr: client, admin APIs, model store, local runtime."""

from .client import SolrClient, SolrError

__all__ = ["SolrClient", "SolrError"]
