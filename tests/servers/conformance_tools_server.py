"""The tools the MCP conformance suite's ``tools-call-*`` scenarios call, written with the Python SDK.

The suite tests a server by calling tools of fixed names (``test_simple_text``, ``test_image_content``, ...)
and checking what comes back. ``codemode serve`` offers a configured server's excluded tools under their own
names, answered as the server answered, so with this server behind it (every tool excluded from code mode)
those scenarios check what its passthrough delivers: every content type, ``isError``, progress and the
input schema as published (``tests/integration/test_conformance_serve.py``).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from pydantic import ConfigDict

# A 1x1 transparent PNG and a WAV header with no samples: real formats, as small as they come.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
WAV = (
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
)
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


class _Arguments(ArgModelBase):
    """Whatever arguments come, passed on as they are (the schema below is the published one)."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Names the arguments it got."""
    return f"received {sorted(arguments)}"


# Its input schema exactly as the suite words it (the SDK would derive another from a signature).
server = MCPServer(
    "conformance",
    tools=[
        Tool(
            fn=json_schema_2020_12_tool,
            name="json_schema_2020_12_tool",
            description="Tool with JSON Schema 2020-12 features",
            parameters=JSON_SCHEMA_2020_12,
            fn_metadata=FuncMetadata(arg_model=_Arguments),
            is_async=False,
            title=None,
            context_kwarg=None,
            annotations=None,
        )
    ],
)


def _image() -> ImageContent:
    return ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")


def _resource() -> EmbeddedResource:
    contents = TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return EmbeddedResource(type="resource", resource=contents)


@server.tool()
def test_simple_text() -> CallToolResult:
    """Returns one text block."""
    return CallToolResult(
        content=[TextContent(type="text", text="This is a simple text response for testing.")]
    )


@server.tool()
def test_image_content() -> CallToolResult:
    """Returns one PNG image block."""
    return CallToolResult(content=[_image()])


@server.tool()
def test_audio_content() -> CallToolResult:
    """Returns one WAV audio block."""
    audio = AudioContent(type="audio", data=base64.b64encode(WAV).decode(), mime_type="audio/wav")
    return CallToolResult(content=[audio])


@server.tool()
def test_embedded_resource() -> CallToolResult:
    """Returns one embedded text resource."""
    return CallToolResult(content=[_resource()])


@server.tool()
def test_multiple_content_types() -> CallToolResult:
    """Returns text, an image and an embedded resource in one result."""
    text = TextContent(type="text", text="Multiple content types test:")
    return CallToolResult(content=[text, _image(), _resource()])


@server.tool()
def test_error_handling() -> CallToolResult:
    """Always fails, as a tool's error (isError), not a protocol error."""
    text = TextContent(type="text", text="This tool intentionally returns an error for testing")
    return CallToolResult(content=[text], is_error=True)


@server.tool()
async def test_tool_with_progress(ctx: Context[Any, Any]) -> str:
    """Reports progress 0, 50 and 100 of 100, then answers."""
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"{done}% done")
        await asyncio.sleep(0.05)
    return "Progress test completed"


ELICITATION_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
SEP1034_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}
SEP1330_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


async def _elicit(ctx: Context[Any, Any], message: str, schema: dict[str, Any]) -> str:
    """Ask the client with ``schema`` as it is (the SDK's ctx.elicit takes a model instead)."""
    result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return f"action={result.action}, content={result.content}"


@server.tool()
async def test_elicitation(message: str, ctx: Context[Any, Any]) -> str:
    """Asks the client for a username and an email."""
    return "User response: " + await _elicit(ctx, message, ELICITATION_SCHEMA)


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context[Any, Any]) -> str:
    """Asks with a default for every primitive type (SEP-1034)."""
    return "Elicitation completed: " + await _elicit(ctx, "Please review your details", SEP1034_SCHEMA)


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context[Any, Any]) -> str:
    """Asks with the five enum forms of SEP-1330."""
    return "Elicitation completed: " + await _elicit(ctx, "Please choose", SEP1330_SCHEMA)


if __name__ == "__main__":
    server.run("stdio")
