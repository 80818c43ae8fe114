"""A real worker's frames fit the wire format's types, and answers built from them reach the program.

The worker's main loop runs in a process of its own (no sandbox: that is the executor's part) and this
test plays the kernel over a socket pair: it sends typed ``run`` frames, answers each request with a typed
frame, and checks every frame the worker sends against ``WorkerFrame``, key by key.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from codemode_kernel.core.records import ArtifactMetadata, LLMRequest, RequestError
from codemode_kernel.worker.protocol import (
    ArtifactResultFailed,
    ArtifactResultOk,
    FrameReader,
    KernelFrame,
    RunFrame,
    ToolResultFailed,
    ToolResultOk,
    WorkerFrame,
    encode_frame,
)
from tests.unit.frame_check import check, problems

ECHO = {
    "server": "demo",
    "name": "echo",
    "function_name": "echo",
    "description": "Echo a text.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
WORKER = f"""
import socket, sys
from codemode_kernel.worker.channel import Channel
from codemode_kernel.worker.main import serve
from codemode_kernel.worker.tools_module import ToolRuntime, build_tools_module

runtime = ToolRuntime()
build_tools_module([{json.dumps(ECHO)}], runtime)
runtime.channel = channel = Channel(socket.socket(fileno=int(sys.argv[1])))
serve(channel, runtime)
"""
PROGRAM = """
import sys
print("hello")
print("careful", file=sys.stderr)
echoed = echo(text="hi")
try:
    echo(text="refuse me")
except ToolError as exc:
    refused = str(exc)
stored = store_artifact({"a": 1}, name="doc", description="a doc")
back = get_artifact("doc")
listed = list_artifacts()
try:
    get_artifact("missing")
except ArtifactNotFoundError as exc:
    missing = exc.key
answer = llm("Say hi", system="Be brief")
{"echoed": echoed, "refused": refused, "stored": stored, "back": back, "listed": len(listed),
 "missing": missing, "answer": answer}
"""
METADATA = ArtifactMetadata(
    id="a1b2c3d4e5f6",
    name="doc",
    type="application/json",
    description="a doc",
    size=8,
    created="2026-01-01T00:00:00.000+00:00",
    sha256="0" * 64,
    execution_id="e1",
)


class Kernel:
    """The kernel's end of one worker's channel, checking every frame in both directions."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader(sock)
        self.seen: list[dict[str, Any]] = []

    def send(self, frame: KernelFrame) -> None:
        check(dict(frame), KernelFrame)
        self.sock.sendall(encode_frame(frame))

    def serve(self, answer: Callable[[dict[str, Any]], KernelFrame | None]) -> dict[str, Any]:
        """Answer the worker's requests until its ``done``, which is returned."""
        while True:
            frame = self.reader.read()
            assert frame is not None, "the worker closed its channel before done"
            check(frame, WorkerFrame)
            self.seen.append(frame)
            if frame["type"] == "done":
                return frame
            reply = answer(frame)
            if reply is not None:
                self.send(reply)


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    ours, theirs = socket.socketpair()
    ours.settimeout(60)
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(theirs.fileno())], pass_fds=(theirs.fileno(),)
    )
    theirs.close()
    try:
        yield Kernel(ours)
    finally:
        ours.close()
        assert process.wait(timeout=30) == 0


def answer(frame: dict[str, Any]) -> KernelFrame | None:
    """What the kernel answers: an echo, a refusal, the store's metadata and values, a model's text."""
    if frame["type"] == "tool_call":
        if (frame["server"], frame["tool"]) == ("codemode", "llm"):
            assert not problems(frame["arguments"], LLMRequest)
            text = f"hi ({frame['arguments']['system']})"
            return ToolResultOk(
                type="tool_result",
                id=frame["id"],
                ok=True,
                result={"content": [{"type": "text", "text": text}]},
            )
        if frame["arguments"]["text"] == "refuse me":
            error = RequestError(type="ToolError", message="refused", tool="echo", server="demo")
            return ToolResultFailed(type="tool_result", id=frame["id"], ok=False, error=error)
        text = frame["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        return ToolResultOk(type="tool_result", id=frame["id"], ok=True, result=result)
    if frame["type"] == "artifact":
        if frame["op"] == "store":
            return ArtifactResultOk(type="artifact_result", id=frame["id"], ok=True, result=METADATA)
        if frame["op"] == "list":
            return ArtifactResultOk(type="artifact_result", id=frame["id"], ok=True, result=[METADATA])
        if frame["key"] == "doc":
            envelope = {"kind": "json", "data": {"a": 1}}
            return ArtifactResultOk(type="artifact_result", id=frame["id"], ok=True, result=envelope)
        error = RequestError(type="ArtifactNotFoundError", message="no artifact 'missing'", key=frame["key"])
        return ArtifactResultFailed(type="artifact_result", id=frame["id"], ok=False, error=error)
    return None


def test_every_frame_of_a_run_fits_its_type(kernel: Kernel) -> None:
    kernel.send(
        RunFrame(type="run", code=PROGRAM, filename="<code>", inputs={}, execution_id="e1", session=True)
    )
    done = kernel.serve(answer)
    assert done["status"] == "ok", done["error"]
    assert done["value"]["data"] == {
        "echoed": "hi",
        "refused": "refused",
        "stored": METADATA["id"],
        "back": {"a": 1},
        "listed": 1,
        "missing": "missing",
        "answer": "hi (Be brief)",
    }
    kinds = [(f["type"], f.get("op") or f.get("tool")) for f in kernel.seen]
    assert kinds == [
        ("stdout", None),
        ("stderr", None),
        ("tool_call", "echo"),
        ("tool_call", "echo"),
        ("artifact", "store"),
        ("artifact", "get"),
        ("artifact", "list"),
        ("artifact", "get"),
        ("tool_call", "llm"),
        ("done", None),
    ]
    assert [f["seq"] for f in kernel.seen if f["type"] == "tool_call"] == [1, 2, 3]
    store = next(f for f in kernel.seen if f.get("op") == "store")
    assert store["value"] == {"kind": "json", "data": {"a": 1}} and store["mime_type"] is None

    # The session's next run: an error record, with where it happened, and inputs as envelopes.
    code = "total = sum(numbers)\ntotal / zero"
    inputs = {"numbers": {"kind": "json", "data": [1, 2]}, "zero": {"kind": "json", "data": 0}}
    kernel.send(
        RunFrame(type="run", code=code, filename="<code-1>", inputs=inputs, execution_id="e2", session=True)
    )
    failed = kernel.serve(answer)
    assert failed["status"] == "error" and failed["value"] is None
    assert failed["error"]["type"] == "ZeroDivisionError" and failed["error"]["line"] == 2
    assert set(failed["error"]) == {"type", "message", "line", "column", "source_line", "traceback"}


def test_a_syntax_error_and_sys_exit_end_with_typed_done_frames(kernel: Kernel) -> None:
    kernel.send(
        RunFrame(type="run", code="x = (", filename="<code>", inputs={}, execution_id="e1", session=True)
    )
    syntax = kernel.serve(answer)
    assert syntax["status"] == "error" and syntax["error"]["type"] == "SyntaxError"
    kernel.send(
        RunFrame(
            type="run",
            code="import sys\nsys.exit(0)",
            filename="<code-1>",
            inputs={},
            execution_id="e2",
            session=True,
        )
    )
    assert kernel.serve(answer) == {"type": "done", "status": "ok", "value": None, "error": None}
