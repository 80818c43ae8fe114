"""An MCP server (Python SDK, low-level API) whose schemas point ``$ref`` outside themselves.

Started as ``remote_refs_server.py FILE_URL HTTP_URL``: ``file_ref``'s input schema refers to the file,
``http_ref``'s to the address, and ``output_refs``'s outputSchema to both. A client that fetched what they
point at would read a file on its host or make a request for the server; the kernel must do neither.
Each tool answers with the arguments it received (``output_refs`` as structuredContent too).

The low-level API is used because ``MCPServer`` derives schemas from type hints and cannot say these.
"""

from __future__ import annotations

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

FILE_URL, HTTP_URL = sys.argv[1], sys.argv[2]

TOOLS = [
    types.Tool(
        name="file_ref",
        description="Echo the arguments; x's schema is in a file.",
        input_schema={"type": "object", "properties": {"x": {"$ref": FILE_URL}}},
    ),
    types.Tool(
        name="http_ref",
        description="Echo the arguments; x's schema is at an address.",
        input_schema={"type": "object", "properties": {"x": {"$ref": HTTP_URL}}},
    ),
    types.Tool(
        name="output_refs",
        description="Echo the arguments; the result's schema is in a file and at an address.",
        input_schema={"type": "object", "properties": {"y": {}, "z": {}}},
        output_schema={"type": "object", "properties": {"y": {"$ref": FILE_URL}, "z": {"$ref": HTTP_URL}}},
    ),
]


async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    text = json.dumps(arguments, sort_keys=True)
    structured = arguments if params.name == "output_refs" else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


server: Server[object] = Server("remote-refs", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
