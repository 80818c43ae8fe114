"""An MCP server written with the Python SDK whose tools ask their client back during the call.

- ``book_table(restaurant)``: a form question (``elicitation/create``) with four fields, each with a
  default: date (string), guests (integer 1-20), vegetarian (boolean), seating (enum); returns the action
  and the content the client sent.
- ``verify_account()``: a URL-mode question (a page to visit); returns the action.
- ``hostile(kind)``: a question whose schema is hostile (``deep``, ``huge``, ``odd``, ``many``); returns
  what the client answered or the error it sent.
- ``summarize(text)``: asks the client's model (``sampling/createMessage``); returns its text and model.
- ``where()``: asks the client's roots (``roots/list``); returns their URIs.
- ``reserve(show)``: asks for a number of seats through the SDK's resolvers (``Resolve``/``Elicit``): a
  request mid-call on the handshake protocols, an ``InputRequiredResult`` round on 2026-07-28.

Run: ``python tests/servers/asking_server.py`` (stdio) or ``... http PORT`` (Streamable HTTP).
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import mcp_types as types
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, Resolve
from pydantic import BaseModel

server = MCPServer("asking")

BOOKING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "title": "Date", "description": "the day", "default": "2026-12-24"},
        "guests": {"type": "integer", "minimum": 1, "maximum": 20, "default": 2},
        "vegetarian": {"type": "boolean", "default": False},
        "seating": {"type": "string", "enum": ["inside", "terrace"], "default": "inside"},
    },
    "required": ["date", "guests"],
}


def _hostile_schema(kind: str) -> dict[str, Any]:
    if kind in ("deep", "deeper"):  # deeper: past the 200 levels the hub's stdio reader reads at all
        nested: dict[str, Any] = {"type": "string"}
        for _ in range(60 if kind == "deep" else 100):
            nested = {"type": "object", "properties": {"x": nested}}
        return {"type": "object", "properties": {"x": nested}}
    if kind == "huge":
        return {"type": "object", "properties": {"note": {"type": "string", "description": "x" * 2_000_000}}}
    if kind == "many":
        return {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(5000)}}
    # odd types: a field whose type is a list, one that is an object, a number as a field schema
    return {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "object"}}}


@server.tool()
async def book_table(restaurant: str, ctx: Context[Any, Any]) -> dict[str, Any]:
    """Book a table; asks the person for the date, the number of guests and the seating."""
    result = await ctx.session.elicit(
        f"Booking at {restaurant}: when, and for how many?", BOOKING_SCHEMA, related_request_id=ctx.request_id
    )
    return {"action": result.action, "content": result.content}


@server.tool()
async def verify_account(ctx: Context[Any, Any]) -> dict[str, Any]:
    """Ask the person to confirm their account on a web page (URL-mode elicitation)."""
    result = await ctx.elicit_url(
        "Confirm your account to continue", "https://example.com/verify?session=abc", "verify-1"
    )
    return {"action": result.action}


@server.tool()
async def hostile(kind: str, ctx: Context[Any, Any]) -> dict[str, Any]:
    """Ask a question whose schema is hostile: deep, huge, many fields or odd types."""
    try:
        schema = _hostile_schema(kind)
        result = await ctx.session.elicit("answer this", schema, related_request_id=ctx.request_id)
    except MCPError as exc:
        return {"error": exc.error.message}
    except Exception as exc:  # the SDK's own limits on what it sends (recursion, size)
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"action": result.action, "content": result.content}


@server.tool()
async def summarize(text: str, ctx: Context[Any, Any]) -> dict[str, Any]:
    """Ask the client's model to summarize a text in one line."""
    try:
        result = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(text=f"Summarize: {text}"))],
            max_tokens=100,
            system_prompt="Answer in one line.",
            related_request_id=ctx.request_id,
        )
    except MCPError as exc:
        return {"error": exc.error.message}
    content = result.content
    return {"text": content.text if isinstance(content, types.TextContent) else "", "model": result.model}


class Seats(BaseModel):
    """The form of ``reserve``: how many seats (default 2)."""

    seats: int = 2


def ask_seats(show: str) -> Elicit[Seats]:
    """The resolver of ``reserve``: the SDK asks mid-call (handshake) or ends the call asking (2026-07-28)."""
    return Elicit(f"How many seats for {show}?", Seats)


@server.tool()
async def reserve(show: str, answer: Annotated[Seats, Resolve(ask_seats)]) -> dict[str, Any]:
    """Reserve seats; the number is asked of the person through the SDK's resolvers (either protocol)."""
    return {"show": show, "seats": answer.seats}


@server.tool()
async def where(ctx: Context[Any, Any]) -> list[str]:
    """The client's roots (their URIs)."""
    result = await ctx.session.list_roots()
    return [str(root.uri) for root in result.roots]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
