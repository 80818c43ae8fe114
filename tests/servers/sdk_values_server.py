"""An MCP server written with the Python SDK whose tools return plain values (a list, an int, a str).

The SDK wraps each as ``{"result": value}`` structured content with a one-field ``<tool>Output`` schema;
the tool functions must return the value itself, typed as it is.
"""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("values")


@server.tool()
def primes(below: int) -> list[int]:
    """The primes below a number."""
    return [n for n in range(2, below) if all(n % d for d in range(2, n))]


@server.tool()
def count_words(text: str) -> int:
    """How many words a text has."""
    return len(text.split())


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool()
def point(x: float, y: float) -> dict[str, float]:
    """A point as a dict (which the SDK wraps too, a dict not being a model)."""
    return {"x": x, "y": y}


if __name__ == "__main__":
    server.run("stdio")
