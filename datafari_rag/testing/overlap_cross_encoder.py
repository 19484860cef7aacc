"""A cross-encoder folder for tests: a real ONNX graph, run by onnxruntime through the product's
loader, that scores a (query, passage) pair by how many passage tokens occur in the query.

No trained cross-encoder comes inside a package, and nothing may be downloaded, so the rerank
path is tested with this transparent model: its ranking is known in advance (term overlap), which
is what lets a test tell a reranked order from the retrieval order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from ..agent.model import model_dir

FIRST_WORD_ID = 999  # ids below are [PAD], [unused…], [UNK], [CLS], [SEP], [MASK]


def _graph() -> onnx.ModelProto:
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])
    types = helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "tokens"])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    const = [
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.INT64, [], [0])),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", TensorProto.INT64, [], [1])),
        helper.make_node(
            "Constant", [], ["first"], value=helper.make_tensor("f", TensorProto.INT64, [], [FIRST_WORD_ID])
        ),
        helper.make_node("Constant", [], ["ax1"], value=helper.make_tensor("a1", TensorProto.INT64, [1], [1])),
        helper.make_node("Constant", [], ["ax2"], value=helper.make_tensor("a2", TensorProto.INT64, [1], [2])),
    ]
    nodes = [
        # which positions are query (segment A) and passage (segment B) words
        helper.make_node("Equal", ["attention_mask", "one"], ["real"]),
        helper.make_node("Greater", ["input_ids", "first"], ["word"]),
        helper.make_node("And", ["real", "word"], ["real_word"]),
        helper.make_node("Equal", ["token_type_ids", "zero"], ["in_a"]),
        helper.make_node("Equal", ["token_type_ids", "one"], ["in_b"]),
        helper.make_node("And", ["real_word", "in_a"], ["a"]),
        helper.make_node("And", ["real_word", "in_b"], ["b"]),
        # same[i, p, q]: token p equals token q; keep p in B and q in A
        helper.make_node("Unsqueeze", ["input_ids", "ax2"], ["ids_p"]),
        helper.make_node("Unsqueeze", ["input_ids", "ax1"], ["ids_q"]),
        helper.make_node("Equal", ["ids_p", "ids_q"], ["same"]),
        helper.make_node("Unsqueeze", ["b", "ax2"], ["b_p"]),
        helper.make_node("Unsqueeze", ["a", "ax1"], ["a_q"]),
        helper.make_node("And", ["same", "b_p"], ["same_b"]),
        helper.make_node("And", ["same_b", "a_q"], ["pair"]),
        helper.make_node("Cast", ["pair"], ["pair_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMax", ["pair_f", "ax2"], ["found"], keepdims=0),
        helper.make_node("ReduceSum", ["found", "ax1"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(const + nodes, "overlap", [ids, mask, types], [logits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


def write_overlap_cross_encoder(folder: Path) -> Path:
    """``folder`` with ``model.onnx`` and MiniLM's ``tokenizer.json`` (BERT's WordPiece)."""
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(_graph(), str(folder / "model.onnx"))
    shutil.copy(model_dir() / "tokenizer.json", folder / "tokenizer.json")
    return folder
