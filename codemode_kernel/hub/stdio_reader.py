r"""The lines of a stdio MCP server's stdout (from ``stdio_lines``), turned into the SDK's SessionMessages.

``MessageReader`` parses each line. The fast path is pydantic-core's, as in the SDK. What that refuses is
looked at again instead of dropped (the SDK drops it, and the request it answered waits out its timeout):
text that is not valid Unicode (a lone surrogate escape such as ``\udce9``, or bytes that are not UTF-8) is
repaired with U+FFFD and the answer carries a warning; an answer that is not JSON-RPC, that Python cannot
parse, that nests deeper than ``MAX_ANSWER_DEPTH`` or is longer than the limit, fails its request at once
with an error that says why; an oversized notification is dropped; any other line that is not JSON-RPC (a
server logging to stdout) is counted in ``StdoutNoise`` and logged once, without a traceback. ``read`` never
raises: a line it fails on fails the request it answers (when its "id" shows), never the connection.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST
from pydantic import BaseModel, ValidationError

from .stdio_lines import EDGE, Oversized

__all__ = [
    "MAX_ANSWER_DEPTH",
    "REFUSED_BY_TRANSPORT",
    "MessageReader",
    "StdoutNoise",
    "take_transport_warnings",
]

log = logging.getLogger(__name__)

REFUSED_BY_TRANSPORT = "codemode-kernel/stdio-transport"
"""The ``data`` of an error this transport made up for a request whose answer it could not deliver."""

WARNINGS_KEY = "codemode-kernel/transport-warnings"
"""Where, in a result's ``_meta``, this transport leaves warnings for the call's record."""

MAX_ANSWER_DEPTH = 200
"""Levels of objects and lists a message may nest: pydantic-core, which the SDK parses with, refuses deeper
JSON (and pydantic cannot serialise much deeper results), so a deeper answer could never be used anyway."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins valid pairs: what is left is lone
_ID_AT_START = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_ID_AT_END = re.compile(
    rb'[{,]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)
# A top-level "method": the message is a notification or a request from the server, never an answer.
# A request of the server's says "id" too, before or after "method" (the Python SDK: jsonrpc, id, method).
_METHOD_AT_START = re.compile(
    rb'^\s*\{\s*(?:"(?:jsonrpc|id)"\s*:\s*(?:-?\d+|"(?:[^"\\]|\\.)*")\s*,\s*){0,2}"method"\s*:\s*"([^"\\]{1,200})"'
)
_METHOD_AT_END = re.compile(
    rb'[{,]\s*"method"\s*:\s*"([^"\\]{1,200})"\s*(?:,\s*"(?:jsonrpc|id)"\s*:\s*(?:-?\d+|"[^"\\]*")\s*){0,2}\}\s*$'
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
        self.dropped = 0
        """Messages from the server (notifications, requests) dropped for being over the limit."""
        self._pending: dict[types.RequestId, _Request] = {}
        self._replies: list[types.JSONRPCError] = []
        """Errors for the server's own requests that could not be read (a question too deep or too large),
        to be sent back so that the server's tool does not wait for an answer that never comes."""
        self._noise_reported = False
        self._failure_reported = False

    def sent(self, message: types.JSONRPCMessage) -> None:
        """Note a message on its way to the server: a request now awaits an answer, a cancelled one not."""
        if isinstance(message, types.JSONRPCRequest):
            params = message.params or {}
            name = params.get("name") if message.method == "tools/call" else None
            key = coerce_request_id(message.id)
            self._pending[key] = _Request(message.method, name if isinstance(name, str) else None)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = _request_id((message.params or {}).get("requestId"))
            if request_id is not None:
                self._pending.pop(request_id, None)

    def read(self, line: bytes | Oversized) -> SessionMessage | None:
        """``parse`` or ``oversized``, but never raising: one bad line must not stop the reading.

        A line this reader fails on (a bug here, or a case nobody foresaw) fails the request it answers,
        when its "id" shows; later answers are read as before.
        """
        try:
            return self.oversized(line) if isinstance(line, Oversized) else self.parse(line)
        except Exception as exc:
            return self._failed(line, exc)

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
        """Fail the request an oversized line answers (found by its "id"); the line itself is gone.

        A line that shows a top-level "method" is a notification (a log message, progress) or a request
        from the server, never an answer: it is dropped without failing any call.
        """
        method = _find_method(line.head, line.tail)
        if method is not None:
            self._drop(method, line.size)
            self._answer_unread(
                line.head,
                line.tail,
                f"the request is {line.size:,} bytes, over maxResultBytes ({self.limit:,})",
            )
            return None
        request_id = _find_id(line.head, line.tail)
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

    def _deliver(self, message: types.JSONRPCMessage, repairs: list[str] | None = None) -> SessionMessage:
        if isinstance(message, types.JSONRPCResponse):
            meta = message.result.get("_meta")
            if isinstance(meta, dict):
                meta.pop(WARNINGS_KEY, None)  # only this transport writes there: a server cannot add warnings
        if repairs:
            self._warn_repaired(message, repairs)
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
            lone: list[str] = []
            data = _repair(data, lone, MAX_ANSWER_DEPTH)
        except (_TooDeep, RecursionError):
            return self._refuse_line(
                line,
                f"its answer is nested more than {MAX_ANSWER_DEPTH} levels deep (objects and lists) and was "
                "dropped; the MCP SDK cannot handle deeper JSON, so the server must send flatter data",
            )
        except ValueError as exc:
            if _find_id(line[:EDGE], line[-EDGE:]) in self._pending:  # an answer, not a log line
                return self._refuse_line(line, f"its answer cannot be parsed as JSON ({exc})")
            self._count_noise(text)
            return None
        if lone:
            repairs.append(f"{len(lone)} lone surrogate escape(s) such as \\u{ord(lone[0]):04x}")
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            return self._refuse_malformed(data, text)
        return self._deliver(message, repairs)

    def _refuse_malformed(self, data: Any, text: str) -> SessionMessage | None:
        """JSON that is not JSON-RPC: fail the request it answers, if it names one; else it is noise."""
        request_id = _request_id(data.get("id")) if isinstance(data, dict) and "method" not in data else None
        request = self._pending.get(request_id) if request_id is not None else None
        if request_id is None or request is None:
            self._count_noise(text)
            return None
        model: type[BaseModel] = types.JSONRPCError if "error" in data else types.JSONRPCResponse
        reason = f"its answer is not a valid JSON-RPC response ({_first_error(model, data)})"
        log.warning("%s: %s", request.describe(self.server), reason)
        return self._refuse(request_id, reason)

    def _refuse_line(self, line: bytes, reason: str) -> SessionMessage | None:
        """Fail the request this unusable line answers, found by its "id"; without one, log and drop it.

        A line with a top-level "method" is the server's own request (or a notification): its "id" is the
        server's, not one of ours, so it fails no call; a request is answered with an error instead.
        """
        method = _find_method(line[:EDGE], line[-EDGE:])
        request_id = _find_id(line[:EDGE], line[-EDGE:]) if method is None else None
        request = self._pending.get(request_id) if request_id is not None else None
        if request_id is None or request is None:
            log.warning("server %r sent a message that was dropped: %s", self.server, reason)
            self._answer_unread(line[:EDGE], line[-EDGE:], reason)
            return None
        log.warning("%s: %s", request.describe(self.server), reason)
        return self._refuse(request_id, reason)

    def _failed(self, line: bytes | Oversized, exc: Exception) -> SessionMessage | None:
        """A line this reader raised on: log why (with the traceback the first time), fail its request."""
        log.warning(
            "server %r: a line of its stdout could not be read (%s: %s)",
            self.server,
            type(exc).__name__,
            exc,
            exc_info=not self._failure_reported,
        )
        self._failure_reported = True
        head, tail = (line.head, line.tail) if isinstance(line, Oversized) else (line[:EDGE], line[-EDGE:])
        request_id = _find_id(head, tail)
        if request_id is None or request_id not in self._pending:
            return None
        return self._refuse(
            request_id,
            f"its answer could not be read ({type(exc).__name__}: {exc}); this is a bug in codemode-kernel's "
            "stdio transport: please report it with the server's name and version",
        )

    def take_replies(self) -> list[types.JSONRPCError]:
        """The errors to send the server for its requests that were dropped (each taken once)."""
        replies, self._replies = self._replies, []
        return replies

    def _answer_unread(self, head: bytes, tail: bytes, reason: str) -> None:
        """A dropped line that is a request of the server's (a method and an id): answer it, refused."""
        method, request_id = _find_method(head, tail), _find_id(head, tail)
        if method is None or request_id is None:
            return  # a notification: nobody waits for it
        message = f"codemode could not read this {method} request and refused it: {reason}"
        error = types.ErrorData(code=INVALID_REQUEST, message=message[:500])
        self._replies.append(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

    def _drop(self, method: str, size: int) -> None:
        """An oversized message from the server that answers nothing: log the first, count them all."""
        self.dropped += 1
        log.log(
            logging.WARNING if self.dropped == 1 else logging.DEBUG,
            "server %r sent %s (a message of %s bytes, over its maxResultBytes of %s); it was dropped, and "
            "later ones are dropped without a warning",
            self.server,
            method,
            f"{size:,}",
            f"{self.limit:,}",
        )

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
                meta[WARNINGS_KEY] = [warning]

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


class _TooDeep(Exception):
    """Raised by ``_repair`` on a value nested deeper than it may be."""


def _repair(value: Any, found: list[str], levels: int) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD; ``found`` grows.

    Raises:
        _TooDeep: ``value`` nests more than ``levels`` objects and lists (checked here, in the walk the
            repair needs anyway, before a deeper walk could end in RecursionError).
    """
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value) is None:
            return value
        found.extend(_LONE_SURROGATE.findall(value))
        return _LONE_SURROGATE.sub("\ufffd", value)
    if not isinstance(value, list | dict):
        return value
    if levels == 0:
        raise _TooDeep
    if isinstance(value, list):
        return [_repair(item, found, levels - 1) for item in value]
    return {_repair(key, found, 0): _repair(item, found, levels - 1) for key, item in value.items()}


def _find_method(head: bytes, tail: bytes) -> str | None:
    """The top-level "method" of a JSON-RPC line from its two ends, or None when neither shows one."""
    match = _METHOD_AT_START.search(head) or _METHOD_AT_END.search(tail)
    return match.group(1).decode("utf-8", "replace") if match else None


def _find_id(head: bytes, tail: bytes) -> types.RequestId | None:
    """The top-level "id" of a JSON-RPC line from its two ends (Python SDKs put it first, TypeScript last)."""
    match = _ID_AT_START.search(head) or _ID_AT_END.search(tail)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return _request_id(value)


def _request_id(value: Any) -> types.RequestId | None:
    """``value`` as a request id if it can be one (a number or a string; ``true`` is no id, though == 1)."""
    return coerce_request_id(value) if isinstance(value, int | str) and not isinstance(value, bool) else None


def _first_error(model: type[BaseModel], data: Any) -> str:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the message"
        return f"{where}: {first['msg']}"
    return "it matches no JSON-RPC message type"
