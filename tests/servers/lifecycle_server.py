"""A stdio MCP server for the hub's start-up and crash tests, speaking JSON-RPC by hand.

The SDK's server cannot be made to hang in the middle of ``initialize``, so this one answers by hand:

- ``--hang-initialize``: read ``initialize`` and never answer (a server stuck at start-up, say on a
  database that does not answer; it still ends when its stdin closes).
- ``--initialize-delay S``: answer ``initialize`` only after S seconds (a healthy but slow server).
- ``--prefix P``: its tool names start with P, so two of them can be configured side by side.

Its tools (named with the prefix):

- ``<P>echo``: returns its ``text``.
- ``<P>crash``: read-only by its annotations, yet the process exits without answering, every time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text_result(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def tools(prefix: str) -> list[dict[str, Any]]:
    text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return [
        {"name": f"{prefix}echo", "description": "Return the text.", "inputSchema": text},
        {
            "name": f"{prefix}crash",
            "description": "Says it only reads, yet the server exits during the call.",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        },
    ]


def handle(message: dict[str, Any], args: argparse.Namespace) -> None:
    method = message.get("method")
    msg_id = message.get("id")
    params = message.get("params") or {}
    if method == "initialize":
        if args.hang_initialize:
            sys.stderr.write("lifecycle: got initialize, never answering\n")
            sys.stderr.flush()
            return
        time.sleep(args.initialize_delay)
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "lifecycle", "version": "0.0.1"},
        }
        send({"jsonrpc": "2.0", "id": msg_id, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": tools(args.prefix)}})
    elif method == "tools/call":
        name = params.get("name")
        if name == f"{args.prefix}crash":
            sys.stderr.write(f"lifecycle: crashing on purpose (pid {os.getpid()})\n")
            sys.stderr.flush()
            os._exit(3)
        text = str((params.get("arguments") or {}).get("text", ""))
        send({"jsonrpc": "2.0", "id": msg_id, "result": text_result(text)})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
    elif msg_id is not None:
        error = {"code": -32601, "message": f"no method {method}"}
        send({"jsonrpc": "2.0", "id": msg_id, "error": error})


def main() -> None:
    parser = argparse.ArgumentParser(description="A stdio MCP server that hangs, dawdles or crashes.")
    parser.add_argument("--hang-initialize", action="store_true", help="never answer initialize")
    parser.add_argument("--initialize-delay", type=float, default=0.0, help="seconds before answering")
    parser.add_argument("--prefix", default="", help="prepended to the tool names")
    args = parser.parse_args()
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line), args)


if __name__ == "__main__":
    main()
