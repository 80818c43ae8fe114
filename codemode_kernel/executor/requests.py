"""WorkerRequests: what the kernel does for a running program, frame by frame.

A worker cannot reach a server, the artifact store or a model: it asks the kernel over its channel. This
module reads the worker's frames during one execution and answers them: tool calls (through the hub, or
from a replay record), ``llm()`` (through the configured model, logged like a tool call), and artifact
requests (against the workspace's store, off the loop). Each answer is a ``tool_result`` or
``artifact_result`` frame back to the worker.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..artifacts import ArtifactStore
from ..config import CodeModeSettings
from ..errors import (
    ArtifactError,
    ArtifactNotFoundError,
    CodeModeError,
    LLMError,
    ProtocolError,
    UnknownToolError,
)
from ..hub import ToolHub
from ..worker.protocol import encode_frame
from ..worker.tools_module import LLM_SERVER, LLM_TOOL
from ..worker.values import decode_value, encode_artifact
from .execution import Execution, LLMHandler
from .replay import describe_call
from .wire import read_frame_async

__all__ = ["WorkerRequests"]

log = logging.getLogger(__name__)
_REPLAYABLE = ("ok", "tool_error", "invalid_arguments", "timeout", "server_error")
_ERROR_FOR_STATUS = {"invalid_arguments": "ToolArgumentError", "timeout": "ToolTimeoutError"}


class WorkerRequests:
    """Answers the requests of an executor's workers; one instance serves every execution of it."""

    def __init__(
        self,
        hub: ToolHub,
        artifacts: ArtifactStore,
        settings: CodeModeSettings,
        llm: LLMHandler | None = None,
    ) -> None:
        self.hub = hub
        self.artifacts = artifacts
        self.settings = settings
        self.llm = llm

    async def serve(self, reader: asyncio.StreamReader, state: Execution) -> None:
        """Read the worker's frames until ``done``, end of channel, or a broken frame."""
        try:
            while (message := await read_frame_async(reader)) is not None:
                kind = message.get("type")
                if kind in ("stdout", "stderr"):
                    state.output(str(kind), str(message.get("data", "")))
                elif kind == "tool_call":
                    state.track(self._tool_call(state, message))
                elif kind == "artifact":
                    state.track(self._artifact_request(state, message))
                elif kind == "protections":
                    state.protections = message
                elif kind == "done":
                    state.done = message
                    return
                else:
                    raise ProtocolError(f"unexpected frame type {kind!r}")
        except ProtocolError as exc:
            state.broken = str(exc)
        except (ConnectionError, OSError) as exc:
            state.broken = f"channel failed: {exc}"

    # -- tool calls -------------------------------------------------------------------------------

    async def _tool_call(self, state: Execution, message: dict[str, Any]) -> None:
        call_id, seq = message.get("id"), _seq(message)
        server, tool = str(message.get("server", "")), str(message.get("tool", ""))
        arguments = message.get("arguments")
        if not isinstance(arguments, dict):
            arguments = {}
        if state.book is not None:
            self._replay_call(state, call_id, server, tool, arguments, seq)
            return
        if (server, tool) == (LLM_SERVER, LLM_TOOL):
            await self._llm_call(state, call_id, arguments, seq)
            return
        if self.settings.is_excluded(server, tool):
            # The namespace may still hold the function (it is built for the config's defaults, and a
            # model's own codeMode can exclude more): the rule is enforced here, where calls are made.
            refused = UnknownToolError(
                f"{tool} is excluded from code mode here (excludedTools in the codeMode settings): programs "
                f"cannot call it; the agent offers it to the model as an ordinary tool"
            )
            state.reply(
                {"type": "tool_result", "id": call_id, "ok": False, "error": _error_data(refused, tool)}
            )
            return
        try:
            result = await self.hub.acall(
                server,
                tool,
                arguments,
                execution_id=state.execution_id,
                seq=seq,
                progress=state.progress_of(tool, seq),
            )
        except CodeModeError as exc:
            state.reply({"type": "tool_result", "id": call_id, "ok": False, "error": _error_data(exc, tool)})
            return
        state.reply({"type": "tool_result", "id": call_id, "ok": True, "result": result})

    async def _llm_call(
        self, state: Execution, call_id: Any, arguments: dict[str, Any], seq: int | None
    ) -> None:
        """Answer a program's ``llm()`` with the configured model; logged (and replayable) as a tool call."""
        calls = self.hub.call_log
        record = calls.start(LLM_SERVER, LLM_TOOL, arguments, execution_id=state.execution_id, seq=seq)
        try:
            if self.llm is None:
                raise LLMError(
                    'llm(): no model is configured for this kernel; add one to "models" in the config '
                    "(docs/llm.md)"
                )
            text = await self.llm(arguments)
        except CodeModeError as exc:
            calls.finish(record, "server_error", error=str(exc))
            state.reply(
                {"type": "tool_result", "id": call_id, "ok": False, "error": _error_data(exc, LLM_TOOL)}
            )
            return
        except asyncio.CancelledError:
            calls.finish(record, "cancelled", error="the execution was stopped")
            raise
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        calls.finish(record, "ok", result=result)
        state.reply({"type": "tool_result", "id": call_id, "ok": True, "result": result})

    def _replay_call(
        self,
        state: Execution,
        call_id: Any,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        seq: int | None,
    ) -> None:
        """Answer a call from the record (and log it as replayed), or leave it pending, or fail it."""
        assert state.book is not None
        recorded = state.book.answer(tool, arguments)
        calls = self.hub.call_log
        if recorded is None:
            if state.pending_mode:
                state.pending.append({"id": call_id, "server": server, "tool": tool, "arguments": arguments})
                state.pending_changed.set()
                return
            message = f"replay diverged: no recorded result for {describe_call(tool, arguments)}"
            record = calls.start(server, tool, arguments, execution_id=state.execution_id, seq=seq)
            calls.finish(record, "server_error", error=message)
            error = {"type": "ServerError", "message": message, "server": server}
            state.reply({"type": "tool_result", "id": call_id, "ok": False, "error": error})
            return
        status = recorded.get("status", "ok")
        result = recorded.get("result")
        if isinstance(recorded.get("artifact_id"), str):  # the record holds a preview; the artifact the whole
            try:
                result = self.artifacts.load(recorded["artifact_id"])
            except ArtifactError as exc:
                status, result = "server_error", None
                recorded = {**recorded, "error": f"replay: the recorded result is gone ({exc})"}
        record = calls.start(server, tool, arguments, execution_id=state.execution_id, seq=seq)
        calls.finish(
            record,
            status if status in _REPLAYABLE else "server_error",
            result=result,
            error=recorded.get("error"),
            warnings=("replayed from the record; no server was called",),
        )
        if status in ("ok", "tool_error") and isinstance(result, dict):
            state.reply({"type": "tool_result", "id": call_id, "ok": True, "result": result})
            return
        error = {
            "type": _ERROR_FOR_STATUS.get(str(status), "ServerError"),
            "message": str(recorded.get("error") or status),
            "tool": tool,
        }
        state.reply({"type": "tool_result", "id": call_id, "ok": False, "error": error})

    # -- artifacts --------------------------------------------------------------------------------

    async def _artifact_request(self, state: Execution, message: dict[str, Any]) -> None:
        """Answer a program's store_artifact / get_artifact / list_artifacts, off the loop (SQLite)."""
        request_id = message.get("id")
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(None, self._artifact_op, state.execution_id, message)
            frame = encode_frame({"type": "artifact_result", "id": request_id, "ok": True, "result": result})
        except ArtifactError as exc:
            error = {"type": type(exc).__name__, "message": str(exc), "key": getattr(exc, "key", None)}
            frame = encode_frame({"type": "artifact_result", "id": request_id, "ok": False, "error": error})
        except ProtocolError as exc:
            message_text = (
                f"the artifact is too large to send to a program ({exc}); read it in the kernel with "
                "executor.artifacts.read_bytes(id)"
            )
            error = {"type": "ArtifactError", "message": message_text}
            frame = encode_frame({"type": "artifact_result", "id": request_id, "ok": False, "error": error})
        else:
            if message.get("op") == "store":
                state.artifact_ids.append(str(result["id"]))
        if not state.writer.is_closing():
            state.writer.write(frame)

    def _artifact_op(self, execution_id: str, message: dict[str, Any]) -> Any:
        """Run one artifact request against the store (on a worker thread); what the program gets back."""
        op = message.get("op")
        if op == "store":
            try:
                value = decode_value(message.get("value"))
            except ValueError as exc:  # the envelope comes from untrusted code
                raise ArtifactError(f"store_artifact: {exc}") from None
            artifact = self.artifacts.put(
                value,
                name=message.get("name"),
                type=message.get("mime_type"),
                description=message.get("description"),
                execution_id=execution_id,
            )
            return artifact.to_dict()
        if op == "get":
            key = message.get("key")
            if not isinstance(key, str):
                raise ArtifactNotFoundError(
                    f"get_artifact() takes an artifact's id or name (a str), not a {type(key).__name__}",
                    key=repr(key),
                )
            value = self.artifacts.load(key)
            try:
                return encode_artifact(value)
            except TypeError as exc:
                raise ArtifactError(f"artifact {key!r} cannot be sent to a program: {exc}") from None
        if op == "list":
            return [artifact.to_dict() for artifact in self.artifacts.list()]
        raise ArtifactError(f"unknown artifact request {op!r}; expected store, get or list")

    async def artifacts_of(self, state: Execution) -> list[dict[str, Any]]:
        """The metadata of what an execution stored, in the order it was stored."""
        if not state.artifact_ids:
            return []  # the store is not even opened for an execution that made none
        loop = asyncio.get_running_loop()
        try:
            made = await loop.run_in_executor(
                None, lambda: self.artifacts.list(execution_id=state.execution_id)
            )
        except ArtifactError:
            log.exception("could not list the artifacts of execution %s", state.execution_id)
            return []
        by_id = {artifact.id: artifact for artifact in made}
        return [by_id[i].to_dict() for i in state.artifact_ids if i in by_id]


def _seq(message: dict[str, Any]) -> int | None:
    """The number the worker gave a call (None from a worker that does not number them)."""
    seq = message.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _error_data(exc: CodeModeError, tool: str) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc), "tool": tool}
    for name in ("field", "timeout", "server"):
        if hasattr(exc, name):
            data[name] = getattr(exc, name)
    return data
