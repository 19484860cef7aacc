"""The RAG pipeline: retrieve → chunk → pack → refine / map-reduce → cite."""
