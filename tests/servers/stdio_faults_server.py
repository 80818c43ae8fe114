"""An MCP server that abuses its stdio the way real ones do, for the tests of the hub's stdio transport.

It speaks newline-delimited JSON-RPC by hand, single-threaded: the SDK's own server cannot send what these
tools send. ``--banner N`` prints N lines that are not JSON to stdout before anything else (as servers
that log to stdout do). Its tools:

- ``big``: a text result of ``size`` characters; ``id_last`` puts the JSON-RPC ``id`` at the end of the
  line, as the TypeScript SDK does (``{"result": ..., "jsonrpc": "2.0", "id": 3}``).
- ``surrogate``: the text ``caf\\udce9``, a lone surrogate escape (Python's ``json.dumps`` of a file name
  decoded with ``surrogateescape``).
- ``latin1``: the text ``café`` with the é as the raw Latin-1 byte 0xE9, which is not UTF-8.
- ``not_rpc``: an answer whose ``result`` is a string, which JSON-RPC does not allow.
- ``chatter``: prints ``lines`` lines that are not JSON to stdout, then answers.
- ``flood``: writes ``size`` bytes of numbered lines to stderr, then the line ``last``; with ``crash`` the
  process then exits without answering.
- ``deep``: a result whose ``structuredContent`` nests objects ``depth`` levels deep.
- ``long_int``: a result whose ``structuredContent`` holds an integer of 5,000 digits (valid JSON that
  Python's ``json`` refuses: it converts at most 4,300 digits).
- ``huge_log``: a ``notifications/message`` (a log message, no ``id``) of ``size`` bytes, then the answer
  ``logged``; ``params_first`` writes ``params`` before ``method``.
- ``meta_warnings``: the text ``caf\\udce9`` with ``_meta`` holding the key where the hub's reader leaves
  its warnings, set to a string.
- ``echo``: answers ``text``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

OUT = sys.stdout.buffer


def send(message: dict[str, Any] | bytes) -> None:
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    OUT.write(data + b"\n")
    OUT.flush()


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


TOOLS = [
    {"name": "big", "inputSchema": obj(size={"type": "integer"}, id_last={"type": "boolean"})},
    {"name": "surrogate", "inputSchema": obj()},
    {"name": "latin1", "inputSchema": obj()},
    {"name": "not_rpc", "inputSchema": obj()},
    {"name": "chatter", "inputSchema": obj(lines={"type": "integer"})},
    {
        "name": "flood",
        "inputSchema": obj(size={"type": "integer"}, last={"type": "string"}, crash={"type": "boolean"}),
    },
    {"name": "deep", "inputSchema": obj(depth={"type": "integer"})},
    {"name": "long_int", "inputSchema": obj()},
    {"name": "huge_log", "inputSchema": obj(size={"type": "integer"}, params_first={"type": "boolean"})},
    {"name": "meta_warnings", "inputSchema": obj()},
    {"name": "echo", "inputSchema": obj(text={"type": "string"})},
]


def call(msg_id: Any, name: str, args: dict[str, Any]) -> None:
    if name == "big":
        result = text_result("x" * int(args["size"]))
        if args.get("id_last"):
            send(json.dumps({"result": result, "jsonrpc": "2.0", "id": msg_id}).encode())
            return
    elif name == "surrogate":
        result = text_result("caf\udce9")  # json.dumps writes it as the escape \udce9
    elif name == "latin1":
        head = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": text_result("caf@")}).encode()
        send(head.replace(b"caf@", b"caf\xe9"))
        return
    elif name == "not_rpc":
        send({"jsonrpc": "2.0", "id": msg_id, "result": "a string where an object belongs"})
        return
    elif name == "chatter":
        for i in range(int(args["lines"])):
            OUT.write(f"chatter line {i}: not JSON\n".encode())
        result = text_result("chattered")
    elif name == "flood":
        size = int(args["size"])
        line = b"flood line %09d: the server is talking a lot on its stderr, as chatty servers do\n"
        block = b"".join(line % i for i in range(1000))
        written = 0
        while written < size:
            sys.stderr.buffer.write(block)
            written += len(block)
        sys.stderr.buffer.write(str(args["last"]).encode() + b"\n")
        sys.stderr.buffer.flush()
        if args.get("crash"):
            os._exit(3)
        result = text_result(f"wrote {written} bytes to stderr")
    elif name == "deep":
        depth = int(args["depth"])
        nested = '{"level": ' * depth + "0" + "}" * depth
        opening = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": text_result("deep")})[:-2]
        send(f'{opening}, "structuredContent": {nested}}}}}'.encode())
        return
    elif name == "long_int":
        opening = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": text_result("long")})[:-2]
        send(f'{opening}, "structuredContent": {{"n": {"1" * 5000}}}}}}}'.encode())
        return
    elif name == "huge_log":
        params = {"level": "info", "logger": "faults", "data": "x" * int(args["size"])}
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
        if args.get("params_first"):
            note = {"params": params, "jsonrpc": "2.0", "method": "notifications/message"}
        send(note)
        result = text_result("logged")
    elif name == "meta_warnings":
        result = text_result("caf\udce9") | {"_meta": {"codemode-kernel/transport-warnings": "a string"}}
    elif name == "echo":
        result = text_result(str(args.get("text")))
    else:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": f"no tool {name}"}})
        return
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    msg_id = message.get("id")
    params = message.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stdio-faults", "version": "0.0.1"},
        }
        send({"jsonrpc": "2.0", "id": msg_id, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        call(msg_id, params.get("name"), params.get("arguments") or {})
    elif msg_id is not None:
        send({"jsonrpc": "2.0", "id": msg_id, "result": {}})


def main() -> None:
    parser = argparse.ArgumentParser(description="An MCP server that abuses its stdio, for tests.")
    parser.add_argument("--banner", type=int, default=0, help="non-JSON lines to print to stdout first")
    args = parser.parse_args()
    for i in range(args.banner):
        OUT.write(f"banner line {i}: server starting\n".encode())
    OUT.flush()
    for line in sys.stdin.buffer:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
