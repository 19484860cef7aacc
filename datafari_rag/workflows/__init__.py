"""Workflows: named pipelines (retrieval, enhancers, filters, ranker, strategy, prompt, chunker)
kept in the relational store, each with its API keys; the default one is what ``ai/rag`` runs."""
