"""A server's tools/list, every page, taken as it is sent even when it breaks the spec."""

from __future__ import annotations

import logging
from typing import Any

from mcp import Client
from mcp.shared.dispatcher import CallOptions
from pydantic import ValidationError

from ..core.toolspec import ToolSpec

__all__ = ["list_tools"]

log = logging.getLogger(__name__)

_MAX_PAGES = 1000  # a server that pages forever must not hang the hub


async def list_tools(client: Client, server: str) -> tuple[dict[str, ToolSpec], list[str]]:
    """Every tool the server lists (by name, in its order) and the warnings about them (also logged)."""
    raw: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await _list_page(client, cursor)
        raw.extend(page.get("tools") or [])
        cursor = page.get("nextCursor")
        if not cursor:
            break
    specs = [ToolSpec.from_wire(server, tool) for tool in raw if isinstance(tool, dict)]
    warnings = [f"{server}: {w}" for spec in specs for w in spec.warnings]
    for warning in warnings:
        log.warning("%s", warning)
    return {spec.name: spec for spec in specs}, warnings


async def _list_page(client: Client, cursor: str | None) -> dict[str, Any]:
    try:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
    except ValidationError:
        # The SDK refuses listings that break the spec (an inputSchema without "type" is common in
        # the wild). Ask again and take the raw answer; ToolSpec.from_wire repairs it with a warning.
        return await _raw_request(client, "tools/list", {"cursor": cursor} if cursor else None)
    dumped: dict[str, Any] = page.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


async def _raw_request(client: Client, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """Send a request and return the raw JSON result, skipping the SDK's result validation.

    Uses two private attributes of the SDK's ClientSession (pinned to ``mcp<3``); the tests run it
    against a server that sends the malformed listings this exists for.
    """
    session = client.session
    data: dict[str, Any] = {"method": method}
    if params:
        data["params"] = params
    opts: CallOptions = {}
    session._stamp(data, opts)
    result: dict[str, Any] = await session._dispatcher.send_raw_request(method, data.get("params"), opts)
    return result
