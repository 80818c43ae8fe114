"""A stdio MCP server that counts its calls in a file, for the tests that must prove no call is made twice.

``count(label)`` appends ``label`` to the file named by ``--log`` and returns how many times that label
was counted so far; ``slow_count(label, seconds)`` does the same after ``seconds``. The file survives the
server, so a test reads every call that reached it, whichever run or node asked.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from mcp.server import MCPServer


def build(log: Path) -> MCPServer:
    server = MCPServer("counting")

    def record(label: str) -> int:
        with log.open("a") as file:
            file.write(label + "\n")
        return log.read_text().splitlines().count(label)

    @server.tool()
    def count(label: str) -> int:
        """Count one call with this label; returns the label's count so far."""
        return record(label)

    @server.tool()
    async def slow_count(label: str, seconds: float) -> int:
        """Wait, then count one call with this label; returns the label's count so far."""
        await asyncio.sleep(seconds)
        return record(label)

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log", type=Path, required=True, help="the file every call is appended to")
    args = parser.parse_args()
    build(args.log).run(transport="stdio")


if __name__ == "__main__":
    main()
