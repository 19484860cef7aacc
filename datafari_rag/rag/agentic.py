"""The agentic mode (Datafari 7.0's ``agentic``, chat-core's "pa"): the LLM answers in a
tool-calling loop (OpenAI's ``tools`` format) over the product's own tools, each run with the
calling user's access — never more than the user may read.

Tools: ``hybrid_search`` (BM25 and kNN fused), ``bm25_search``, ``search_in_document``,
``read_document`` (a document part by part) and ``summarize``. The documents they return are
numbered across the whole run, so the final answer cites them ([1], [2] …) and its references
are checked as in the other modes. The loop is bounded: ``agentic.maxSteps`` model turns,
``agentic.maxToolCalls`` tool calls in all and ``agentic.deadline`` seconds; past a bound the
model is asked for its answer without tools. Events: ``tool.start``, ``tool.end`` (status and
duration) and ``tool.result`` (a preview and the sources found) for each call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from ..errors import DatafariError
from ..llm import LlmError, ToolCall, ToolCallingLlm, Usage
from ..prompts import PromptContext, snippet_text
from ..retrieval import RetrievalContext, Snippet, retrieve_document
from ..retrieval.bm25 import bm25_documents
from ..retrieval.hybrid import rrf
from ..security import UserAccess
from ..solr import SolrError
from .hygiene import clean_snippet
from .mcp_tools import ExternalTools

RESULT_CHARS = 6000  # of one tool result sent back to the model
PREVIEW = 300
PART_CHARS = 3000  # read_document's parts


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


_QUERY = {"type": "string", "description": "what to look for"}
_ID = {"type": "string", "description": "a document's id, as a search returned it"}
TOOLS = [
    _tool("hybrid_search", "Search the documents (keywords and meaning fused).", {"query": _QUERY}, ["query"]),
    _tool("bm25_search", "Search the documents by keywords.", {"query": _QUERY}, ["query"]),
    _tool(
        "search_in_document",
        "The passages of one document nearest to a query.",
        {"id": _ID, "query": _QUERY},
        ["id", "query"],
    ),
    _tool(
        "read_document",
        "Read one document, part by part (part 0 first).",
        {"id": _ID, "part": {"type": "integer", "minimum": 0}},
        ["id"],
    ),
    _tool("summarize", "A short summary of one document.", {"id": _ID}, ["id"]),
]


@dataclass(frozen=True)
class AgentLimits:
    """How long an agentic run may go (``agentic.*``), read once per pipeline."""

    deadline: float  # agentic.deadline: seconds
    max_steps: int  # agentic.maxSteps: model turns
    max_tool_calls: int  # agentic.maxToolCalls

    @classmethod
    def of(cls, settings: Settings) -> AgentLimits:
        return cls(settings.agentic_deadline, settings.agentic_max_steps, settings.agentic_max_tool_calls)


@dataclass
class AgentRun:
    limits: AgentLimits
    retrieval: RetrievalContext
    llm: ToolCallingLlm
    summarize: Callable[[str, str | None, UserAccess], str]
    usage: Usage
    lang: str | None = None
    external: ExternalTools | None = None  # tools of external MCP servers (agentic.mcp.servers)
    sources: list[dict[str, Any]] = field(default_factory=list)  # numbered in order of first appearance

    def events(self, ctx: PromptContext) -> Iterator[Any]:
        """Yields (event type, data) pairs; the last is ("answer", raw text)."""
        s = self.limits
        prompt = ctx.prompt("agent")
        messages: list[dict[str, Any]] = [dict(m) for m in prompt.messages()]
        ends = time.monotonic() + s.deadline
        calls_left = s.max_tool_calls
        tools = TOOLS + (self.external.specs() if self.external else [])
        for _ in range(s.max_steps):
            if time.monotonic() >= ends or calls_left <= 0:
                break
            turn = self._chat(messages, tools)
            if not turn.tool_calls:
                yield "answer", turn.content
                return
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.content or None,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                        for c in turn.tool_calls
                    ],
                }
            )
            for call in turn.tool_calls:
                found: list[dict[str, Any]]
                if calls_left <= 0 or time.monotonic() >= ends:
                    result, status, found = "Not run: the tool budget of this answer is spent.", "skipped", []
                else:
                    calls_left -= 1
                    yield "tool.start", {"id": call.id, "name": call.name, "arguments": _arguments(call)}
                    began = time.monotonic()
                    result, status, found = self._run(call)
                    took = int((time.monotonic() - began) * 1000)
                    yield "tool.end", {"id": call.id, "name": call.name, "status": status, "duration_ms": took}
                    yield (
                        "tool.result",
                        {"id": call.id, "name": call.name, "preview": result[:PREVIEW], "sources": found},
                    )
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result[:RESULT_CHARS]})
        # a bound was reached: the answer from what was found, without tools
        yield "answer", self._chat(messages, None).content

    def _chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Any:
        try:
            return self.llm.chat(messages, tools, self.usage)
        except LlmError as exc:
            raise DatafariError("ragTechnicalError", "The language model failed.", detail=str(exc)) from exc

    def _run(self, call: ToolCall) -> tuple[str, str, list[dict[str, Any]]]:
        """(the result sent back to the model, status, the sources it brought)."""
        args = _arguments(call)
        try:
            if call.name == "hybrid_search":
                return self._shown(rrf(self.retrieval, _text(args, "query")))
            if call.name == "bm25_search":
                found = bm25_documents(self.retrieval, _text(args, "query"), self.retrieval.params.max_files)
                return self._shown([_cut(x) for x in found])
            if call.name == "search_in_document":
                passages = retrieve_document(self.retrieval, _text(args, "id"), _text(args, "query"), mode="rrf")
                return self._shown(passages) if passages else ("No readable document has this id.", "ok", [])
            if call.name == "read_document":
                return self._part(_text(args, "id"), args.get("part", 0))
            if call.name == "summarize":
                doc_id = _text(args, "id")
                summary = self.summarize(doc_id, self.lang, self.retrieval.access)
                return summary, "ok", []
            if self.external is not None and self.external.offers(call.name):
                return self._external(call.name, args)
            return f"There is no tool named {call.name!r}.", "error", []
        except (ValueError, TypeError) as exc:
            return f"The tool's arguments are not valid: {exc}", "error", []
        except DatafariError as exc:
            return f"The tool failed: {exc.reason or exc.message}", "error", []
        except SolrError:
            return "The search failed.", "error", []

    def _external(self, name: str, args: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
        try:
            return self.external.call(name, args), "ok", []  # type: ignore[union-attr]
        except Exception as exc:  # an external server's failure is the model's to know, not the answer's
            return f"The tool failed: {exc}", "error", []

    def _part(self, doc_id: str, part: Any) -> tuple[str, str, list[dict[str, Any]]]:
        if not isinstance(part, int) or part < 0:
            raise ValueError("'part' must be a whole number from 0")
        found = retrieve_document(self.retrieval, doc_id, None)  # no query: the whole document
        if not found:
            return "No readable document has this id.", "ok", []
        whole = found[0]
        parts = max(1, -(-len(whole.content) // PART_CHARS))
        if part >= parts:
            return f"The document has {parts} part(s), numbered from 0.", "error", []
        piece = Snippet(whole.id, whole.title, whole.url, whole.content[part * PART_CHARS : (part + 1) * PART_CHARS])
        text, status, found_sources = self._shown([piece])
        return f"Part {part} of {parts}.\n{text}", status, found_sources

    def _shown(self, found: list[Snippet]) -> tuple[str, str, list[dict[str, Any]]]:
        """Passages as numbered document blocks; each new document joins the run's sources."""
        if not found:
            return "Nothing readable was found.", "ok", []
        blocks, brought = [], []
        for x in found:
            number = self._number(x)
            brought.append(self.sources[number - 1])
            blocks.append(snippet_text(clean_snippet(x.title), clean_snippet(x.content), number))
        unique = list({s["url"]: s for s in brought}.values())
        return "\n\n".join(blocks), "ok", unique

    def _number(self, x: Snippet) -> int:
        for i, source in enumerate(self.sources, start=1):
            if source["url"] == x.url:
                return i
        self.sources.append({"id": x.id, "title": x.title, "url": x.url, "content": x.content[:PREVIEW]})
        return len(self.sources)


def _arguments(call: ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _text(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'{name}' must be a non-empty string")
    return value[:2000]


def _cut(x: Snippet) -> Snippet:
    return Snippet(x.id, x.title, x.url, x.content[:PART_CHARS], x.score)
