"""Throughput of each embedding model the agent serves, in-process, on the same texts.

Prints one line: texts/s of bge-small-en-v1.5 (onnxruntime, from its Maven jar) against
all-MiniLM-L6-v2 (the baseline, numpy), each text embedded alone as the agent does, in the same
run. docs/evaluation.md puts these beside each model's nDCG@10.
"""

from __future__ import annotations

import time

from bench.common import Figure, emit, texts_from_arguments
from datafari_rag.agent.model import SentenceEmbedder
from datafari_rag.agent.onnx_model import BGE_SMALL, OnnxEmbedder


def rate(embed: object, texts: list[str]) -> float:
    embed([texts[0]])  # type: ignore[operator]  # loads and warms the model
    began = time.perf_counter()
    embed(texts)  # type: ignore[operator]
    return len(texts) / (time.perf_counter() - began)


def main() -> None:
    texts = texts_from_arguments(__doc__)
    minilm = rate(SentenceEmbedder().embed, texts)
    bge = rate(OnnxEmbedder(BGE_SMALL).embed, texts)
    emit(
        "models",
        f"models: bge-small-en-v1.5 {bge:.1f} texts/s vs all-MiniLM-L6-v2 {minilm:.1f} texts/s "
        f"(ratio {bge / minilm:.2f}); {len(texts)} texts of <=1000 chars, in-process, 2 threads",
        Figure("bge-small-en-v1.5 texts/s", bge, "/s"),
        Figure("bge / MiniLM throughput", bge / minilm),
    )


if __name__ == "__main__":
    main()
