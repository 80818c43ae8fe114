"""An MCP server (Python SDK, low-level API) whose input schemas accept null and extra keys.

Each tool answers with the arguments it received, as JSON text, so a test sees exactly what arrived.
The schemas are the shapes real servers send and typed functions used to refuse:

- ``search``: ``lang`` is ``"nullable": true`` (OpenAPI 3.0 style, which JSON Schema itself ignores).
- ``tag``: a top-level ``anyOf`` whose alternatives take extra keys (``additionalProperties: true``,
  ``patternProperties``).
- ``note``: ``meta`` has no type at all (typed ``Any``), so null is one of its values.
- ``classify``: a property named ``class`` (a Python keyword, so ``class_`` in Python) next to
  ``additionalProperties: true``, which allows a key ``class_`` too.

The low-level API is used because ``MCPServer`` derives schemas from type hints and cannot say these.
"""

from __future__ import annotations

import json

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name="search",
        description="Echo the arguments.",
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string"}, "lang": {"type": "string", "nullable": True}},
            "required": ["query"],
        },
    ),
    types.Tool(
        name="tag",
        description="Echo the arguments.",
        input_schema={
            "type": "object",
            "anyOf": [
                {
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": True,
                },
                {
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"],
                    "patternProperties": {"^x-": {"type": "string"}},
                    "additionalProperties": False,
                },
            ],
        },
    ),
    types.Tool(
        name="note",
        description="Echo the arguments.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}, "meta": {"description": "anything, null too"}},
            "required": ["text"],
        },
    ),
    types.Tool(
        name="classify",
        description="Echo the arguments.",
        input_schema={
            "type": "object",
            "properties": {"class": {"type": "integer"}},
            "additionalProperties": True,
        },
    ),
]


async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = json.dumps(params.arguments or {}, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[object] = Server("open-schemas", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
