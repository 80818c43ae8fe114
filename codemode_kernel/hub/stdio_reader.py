r"""Lines of a stdio MCP server's stdout, turned into the SDK's SessionMessages, whatever the server sends.

Two parts, used by ``stdio.py``:

- ``read_lines`` cuts lines from a byte buffer that is scanned once, so a 20 MB result costs what reading
  20 MB costs (the SDK's own reader splits its whole buffer again on every 64 KiB chunk). A line longer than
  the limit is not kept: it is counted as it streams past and reported as ``Oversized``.
- ``MessageReader`` parses each line. The fast path is pydantic-core's, as in the SDK. What that refuses is
  looked at again instead of dropped (the SDK drops it, and the request it answered waits out its timeout):
  text that is not valid Unicode (a lone surrogate escape such as ``\udce9``, or bytes that are not UTF-8)
  is repaired with U+FFFD and the answer carries a warning; an answer that is JSON but not JSON-RPC, or
  longer than the limit, fails its request at once with an error that says why; any other line that is not
  JSON-RPC (a server logging to stdout) is counted in ``StdoutNoise`` and logged once, without a traceback.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import ByteReceiveStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import INTERNAL_ERROR
from pydantic import BaseModel, ValidationError

__all__ = [
    "REFUSED_BY_TRANSPORT",
    "MessageReader",
    "Oversized",
    "StdoutNoise",
    "read_lines",
    "take_transport_warnings",
]

log = logging.getLogger(__name__)

REFUSED_BY_TRANSPORT = "codemode-kernel/stdio-transport"
"""The ``data`` of an error this transport made up for a request whose answer it could not deliver."""

WARNINGS_KEY = "codemode-kernel/transport-warnings"
"""Where, in a result's ``_meta``, this transport leaves warnings for the call's record."""

_CHUNK = 1 << 16
_EDGE = 4096  # bytes kept from both ends of an oversized line: enough to find its "id"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins valid pairs: what is left is lone
_ID_AT_START = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_ID_AT_END = re.compile(
    rb'[{,]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)


@dataclass
class StdoutNoise:
    """Lines a server wrote to stdout that are not JSON-RPC messages: how many, and the last one."""

    lines: int = 0
    last: str | None = None

    def record(self, text: str) -> None:
        """Count one line and keep it (cut to 200 characters) as the last."""
        self.lines += 1
        text = text.strip()
        self.last = text if len(text) <= 200 else text[:199] + "…"


@dataclass
class Oversized:
    """A line longer than the limit: its length and its two ends (to find which request it answers)."""

    size: int = 0
    head: bytes = b""
    tail: bytes = b""

    def add(self, data: bytes | bytearray) -> None:
        """Count more bytes of the line, keeping the first and the last ``_EDGE`` of them."""
        if len(self.head) < _EDGE:
            self.head += data[: _EDGE - len(self.head)]
        self.tail = (self.tail + data[-_EDGE:])[-_EDGE:]
        self.size += len(data)


async def read_lines(stream: ByteReceiveStream, limit: int) -> AsyncGenerator[bytes | Oversized, None]:
    """Yield each line of ``stream`` (its line break removed), or ``Oversized`` for one longer than ``limit``.

    Each byte is scanned for a newline once, and at most ``limit`` bytes (plus one chunk) are held. A last
    line without a newline is dropped at the end of the stream, as the SDK's reader does.
    """
    buffer = bytearray()
    skipping: Oversized | None = None
    while True:
        try:
            chunk = await stream.receive(_CHUNK)
        except anyio.EndOfStream:
            return
        start = 0
        if skipping is not None:
            newline = chunk.find(b"\n")
            if newline < 0:
                skipping.add(chunk)
                continue
            skipping.add(chunk[:newline])
            yield skipping
            skipping = None
            start = newline + 1
        scan = len(buffer)
        buffer += memoryview(chunk)[start:]
        begin = 0
        while (newline := buffer.find(b"\n", scan)) >= 0:
            if newline - begin > limit:
                big = Oversized()
                big.add(buffer[begin:newline])
                yield big
            else:
                end = newline - 1 if newline > begin and buffer[newline - 1] == 0x0D else newline  # \r\n
                yield bytes(buffer[begin:end])
            begin = scan = newline + 1
        del buffer[:begin]
        if len(buffer) > limit:
            skipping = Oversized()
            skipping.add(buffer)
            buffer = bytearray()


@dataclass
class _Request:
    method: str
    tool: str | None

    def describe(self, server: str) -> str:
        return f"{server}/{self.tool}" if self.tool else f"{server} {self.method}"


class MessageReader:
    """Turns stdout lines into SessionMessages for one connection; knows which requests await an answer."""

    def __init__(self, server: str, limit: int, noise: StdoutNoise) -> None:
        self.server = server
        self.limit = limit
        self.noise = noise
        self._pending: dict[types.RequestId, _Request] = {}
        self._noise_reported = False

    def sent(self, message: types.JSONRPCMessage) -> None:
        """Note a message on its way to the server: a request now awaits an answer, a cancelled one not."""
        if isinstance(message, types.JSONRPCRequest):
            params = message.params or {}
            name = params.get("name") if message.method == "tools/call" else None
            key = coerce_request_id(message.id)
            self._pending[key] = _Request(message.method, name if isinstance(name, str) else None)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if isinstance(request_id, int | str):
                self._pending.pop(coerce_request_id(request_id), None)

    def parse(self, line: bytes) -> SessionMessage | None:
        """The message on this line, an error for the request it fails, or None for a line to skip."""
        if not line.strip():
            return None
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError:
            return self._parse_slowly(line)
        return self._deliver(message)

    def oversized(self, line: Oversized) -> SessionMessage | None:
        """Fail the request an oversized line answers (found by its "id"); the line itself is gone."""
        request_id = _find_id(line)
        if request_id is None and len(self._pending) == 1:
            request_id = next(iter(self._pending))  # the only request that can be waiting for it
        request = self._pending.get(request_id) if request_id is not None else None
        if request_id is None or request is None:
            log.warning(
                "server %r sent a message of %s bytes, over its maxResultBytes (%s); it was dropped",
                self.server,
                f"{line.size:,}",
                f"{self.limit:,}",
            )
            return None
        reason = (
            f"its answer is {line.size:,} bytes, over this server's maxResultBytes ({self.limit:,}), and was "
            f'dropped; to accept it, raise "maxResultBytes" of server {self.server!r} in the config'
        )
        log.warning("%s: %s", request.describe(self.server), reason)
        return self._refuse(request_id, reason)

    # -- internals ------------------------------------------------------------------------------

    def _deliver(self, message: types.JSONRPCMessage) -> SessionMessage:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._pending.pop(coerce_request_id(message.id), None)
        return SessionMessage(message)

    def _parse_slowly(self, line: bytes) -> SessionMessage | None:
        """What pydantic-core refused: repair bad Unicode, fail bad answers, count the rest."""
        repairs = []
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            text = line.decode("utf-8", errors="replace")
            repairs.append("bytes that are not UTF-8")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            self._count_noise(text)
            return None
        lone: list[str] = []
        data = _replace_lone_surrogates(data, lone)
        if lone:
            repairs.append(f"{len(lone)} lone surrogate escape(s) such as \\u{ord(lone[0]):04x}")
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            return self._refuse_malformed(data, text)
        if repairs:
            self._warn_repaired(message, repairs)
        return self._deliver(message)

    def _refuse_malformed(self, data: Any, text: str) -> SessionMessage | None:
        """JSON that is not JSON-RPC: fail the request it answers, if it names one; else it is noise."""
        raw_id = data.get("id") if isinstance(data, dict) and "method" not in data else None
        request_id = coerce_request_id(raw_id) if isinstance(raw_id, int | str) else None
        request = self._pending.get(request_id) if request_id is not None else None
        if request_id is None or request is None:
            self._count_noise(text)
            return None
        model: type[BaseModel] = types.JSONRPCError if "error" in data else types.JSONRPCResponse
        reason = f"its answer is not a valid JSON-RPC response ({_first_error(model, data)})"
        log.warning("%s: %s", request.describe(self.server), reason)
        return self._refuse(request_id, reason)

    def _refuse(self, request_id: types.RequestId, reason: str) -> SessionMessage:
        self._pending.pop(request_id, None)
        error = types.ErrorData(code=INTERNAL_ERROR, message=reason, data=REFUSED_BY_TRANSPORT)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

    def _warn_repaired(self, message: types.JSONRPCMessage, repairs: list[str]) -> None:
        request = None
        if isinstance(message, types.JSONRPCResponse):
            request = self._pending.get(coerce_request_id(message.id))
        where = request.describe(self.server) if request else f"server {self.server!r}"
        warning = (
            f"{where}: the answer held text that is not valid Unicode ({', '.join(repairs)}); each bad "
            "character was replaced by U+FFFD (�)"
        )
        log.warning("%s", warning)
        if isinstance(message, types.JSONRPCResponse):
            meta = message.result.get("_meta")
            if meta is None:
                meta = message.result["_meta"] = {}
            if isinstance(meta, dict):
                meta.setdefault(WARNINGS_KEY, []).append(warning)

    def _count_noise(self, text: str) -> None:
        self.noise.record(text)
        if not self._noise_reported:
            self._noise_reported = True
            log.warning(
                "server %r wrote a line to stdout that is not JSON-RPC (stdout is for MCP messages; such "
                "lines are counted in `codemode doctor`): %s",
                self.server,
                self.noise.last,
            )


def take_transport_warnings(result: dict[str, Any]) -> tuple[str, ...]:
    """Remove the warnings this transport left in a CallToolResult's ``_meta`` and return them."""
    meta = result.get("_meta")
    if not isinstance(meta, dict) or WARNINGS_KEY not in meta:
        return ()
    warnings = meta.pop(WARNINGS_KEY)
    if not meta:
        del result["_meta"]
    return tuple(str(w) for w in warnings) if isinstance(warnings, list) else ()


def _replace_lone_surrogates(value: Any, found: list[str]) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD; ``found`` grows."""
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value) is None:
            return value
        found.extend(_LONE_SURROGATE.findall(value))
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_lone_surrogates(item, found) for item in value]
    if isinstance(value, dict):
        return {
            _replace_lone_surrogates(key, found): _replace_lone_surrogates(item, found)
            for key, item in value.items()
        }
    return value


def _find_id(line: Oversized) -> types.RequestId | None:
    """The top-level "id" of a JSON-RPC line from its two ends (Python SDKs put it first, TypeScript last)."""
    match = _ID_AT_START.search(line.head) or _ID_AT_END.search(line.tail)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return coerce_request_id(value) if isinstance(value, int | str) else None


def _first_error(model: type[BaseModel], data: Any) -> str:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the message"
        return f"{where}: {first['msg']}"
    return "it matches no JSON-RPC message type"
