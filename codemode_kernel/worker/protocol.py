r"""Frames between the kernel and a worker: a 4-byte big-endian length, then one JSON object.

The channel is a socket of its own (never stdout, which user code owns). Messages, by ``type``:

kernel -> worker
    ``run``          {code, filename, inputs: {name: envelope}, execution_id}
    ``tool_result``  {id, ok: true, result: CallToolResult wire JSON}
                     or {id, ok: false, error: {type, message}}
    ``artifact_result``  {id, ok: true, result: metadata (store) | envelope (get) | [metadata] (list)}
                     or {id, ok: false, error: {type: ArtifactError | ArtifactNotFoundError, message}}
worker -> kernel
    ``tool_call``    {id, server, tool, arguments}
    ``artifact``     {id, op: "store", value: envelope, name, description, mime_type}
                     | {id, op: "get", key} | {id, op: "list"}   (ids are shared with tool calls)
    ``stdout`` / ``stderr``  {data}
    ``done``         {status: "ok" | "error", value: envelope | null, error: record | null}

Anything else, a frame over the size limit, or bytes that are not a JSON object is a ``ProtocolError``:
the kernel ends that execution as ``crashed`` (the code broke the channel), it never waits on it.

Frames are UTF-8. A str that UTF-8 cannot encode (a lone surrogate such as ``"caf\udce9"``, which
``os.listdir`` returns for a file name in another encoding) travels with each surrogate written as the text
``\udce9``, as Python's ``backslashreplace`` shows it: in a value, the output, an error message or a tool
argument alike, never as a failed send.
"""

from __future__ import annotations

import json
import re
import select
import socket
import struct
import threading
import time
from typing import Any

from ..errors import FrameTooLarge, ProtocolError

__all__ = [
    "HEADER_BYTES",
    "MAX_FRAME_BYTES",
    "FrameReader",
    "FrameTooLarge",
    "ProtocolError",
    "body_length",
    "decode_body",
    "encode_frame",
    "peek_frame",
    "send_frame",
]

MAX_FRAME_BYTES = 64 * 1024 * 1024
_HEADER = struct.Struct(">I")
HEADER_BYTES = _HEADER.size
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_frame(message: dict[str, Any]) -> bytes:
    """One frame: length header plus compact UTF-8 JSON (NaN is not JSON, so it is refused).

    Raises:
        FrameTooLarge: the encoded message is over ``MAX_FRAME_BYTES``.
    """
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    try:
        body = text.encode()
    except UnicodeEncodeError:
        # Surrogates only occur inside JSON strings: an escaped backslash plus "udce9" keeps them readable.
        body = _SURROGATE.sub(lambda found: f"\\\\u{ord(found.group()):04x}", text).encode()
    if len(body) > MAX_FRAME_BYTES:
        raise FrameTooLarge(len(body), MAX_FRAME_BYTES)
    return _HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict[str, Any]:
    """Parse a frame body; it must be a JSON object with a string ``type``."""
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"frame is not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("frame is not a JSON object with a string 'type'")
    return message


def body_length(header: bytes) -> int:
    """The body length a frame header announces (``HEADER_BYTES`` bytes), checked against the limit."""
    (length,) = _HEADER.unpack(header)
    return _check_length(length)


def _check_length(length: int) -> int:
    if length > MAX_FRAME_BYTES:
        raise ProtocolError(f"announced frame of {length} bytes exceeds the limit of {MAX_FRAME_BYTES}")
    return length


class FrameReader:
    """Blocking frame reader over a socket, for the worker (one reader thread)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self) -> dict[str, Any] | None:
        """The next message, or None when the peer closed the channel cleanly between frames."""
        header = self._read_exactly(_HEADER.size, allow_eof=True)
        if header is None:
            return None
        (length,) = _HEADER.unpack(header)
        body = self._read_exactly(_check_length(length), allow_eof=False)
        assert body is not None
        return decode_body(body)

    def _read_exactly(self, size: int, *, allow_eof: bool) -> bytes | None:
        chunks: list[bytes] = []
        remaining = size
        while remaining:
            chunk = self._sock.recv(min(remaining, 1 << 20))
            if not chunk:
                if allow_eof and remaining == size:
                    return None
                raise ProtocolError("channel closed in the middle of a frame")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)


def peek_frame(sock: socket.socket, timeout: float, *, limit: int = 1 << 20) -> dict[str, Any] | None:
    """The first frame waiting on ``sock``, left in place for whoever reads the socket next.

    Blocking (call it off the event loop); returns None when the peer closed before a whole frame came.
    Raises ``TimeoutError`` after ``timeout`` seconds, ``ProtocolError`` for a frame over ``limit`` bytes.
    """
    deadline = time.monotonic() + timeout
    poll = select.poll()
    poll.register(sock.fileno(), select.POLLIN)
    seen = -1
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no complete frame within {timeout:g} s")
        if not poll.poll(left * 1000):
            continue
        data = sock.recv(limit + _HEADER.size, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        if not data:
            return None  # closed
        if len(data) == seen:
            time.sleep(0.001)  # the rest of the frame is on its way; POLLIN stays set meanwhile
            continue
        seen = len(data)
        if len(data) >= _HEADER.size:
            (length,) = _HEADER.unpack(data[: _HEADER.size])
            if length > limit:
                raise ProtocolError(f"frame of {length} bytes exceeds the limit of {limit} for a peek")
            if len(data) >= _HEADER.size + length:
                return decode_body(data[_HEADER.size : _HEADER.size + length])


_send_lock = threading.Lock()


def send_frame(sock: socket.socket, message: dict[str, Any]) -> None:
    """Write one frame; safe to call from several threads of the worker."""
    data = encode_frame(message)
    with _send_lock:
        sock.sendall(data)
