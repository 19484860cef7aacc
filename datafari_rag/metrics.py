"""The sidecar's Prometheus metrics (prometheus-client), served at ``GET /metrics``.

Defined here, below every package that counts (the API, the LLM client, the embedding client,
indexing jobs). Under gunicorn every worker writes its values to ``PROMETHEUS_MULTIPROC_DIR``
(``conf/gunicorn.conf.py`` sets it) and a scrape adds them up, whichever worker answers; in one
process (tests, ``flask run``) the default registry is used.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client import generate_latest as _generate
from prometheus_client.multiprocess import MultiProcessCollector

SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

REQUESTS = Counter(
    "datafari_rag_requests", "HTTP requests answered, by endpoint, method and status", ["endpoint", "method", "status"]
)
REQUEST_SECONDS = Histogram(
    "datafari_rag_request_seconds", "Time to the response's first byte, by endpoint", ["endpoint"], buckets=SECONDS
)
ERRORS = Counter("datafari_rag_errors", "Errors told to clients, by Datafari label", ["label"])
CIRCUIT_OPEN = Gauge(
    "datafari_rag_solr_circuit_open", "1 while Solr's circuit is open in any process", multiprocess_mode="max"
)
ANSWER_SLOTS = Gauge(
    "datafari_rag_answer_slots_in_use", "Answers running now (they wait on the LLM)", multiprocess_mode="livesum"
)
LLM_CALLS = Counter("datafari_rag_llm_calls", "Calls to the LLM, by outcome (ok, error)", ["outcome"])
LLM_SECONDS = Histogram("datafari_rag_llm_seconds", "Time of one LLM call, retries included", buckets=SECONDS)
LLM_FALLBACKS = Counter("datafari_rag_llm_fallbacks", "LLM calls sent to a fallback model (llm.fallbackModels)")
LLM_TOKENS = Counter("datafari_rag_llm_tokens", "Tokens of LLM calls, by kind (prompt, completion)", ["kind"])
EMBEDDING_CALLS = Counter(
    "datafari_rag_embedding_calls", "Batches sent to the embedding service, by outcome (ok, error)", ["outcome"]
)
EMBEDDING_SECONDS = Histogram("datafari_rag_embedding_seconds", "Time of one embedding batch", buckets=SECONDS)
# an answer's steps take from under a millisecond (cite) to the LLM's seconds (generate)
STEP_SECONDS_BUCKETS = (0.0005, 0.001, 0.0025, *SECONDS)
PIPELINE_STEP_SECONDS = Histogram(
    "datafari_rag_pipeline_step_seconds",
    "Time of one step of an answer (guard, faq, rewrite, retrieve, assemble, pack, generate, cite…)",
    ["step"],
    buckets=STEP_SECONDS_BUCKETS,
)
INDEX_JOBS = Gauge("datafari_rag_index_jobs_running", "Indexing jobs running now", multiprocess_mode="livesum")


@contextmanager
def timed_call(calls: Counter, seconds: Histogram) -> Iterator[None]:
    """Counts one call with its outcome and time."""
    began = time.monotonic()
    try:
        yield
    except BaseException:
        calls.labels("error").inc()
        raise
    else:
        calls.labels("ok").inc()
    finally:
        seconds.observe(time.monotonic() - began)


def exposition() -> tuple[bytes, str]:
    """Every process's metrics in Prometheus' text format, and its content type."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return _generate(registry), CONTENT_TYPE_LATEST
    return _generate(REGISTRY), CONTENT_TYPE_LATEST
