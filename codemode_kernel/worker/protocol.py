r"""The kernel <-> worker wire format: every frame and control message as a type, and the framing.

A worker talks to the kernel over a socket of its own (never stdout, which user code owns), in frames: a
4-byte big-endian length, then one JSON object whose ``type`` names it. The frames are the ``TypedDict``
classes below, one per ``type`` (``KernelFrame``: kernel -> worker; ``WorkerFrame``: worker -> kernel),
and the executor and its zygote exchange the control messages below over a SOCK_SEQPACKET socket, one JSON
object per packet (``ZygoteCommand``, ``ZygoteEvent``). mypy checks every frame where it is built;
docs/protocol.md shows them as tables, written from these classes by ``scripts/protocol_doc.py`` (a unit
test fails when the doc is stale). Values, errors and artifacts inside frames are ``core/records.py``'s.

A run: the worker's first frame is ``protections`` (sent on entering its sandbox, before any run), the
kernel sends ``run``, the worker streams ``stdout``/``stderr``, asks with ``tool_call`` and ``artifact``
(ids shared, answered by ``tool_result``/``artifact_result`` in any order), and ends with ``done``.

Anything else from a worker, a frame over the size limit, or bytes that are not a JSON object is a
``ProtocolError``: the kernel ends that execution as ``crashed`` (the code broke the channel), it never
waits on it. ``check_worker_frame`` is the kernel's check of a frame from a worker.

Frames are UTF-8. A str that UTF-8 cannot encode (a lone surrogate such as ``"caf\udce9"``, which
``os.listdir`` returns for a file name in another encoding) travels with each surrogate written as the text
``\udce9``, as Python's ``backslashreplace`` shows it: in a value, the output, an error message or a tool
argument alike, never as a failed send.

This module does not use ``from __future__ import annotations``: ``NotRequired`` must be evaluated when a
class is made, or its ``__required_keys__`` (which the docs table and its test read) would be wrong.
"""

import json
import re
import select
import socket
import struct
import threading
import time
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, cast

from ..core.errors import FrameTooLarge, ProtocolError
from ..core.records import (
    ArtifactMetadata,
    BytesEnvelope,
    ErrorRecord,
    ImageEnvelope,
    JsonEnvelope,
    LLMRequest,
    ReprEnvelope,
    RequestError,
    TableEnvelope,
    TextEnvelope,
    ValueEnvelope,
)

__all__ = [
    "CONTROL_MESSAGES",
    "HEADER_BYTES",
    "KERNEL_FRAMES",
    "MAX_FRAME_BYTES",
    "RECORDS",
    "WORKER_FRAMES",
    "ArtifactFrame",
    "ArtifactGetFrame",
    "ArtifactListFrame",
    "ArtifactResultFailed",
    "ArtifactResultFrame",
    "ArtifactResultOk",
    "ArtifactStoreFrame",
    "DoneFrame",
    "ExitMessage",
    "ExitedMessage",
    "FailedMessage",
    "FrameReader",
    "FrameTooLarge",
    "KernelFrame",
    "NotifyFrame",
    "OutputFrame",
    "ProtectionsFrame",
    "ProtocolError",
    "ReadyMessage",
    "RunFrame",
    "SpawnMessage",
    "SpawnedMessage",
    "ToolCallFrame",
    "ToolProgressFrame",
    "ToolResultFailed",
    "ToolResultFrame",
    "ToolResultOk",
    "WorkerFrame",
    "ZygoteCommand",
    "ZygoteEvent",
    "ZygoteSetup",
    "body_length",
    "check_worker_frame",
    "check_zygote_event",
    "decode_body",
    "encode_control",
    "encode_frame",
    "peek_frame",
    "send_frame",
]


# --- kernel -> worker ------------------------------------------------------------------------------


class RunFrame(TypedDict):
    """Run a program; a session's worker serves one per run until the channel closes."""

    type: Literal["run"]
    code: str
    """The program as written (Markdown fences and a ``%%codemode`` line are tolerated)."""
    filename: str
    """What tracebacks call it: ``<code>``, or ``<code-N>`` for a session's N-th run."""
    inputs: dict[str, ValueEnvelope]
    """Globals for the program, by name."""
    execution_id: str
    session: bool
    """True on a session's runs: the worker keeps the globals and waits for the next ``run``."""
    tools: NotRequired[list[dict[str, Any]]]
    """The run's own tools beside the pre-started ones (a notebook's functions, a caller's tools), as
    tool descriptors; a session's next run replaces them."""
    shapes: NotRequired[dict[str, dict[str, Any]]]
    """Result shapes inferred since the worker's tools were built, by function name: ``{"calls", "schema"}``
    (what ``tool_schema()`` reports as ``inferred_output``)."""


class ToolResultOk(TypedDict):
    """The answer to a ``tool_call``: the server's result (a tool error too: ``isError`` in it)."""

    type: Literal["tool_result"]
    id: int
    ok: Literal[True]
    result: dict[str, Any]
    """The MCP CallToolResult as wire JSON (``content``, ``structuredContent``, ``isError``)."""


class ToolResultFailed(TypedDict):
    """The answer to a ``tool_call`` the kernel could not make: the program raises ``error``."""

    type: Literal["tool_result"]
    id: int
    ok: Literal[False]
    error: RequestError


class ArtifactResultOk(TypedDict):
    """The answer to an ``artifact`` request: ``store`` metadata, ``get`` a value, ``list`` metadata."""

    type: Literal["artifact_result"]
    id: int
    ok: Literal[True]
    result: ArtifactMetadata | ValueEnvelope | list[ArtifactMetadata]


class ArtifactResultFailed(TypedDict):
    """The answer to an ``artifact`` request the store refused (ArtifactError, ArtifactNotFoundError)."""

    type: Literal["artifact_result"]
    id: int
    ok: Literal[False]
    error: RequestError


class ToolProgressFrame(TypedDict):
    """A server's progress on a ``tool_call`` that asked for it (``progress: true``), before its answer."""

    type: Literal["tool_progress"]
    id: int
    """The ``tool_call``'s id."""
    progress: float
    total: float | None
    message: str | None


ToolResultFrame = ToolResultOk | ToolResultFailed
ArtifactResultFrame = ArtifactResultOk | ArtifactResultFailed
KernelFrame = RunFrame | ToolResultFrame | ToolProgressFrame | ArtifactResultFrame
"""Every frame the kernel sends a worker."""

KERNEL_FRAMES: tuple[type, ...] = (
    RunFrame,
    ToolResultOk,
    ToolResultFailed,
    ToolProgressFrame,
    ArtifactResultOk,
    ArtifactResultFailed,
)
"""The members of ``KernelFrame``, in the order docs/protocol.md lists them."""


# --- worker -> kernel ------------------------------------------------------------------------------


class ProtectionsFrame(TypedDict):
    """The isolation the worker entered, sent once, before its first run (``Protections.to_dict()``)."""

    type: Literal["protections"]
    in_force: list[str]
    """The layers applied, in order (``pid_namespace``, ``network_namespace``, ``landlock:fs_write``...)."""
    not_in_force: dict[str, str]
    """The layers missing, each with the reason."""
    warnings: list[str]
    turned_off: list[str]
    """The layers the settings turned off."""


class ToolCallFrame(TypedDict):
    """Call a tool (answered by ``tool_result``); ``llm()`` is a call of the pseudo tool codemode/llm."""

    type: Literal["tool_call"]
    id: int
    """Unique in the worker, shared with artifact requests: the answer carries it back."""
    server: str
    tool: str
    """The tool's name at its server (not the Python function's name)."""
    arguments: dict[str, Any]
    """The arguments as JSON; for codemode/llm an ``LLMRequest`` (prompt, system, max_tokens)."""
    seq: NotRequired[int]
    """The call's number in its run (1, 2, ...), as the program issued it: a parallel batch in order.
    A worker always numbers its calls; the kernel records a call without one as unnumbered."""
    progress: NotRequired[bool]
    """True when the program watches the call's progress (``on_progress``, ``stream``): the kernel then
    sends the server's progress notifications as ``tool_progress`` frames."""


class ArtifactStoreFrame(TypedDict):
    """``store_artifact(data, name, description, type)``: answered with the new artifact's metadata."""

    type: Literal["artifact"]
    id: int
    op: Literal["store"]
    value: ValueEnvelope
    name: str | None
    description: str | None
    mime_type: str | None


class ArtifactGetFrame(TypedDict):
    """``get_artifact(id_or_name)``: answered with the value's envelope."""

    type: Literal["artifact"]
    id: int
    op: Literal["get"]
    key: str
    """An artifact's id, or a name (the newest artifact of that name)."""


class ArtifactListFrame(TypedDict):
    """``list_artifacts()``: answered with every artifact's metadata, newest first."""

    type: Literal["artifact"]
    id: int
    op: Literal["list"]


class OutputFrame(TypedDict):
    """What the program printed, as it prints it (line-buffered; at most 2**20 characters a frame)."""

    type: Literal["stdout", "stderr"]
    data: str


class NotifyFrame(TypedDict):
    """A note from the program (``notify(message, **data)``) for whoever watches the run, sent at once."""

    type: Literal["notify"]
    message: str
    data: dict[str, Any]


class DoneFrame(TypedDict):
    """The run's end: its value (``ok``), its error (``error``), or a sandbox that failed (``internal``)."""

    type: Literal["done"]
    status: Literal["ok", "error", "internal"]
    value: ValueEnvelope | None
    error: ErrorRecord | None
    completed: NotRequired[bool]
    """True when the program ended with ``complete(answer, **data)``: the value is ``{"answer", "data"}``."""


ArtifactFrame = ArtifactStoreFrame | ArtifactGetFrame | ArtifactListFrame
WorkerFrame = ProtectionsFrame | ToolCallFrame | ArtifactFrame | OutputFrame | NotifyFrame | DoneFrame
"""Every frame a worker sends the kernel."""

WORKER_FRAMES: tuple[type, ...] = (
    ProtectionsFrame,
    ToolCallFrame,
    ArtifactStoreFrame,
    ArtifactGetFrame,
    ArtifactListFrame,
    OutputFrame,
    NotifyFrame,
    DoneFrame,
)
"""The members of ``WorkerFrame``, in the order docs/protocol.md lists them."""


# --- executor <-> zygote (control socket) ----------------------------------------------------------


class SpawnMessage(TypedDict):
    """Fork a worker; its end of the channel travels with the packet (SCM_RIGHTS, one descriptor)."""

    type: Literal["spawn"]
    id: int
    policy: dict[str, Any]
    """The worker's ``SandboxPolicy.to_dict()``."""


class ExitMessage(TypedDict):
    """Kill and reap the workers still running, then exit."""

    type: Literal["exit"]


class ReadyMessage(TypedDict):
    """The zygote has imported what workers need and built the tools module."""

    type: Literal["ready"]
    pid: int
    capabilities: dict[str, Any]
    """What the machine supports (``Capabilities.to_dict()``), probed once."""


class SpawnedMessage(TypedDict):
    """A ``spawn`` was done: the worker's pid, the leader of its process group."""

    type: Literal["spawned"]
    id: int
    pid: int


class ExitedMessage(TypedDict):
    """A spawned worker ended: its exit ``code``, or the ``signal`` that killed it."""

    type: Literal["exited"]
    pid: int
    code: NotRequired[int]
    signal: NotRequired[int]


class FailedMessage(TypedDict):
    """A ``spawn`` the zygote refused (not one descriptor, no policy)."""

    type: Literal["failed"]
    id: int | None
    error: str


class ZygoteSetup(TypedDict):
    """Not a packet: the one JSON object the executor writes to the zygote's stdin when it starts it."""

    tools: list[dict[str, Any]]
    """The tool descriptors the tools module is built from (ToolSpec fields, ``function_name``...)."""
    preload: list[str]
    """Modules to import once, before any fork (``pandas``...)."""


ZygoteCommand = SpawnMessage | ExitMessage
"""What the executor tells its zygote."""
ZygoteEvent = ReadyMessage | SpawnedMessage | ExitedMessage | FailedMessage
"""What a zygote reports to the executor."""

CONTROL_MESSAGES: tuple[type, ...] = (
    SpawnMessage,
    ExitMessage,
    ReadyMessage,
    SpawnedMessage,
    ExitedMessage,
    FailedMessage,
    ZygoteSetup,
)
"""``ZygoteCommand``, ``ZygoteEvent`` and the setup, in the order docs/protocol.md lists them."""

RECORDS: tuple[type, ...] = (
    JsonEnvelope,
    TextEnvelope,
    BytesEnvelope,
    ImageEnvelope,
    TableEnvelope,
    ReprEnvelope,
    ErrorRecord,
    RequestError,
    LLMRequest,
    ArtifactMetadata,
)
"""The records inside frames (``core/records.py``'s), in the order docs/protocol.md lists them."""


# --- checks of what the other side sent ------------------------------------------------------------


def check_worker_frame(message: Mapping[str, Any]) -> WorkerFrame:
    """A frame from a worker (untrusted: the program may write to the channel), as the kernel uses it.

    Checked here: the ``type`` is one a worker sends, a request has an int ``id`` (its answer must find
    the caller) and an artifact request a known ``op``, and a ``done`` value is an envelope or null. Made
    what the kernel always made of them: ``data``, ``server`` and ``tool`` as str, ``arguments`` that
    are not an object as ``{}``, a ``seq`` that is not an int left out, a ``done`` status other than
    ``ok`` or ``internal`` as ``error``, and a ``done`` error that is not an object as
    ``{type: Error, message}``. The rest is the program's data, checked where it is used: a value
    envelope when it is decoded, an artifact's name or key by the store (a bad one is answered with an
    ArtifactError, and the program carries on), a protections report when it is read.

    Raises:
        ProtocolError: a frame no worker sends; the kernel ends the execution as ``crashed``.
    """
    kind = message.get("type")
    if kind == "stdout" or kind == "stderr":
        return OutputFrame(type=kind, data=str(message.get("data", "")))
    if kind == "tool_call":
        arguments = message.get("arguments")
        call = ToolCallFrame(
            type="tool_call",
            id=_request_id(message),
            server=str(message.get("server", "")),
            tool=str(message.get("tool", "")),
            arguments=arguments if isinstance(arguments, dict) else {},
        )
        seq = message.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            call["seq"] = seq
        if message.get("progress") is True:
            call["progress"] = True
        return call
    if kind == "artifact":
        return _check_artifact(message)
    if kind == "protections":
        return ProtectionsFrame(
            type="protections",
            in_force=_strings(message, "in_force"),
            not_in_force=_reasons(message, "not_in_force"),
            warnings=_strings(message, "warnings"),
            turned_off=_strings(message, "turned_off"),
        )
    if kind == "notify":
        data = message.get("data")
        return NotifyFrame(
            type="notify",
            message=str(message.get("message", "")),
            data=data if isinstance(data, dict) else {},
        )
    if kind == "done":
        return _check_done(message)
    raise ProtocolError(f"unexpected frame type {_clip(kind)}")


def _request_id(message: Mapping[str, Any]) -> int:
    request_id = message.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        raise ProtocolError(f"{message.get('type')} frame without an int id")
    return request_id


def _check_artifact(message: Mapping[str, Any]) -> ArtifactFrame:
    request_id, op = _request_id(message), message.get("op")
    # The envelope, name and key are the program's, as it passed them: the kernel decodes the envelope and
    # the store checks the rest, answering a bad one with an ArtifactError that the program may catch.
    if op == "store":
        return ArtifactStoreFrame(
            type="artifact",
            id=request_id,
            op="store",
            value=cast(ValueEnvelope, message.get("value")),
            name=message.get("name"),
            description=message.get("description"),
            mime_type=message.get("mime_type"),
        )
    if op == "get":
        return ArtifactGetFrame(type="artifact", id=request_id, op="get", key=cast(str, message.get("key")))
    if op == "list":
        return ArtifactListFrame(type="artifact", id=request_id, op="list")
    raise ProtocolError(f"unknown artifact request {_clip(op)}; expected store, get or list")


def _check_done(message: Mapping[str, Any]) -> DoneFrame:
    value = message.get("value")
    if value is not None and not (isinstance(value, dict) and isinstance(value.get("kind"), str)):
        raise ProtocolError(f"done frame whose value is not a value envelope: {_clip(value)}")
    error = message.get("error")
    if error is None or isinstance(error, dict):
        record = cast(ErrorRecord | None, error)  # its fields are shown as untrusted text (format_error_text)
    else:
        record = ErrorRecord(type="Error", message=str(error))
    status = message.get("status")
    done = DoneFrame(
        type="done",
        status=status if status in ("ok", "internal") else "error",
        value=cast(ValueEnvelope | None, value),
        error=record,
    )
    if message.get("completed") is True:
        done["completed"] = True
    return done


def _strings(message: Mapping[str, Any], key: str) -> list[str]:
    items = message.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ProtocolError(f"{message.get('type')} frame: {key} is not a list of str")
    return items


def _reasons(message: Mapping[str, Any], key: str) -> dict[str, str]:
    reasons = message.get(key, {})
    if not isinstance(reasons, dict) or not all(
        isinstance(item, str) for item in (*reasons, *reasons.values())
    ):
        raise ProtocolError(f"{message.get('type')} frame: {key} is not an object of str")
    return reasons


def check_zygote_event(packet: bytes) -> ZygoteEvent:
    """A control message from the zygote, checked (a packet that is none ends the executor's reading).

    Raises:
        ProtocolError: a message the zygote does not send. ValueError: the packet is not JSON.
    """
    message = json.loads(packet)
    kind = message.get("type") if isinstance(message, dict) else None
    if kind == "ready" and isinstance(message.get("capabilities"), dict):
        return ReadyMessage(type="ready", pid=_int(message, "pid"), capabilities=message["capabilities"])
    if kind == "spawned":
        return SpawnedMessage(type="spawned", id=_int(message, "id"), pid=_int(message, "pid"))
    if kind == "exited":
        exited = ExitedMessage(type="exited", pid=_int(message, "pid"))
        if "code" in message:
            exited["code"] = _int(message, "code")
        if "signal" in message:
            exited["signal"] = _int(message, "signal")
        return exited
    if kind == "failed":
        request_id = None if message.get("id") is None else _int(message, "id")
        return FailedMessage(type="failed", id=request_id, error=str(message.get("error")))
    raise ProtocolError(f"unexpected control message {_clip(message)}")


def encode_control(message: ZygoteCommand | ZygoteEvent) -> bytes:
    """One control packet: the message as JSON."""
    return json.dumps(message).encode()


def _int(message: Mapping[str, Any], key: str) -> int:
    value = message.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{message.get('type')} message: {key} is not an int")
    return value


def _clip(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


# --- framing ---------------------------------------------------------------------------------------


MAX_FRAME_BYTES = 64 * 1024 * 1024
_HEADER = struct.Struct(">I")
HEADER_BYTES = _HEADER.size
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_frame(message: Mapping[str, object]) -> bytes:
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
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # too deep: a hostile worker's frame
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
    """Blocking frame reader over a socket, for the worker (one thread reads at a time)."""

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


def send_frame(sock: socket.socket, message: WorkerFrame) -> None:
    """Write one frame; safe to call from several threads of the worker."""
    data = encode_frame(message)
    with _send_lock:
        sock.sendall(data)
