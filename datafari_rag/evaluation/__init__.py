"""Measuring the product on a corpus of one's own: retrieval quality (BEIR format)."""
