"""The official MCP SDK's client, as a test or a harness calls the product's ``/mcp``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def call(url: str, user: str | None, tool: str | None = None, arguments: dict[str, Any] | None = None) -> Any:
    """Lists the tools (no ``tool``) or calls one, as ``user`` (a trusted header), with the SDK's client."""

    async def run() -> Any:
        headers = {"X-Remote-User": user} if user else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            if tool is None:
                return await client.list_tools()
            return await client.call_tool(tool, arguments or {})

    return asyncio.run(run())
