"""Tools of external MCP servers for the agentic mode, reached with the official ``mcp`` SDK's
client (streamable HTTP): ``agentic.mcp.servers`` names them (``name=url``, comma-separated) and
their tools are offered to the model as ``<name>__<tool>``.

Their tools run with the identity the configuration gives them (``agentic.mcp.authorization``),
not the user's: what they return is not filtered by the product's ACLs — an administrator adds
only servers whose content every user may see. A server that cannot be listed is left out (and
tried again after a minute); a call that fails is told to the model.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..config import Settings

log = logging.getLogger(__name__)
SEPARATOR = "__"
LIST_AGAIN = 60.0  # seconds before the tools are listed again
_NAME = re.compile(r"[^A-Za-z0-9_-]")


class ExternalTools:
    def __init__(self, settings: Settings) -> None:
        self.servers = dict(
            (name.strip(), url.strip())
            for name, _, url in (item.partition("=") for item in settings.agentic_mcp_servers.split(","))
            if name.strip() and url.strip()
        )
        self.headers = (
            {"Authorization": settings.agentic_mcp_authorization} if settings.agentic_mcp_authorization else {}
        )
        self._specs: list[dict[str, Any]] = []
        self._where: dict[str, tuple[str, str]] = {}  # offered name -> (server url, tool name)
        self._listed = float("-inf")
        self._lock = threading.Lock()

    def specs(self) -> list[dict[str, Any]]:
        """The servers' tools in OpenAI's ``tools`` format (listed at most once a minute)."""
        if not self.servers:
            return []
        with self._lock:
            if time.monotonic() - self._listed >= LIST_AGAIN:
                self._specs, self._where = self._list()
                self._listed = time.monotonic()
            return list(self._specs)

    def offers(self, name: str) -> bool:
        with self._lock:
            return name in self._where

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """The tool's text result; raises RuntimeError saying why it failed."""
        with self._lock:
            url, tool = self._where[name]
        result = asyncio.run(self._session(url, lambda client: client.call_tool(tool, arguments)))
        text = "\n".join(getattr(part, "text", "") for part in result.content).strip()
        if result.is_error:
            raise RuntimeError(text or "the tool failed")
        return text or "(no text)"

    def _list(self) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]]]:
        specs: list[dict[str, Any]] = []
        where: dict[str, tuple[str, str]] = {}
        for server, url in self.servers.items():
            try:
                listed = asyncio.run(self._session(url, lambda client: client.list_tools()))
            except Exception as exc:  # one server down must not take the others with it
                log.warning("MCP server %s (%s) left out: %r", server, url, exc)
                continue
            for tool in listed.tools:
                offered = _NAME.sub("_", f"{server}{SEPARATOR}{tool.name}")[:64]
                where[offered] = (url, tool.name)
                function = {
                    "name": offered,
                    "description": tool.description or tool.name,
                    "parameters": tool.input_schema,
                }
                specs.append({"type": "function", "function": function})
        return specs, where

    async def _session(self, url: str, work: Any) -> Any:
        async with (
            httpx2.AsyncClient(headers=self.headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await work(client)
