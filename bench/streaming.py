"""First-token latency of ``ai/stream``: how long after the LLM emits its first token the client
receives it, through the sidecar (gunicorn, NDJSON) vs straight from the same streaming stub
(the baseline, same run). Prints one line with p50/p99 of both; target: sidecar p50 <= 50 ms.
"""

from __future__ import annotations

import argparse
import json
import time

import requests

from bench.common import Figure, bench_stack, emit, percentile
from datafari_rag.testing.fake_llm import FakeLlm
from datafari_rag.testing.servers import free_port, serve, served_sidecar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="10 requests")
    args = parser.parse_args()
    count = 10 if args.quick else args.requests
    # the stub thinks 300 ms before its first token, then streams quickly
    stub = FakeLlm(answer=lambda prompt: "The answer comes word by word " * 4, delay=0.3, chunk_delay=0.01)
    with (
        bench_stack() as (settings, _, _agent),
        serve(stub.app()) as llm,
        served_sidecar(settings.replace(llm_endpoint=f"{llm}/v1"), free_port()) as base,
    ):
        via_sidecar, direct = [], []
        for i in range(count + 3):
            with requests.post(
                f"{base}/Datafari/rest/v2.0/ai/stream", json={"query": "paid leave"}, stream=True, timeout=60
            ) as response:
                for line in response.iter_lines():
                    if json.loads(line)["type"] == "message.delta":
                        arrived = time.time()
                        break
                for _ in response.iter_lines():
                    pass
            sidecar_ms = (arrived - stub.first_piece_at[-1]) * 1000
            with requests.post(
                f"{llm}/v1/chat/completions",
                stream=True,
                timeout=60,
                json={"stream": True, "messages": [{"role": "user", "content": "x"}]},
            ) as response:
                for line in response.iter_lines():
                    if line.startswith(b"data: {") and b'"content": "' in line and b'"content": ""' not in line:
                        arrived = time.time()
                        break
                for _ in response.iter_lines():
                    pass
            direct_ms = (arrived - stub.first_piece_at[-1]) * 1000
            if i >= 3:  # warm-up
                via_sidecar.append(sidecar_ms)
                direct.append(direct_ms)
    first = percentile(via_sidecar, 50)
    emit(
        "streaming",
        f"streaming: first token reaches the client {first:.1f} ms (p99 "
        f"{percentile(via_sidecar, 99):.1f}) after the LLM emits it, through the sidecar; "
        f"{percentile(direct, 50):.1f} ms (p99 {percentile(direct, 99):.1f}) straight from the stub; "
        f"target <= 50 ms ({count} streams)",
        Figure("first token delay through the sidecar, p50", first, "ms", "<= 50 ms", first <= 50),
    )


if __name__ == "__main__":
    main()
