"""datafari-rag: retrieval-augmented answers over a Solr index, with document-level security."""

__version__ = "0.1.0"
