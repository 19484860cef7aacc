"""Embedding throughput of the local agent over HTTP, against the same model in-process.

Prints one line: texts/s through the agent at batch 1 and 64, texts/s of the model called
in-process (the baseline, same texts, same run), the ratio, and the agent's memory.
"""

from __future__ import annotations

import time

import requests

from bench.common import Figure, emit, rss_mb, served_agent, texts_from_arguments
from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.testing.servers import free_port


def main() -> None:
    texts = texts_from_arguments(__doc__)

    embedder = SentenceEmbedder()
    began = time.perf_counter()
    embedder.embed(texts)
    in_process = len(texts) / (time.perf_counter() - began)

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1/embeddings"
    with served_agent(port) as agent, requests.Session() as http:
        rates = {}
        for batch in (1, 64):
            began = time.perf_counter()
            for start in range(0, len(texts), batch):
                http.post(url, json={"input": texts[start : start + batch]}, timeout=300).raise_for_status()
            rates[batch] = len(texts) / (time.perf_counter() - began)
        memory = rss_mb(agent.pid)
    emit(
        "embedding",
        f"embedding: agent {rates[1]:.1f} texts/s at batch 1, {rates[64]:.1f} texts/s at batch 64; "
        f"in-process {in_process:.1f} texts/s (ratio {rates[64] / in_process:.2f}); "
        f"agent RSS {memory:.0f} MB; {len(texts)} texts of <=1000 chars",
        Figure("agent texts/s, batch 64", rates[64], "/s"),
        Figure("agent / in-process throughput", rates[64] / in_process),
        Figure("agent RSS", memory, "MB"),
    )


if __name__ == "__main__":
    main()
