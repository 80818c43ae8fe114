"""A purpose-built MCP server that misbehaves the way real servers do, for the hub's tests.

It speaks newline-delimited JSON-RPC over stdio by hand (the SDK's own server refuses to send the
broken listings real servers written with other SDKs send). Its tools:

- ``no_type``: an inputSchema without ``"type"``.
- ``bad_output``: structuredContent that violates its own outputSchema.
- ``sleep``: sleeps ``seconds``, reports progress every 0.1 s, stops when cancelled.
- ``cancelled_count``: how many ``sleep`` calls were cancelled by the client so far.
- ``crash``: the process exits at once, without answering.
- ``pid``: this process's pid.
- ``add_tool``: registers one more tool and sends notifications/tools/list_changed.
- ``fail``: answers isError with the message it was given.
- ``page_tool_<n>``: ``--tools N`` extra tools, listed ``--page-size`` per page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any

_write_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    with _write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text_result(value: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


class Quirky:
    def __init__(self, extra_tools: int, page_size: int) -> None:
        self.extra_tools = extra_tools
        self.page_size = page_size
        self.added = 0
        self.cancelled = 0
        self.cancel_events: dict[Any, threading.Event] = {}

    def tools(self) -> list[dict[str, Any]]:
        obj: dict[str, Any] = {"type": "object"}
        base = [
            {
                "name": "no_type",
                "description": "Schema lacks type.",
                "inputSchema": {"properties": {"x": {"type": "integer"}}, "required": ["x"]},
            },
            {
                "name": "bad_output",
                "description": "Returns structuredContent violating its outputSchema.",
                "inputSchema": obj,
                "outputSchema": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
            {
                "name": "sleep",
                "description": "Sleep, reporting progress.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"seconds": {"type": "number"}},
                    "required": ["seconds"],
                },
            },
            {"name": "cancelled_count", "inputSchema": obj},
            {"name": "crash", "inputSchema": obj},
            {"name": "pid", "inputSchema": obj},
            {"name": "add_tool", "inputSchema": obj},
            {
                "name": "fail",
                "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
            },
        ]
        pages = [{"name": f"page_tool_{i}", "inputSchema": obj} for i in range(self.extra_tools)]
        added = [{"name": f"added_{i}", "inputSchema": obj} for i in range(self.added)]
        return base + pages + added

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        msg_id = message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "result": {
                        "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                        "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "quirky", "version": "0.0.1"},
                    },
                }
            )
        elif method == "notifications/cancelled":
            event = self.cancel_events.get(params.get("requestId"))
            if event is not None:
                event.set()
        elif method == "tools/list":
            tools = self.tools()
            start = int(params.get("cursor") or 0)
            end = start + self.page_size
            result: dict[str, Any] = {"tools": tools[start:end]}
            if end < len(tools):
                result["nextCursor"] = str(end)
            send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        elif method == "tools/call":
            threading.Thread(target=self.call, args=(msg_id, params), daemon=True).start()
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
        elif msg_id is not None:
            send(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}}
            )

    def call(self, msg_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        args = params.get("arguments") or {}
        result: dict[str, Any]
        if name == "no_type":
            result = text_result(str(args.get("x")))
        elif name == "bad_output":
            result = {**text_result('{"n": "not a number"}'), "structuredContent": {"n": "not a number"}}
        elif name == "sleep":
            event = self.cancel_events[msg_id] = threading.Event()
            token = (params.get("_meta") or {}).get("progressToken")
            seconds = float(args["seconds"])
            step = 0
            while step * 0.1 < seconds:
                if event.wait(0.1):
                    self.cancelled += 1
                    return  # a cancelled request gets no answer
                step += 1
                if token is not None:
                    send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": step, "total": int(seconds * 10)},
                        }
                    )
            result = text_result(f"slept {seconds}")
        elif name == "cancelled_count":
            result = text_result(str(self.cancelled))
        elif name == "crash":
            os._exit(3)
        elif name == "pid":
            result = text_result(str(os.getpid()))
        elif name == "add_tool":
            self.added += 1
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            result = text_result("added")
        elif name == "fail":
            result = text_result(str(args.get("message", "failed")), is_error=True)
        else:
            result = text_result(str(name))
        send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def main() -> None:
    parser = argparse.ArgumentParser(description="A misbehaving MCP server for tests.")
    parser.add_argument("--tools", type=int, default=0, help="extra tools to list")
    parser.add_argument("--page-size", type=int, default=1000, help="tools per tools/list page")
    args = parser.parse_args()
    server = Quirky(args.tools, args.page_size)
    for line in sys.stdin:
        if line.strip():
            server.handle(json.loads(line))


if __name__ == "__main__":
    main()
