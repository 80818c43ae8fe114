"""An MCP server that lists exactly the tools of a saved tools/list answer, however broken they are.

Usage: ``python listing_server.py LISTING.json`` where the file holds ``{"tools": [...]}``. It speaks
newline-delimited JSON-RPC over stdio by hand, because the SDK's own server refuses to list schemas that
break the spec (``"type": 42``, no ``inputSchema``), and real servers written with other SDKs list them.
Every tool answers with its arguments as JSON text, so a test can see what arrived unchecked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(message: dict[str, Any], tools: list[Any]) -> dict[str, Any] | None:
    """The response to one request, or None for a notification."""
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "listing", "version": "0.0.1"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": tools}
    elif method == "tools/call":
        text = json.dumps(params.get("arguments") or {})
        reply["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": f"no method {method}"}
    return reply


def main() -> None:
    tools = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))["tools"]
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line), tools)
            if reply is not None:
                send(reply)


if __name__ == "__main__":
    main()
