"""Scores from a local cross-encoder exported to ONNX (e.g. a sentence-transformers
``cross-encoder/ms-marco-*`` model through ``optimum``): the folder holds one ``.onnx`` file and
the model's ``tokenizer.json``. Nothing is downloaded; the user provides the folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from ...llm import Usage
from . import RerankError

BATCH = 16
MAX_TOKENS = 512


class CrossEncoderScorer:
    """Each (query, passage) pair is encoded together, as the model was trained; the score is the
    logit (one output) or the positive class's margin (two outputs)."""

    def __init__(self, folder: str) -> None:
        where = Path(folder)
        models = sorted(where.glob("*.onnx")) if where.is_dir() else []
        if not models or not (where / "tokenizer.json").is_file():
            raise RerankError(f"rerank.onnx.path: {folder!r} must be a folder with a .onnx file and tokenizer.json")
        try:
            self.tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 2
            self.session = onnxruntime.InferenceSession(str(models[0]), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime and tokenizers raise their own types
            raise RerankError(f"rerank.onnx.path: cannot load the model: {exc}") from exc
        self.tokenizer.enable_truncation(MAX_TOKENS, strategy="only_second")
        self.tokenizer.enable_padding()
        self.inputs = {i.name for i in self.session.get_inputs()}

    def scores(self, query: str, passages: list[str], usage: Usage | None = None) -> list[float]:
        out: list[float] = []
        for start in range(0, len(passages), BATCH):
            out += self._batch(query, passages[start : start + BATCH])
        return out

    def _batch(self, query: str, passages: list[str]) -> list[float]:
        encoded = self.tokenizer.encode_batch([(query, p) for p in passages])
        columns = {
            "input_ids": [e.ids for e in encoded],
            "attention_mask": [e.attention_mask for e in encoded],
            "token_type_ids": [e.type_ids for e in encoded],
        }
        feed = {name: np.asarray(values, dtype=np.int64) for name, values in columns.items() if name in self.inputs}
        try:
            logits = np.asarray(self.session.run(None, feed)[0], dtype=np.float64).reshape(len(passages), -1)
        except Exception as exc:
            raise RerankError(f"the cross-encoder failed: {exc}") from exc
        column = logits[:, 0] if logits.shape[1] == 1 else logits[:, -1] - logits[:, 0]
        return [float(x) for x in column]
