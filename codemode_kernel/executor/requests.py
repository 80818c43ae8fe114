"""WorkerRequests: what the kernel does for a running program, frame by frame.

A worker cannot reach a server, the artifact store or a model: it asks the kernel over its channel. This
module reads the worker's frames during one execution (checked on arrival: ``executor.wire``) and answers
them: tool calls (through the hub, or from a replay record), ``llm()`` (through the configured model,
logged like a tool call), and artifact requests (against the workspace's store, off the loop). Each
answer is a ``tool_result`` or ``artifact_result`` frame back to the worker (docs/protocol.md).

A caller's tool answered here (a notebook's function) runs for the program: the tool calls it makes are
the program's to approve (``approvals.acting_for``), asked about by the run's approver.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from ..approvals import ApprovalCheck, acting_for
from ..artifacts import ArtifactStore
from ..config import CodeModeSettings
from ..core.errors import (
    ArtifactError,
    ArtifactNotFoundError,
    CodeModeError,
    LLMError,
    ProtocolError,
    ServerError,
    ToolArgumentError,
    ToolError,
    ToolTimeoutError,
    UnknownToolError,
)
from ..core.records import ArtifactMetadata, RequestError, ValueEnvelope
from ..core.toolspec import ToolSpec
from ..hub import ToolHub
from ..hub.validation import ArgumentValidator
from ..worker.protocol import (
    ArtifactFrame,
    ArtifactResultFailed,
    ArtifactResultOk,
    ToolCallFrame,
    ToolResultFailed,
    ToolResultOk,
    encode_frame,
)
from ..worker.tools_module import LLM_SERVER, LLM_TOOL
from ..worker.values import decode_value, encode_artifact
from .execution import Execution, LLMHandler
from .owned import ToolAnswer
from .replay import REPLAYED, describe_call
from .wire import read_frame_async

__all__ = ["WorkerRequests"]

log = logging.getLogger(__name__)
_REPLAYABLE = ("ok", "tool_error", "invalid_arguments", "timeout", "server_error", "denied")
_ERROR_FOR_STATUS = {
    "invalid_arguments": "ToolArgumentError",
    "timeout": "ToolTimeoutError",
    "denied": "ToolError",
}

ArtifactAnswer = ArtifactMetadata | ValueEnvelope | list[ArtifactMetadata]
"""What an artifact request gets: the stored artifact's metadata, the loaded value, or the listing."""


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
        """Read the worker's frames until ``done``, end of channel, or a broken frame.

        A ``protections`` report is taken only as the first frame of a fresh worker, which sends it on
        entering its sandbox: any later one could only come from the program, rewriting its own result.
        """
        try:
            while (frame := await read_frame_async(reader)) is not None:
                first = state.frames_read == 0
                state.frames_read += 1
                if frame["type"] == "stdout" or frame["type"] == "stderr":
                    state.output(frame["type"], frame["data"])
                elif frame["type"] == "tool_call":
                    state.track(self._tool_call(state, frame))
                elif frame["type"] == "artifact":
                    state.track(self._artifact_request(state, frame))
                elif frame["type"] == "notify":
                    state.note(frame)
                elif frame["type"] == "protections":
                    if not (first and state.fresh):
                        raise ProtocolError("a protections report after the program started")
                    state.protections = frame
                else:
                    state.done = frame
                    return
        except ProtocolError as exc:
            state.broken = str(exc)
        except (ConnectionError, OSError) as exc:
            state.broken = f"channel failed: {exc}"

    # -- tool calls -------------------------------------------------------------------------------

    async def _tool_call(self, state: Execution, call: ToolCallFrame) -> None:
        call_id, seq = call["id"], call.get("seq")
        server, tool, arguments = call["server"], call["tool"], call["arguments"]
        plan = state.plan
        if plan.book is not None and self._replay_call(state, call_id, server, tool, arguments, seq):
            return
        owned = plan.owned.get((server, tool))
        if plan.pending_all or (owned is not None and owned.answer is None):
            state.pending.append(
                {"id": call_id, "server": server, "tool": tool, "arguments": arguments, "seq": seq}
            )
            state.pending_changed.set()
            return
        if owned is not None and owned.answer is not None:
            await self._owned_call(state, call_id, owned.spec, owned.answer, arguments, seq)
            return
        if (server, tool) == (LLM_SERVER, LLM_TOOL):
            await self._llm_call(state, call_id, arguments, seq)
            return
        if self.settings.is_excluded(server, tool):
            # The worker has no function for it (its tools follow these settings), but a program could
            # still send the frame: the rule is enforced here, where calls are made.
            refused = UnknownToolError(
                f"{tool} is excluded from code mode here (excludedTools in the codeMode settings): programs "
                f"cannot call it; the agent offers it to the model as an ordinary tool"
            )
            _fail(state, call_id, _error_data(refused, tool))
            return
        try:
            result = await self.hub.acall(
                server,
                tool,
                arguments,
                execution_id=state.execution_id,
                seq=seq,
                progress=state.progress_of(tool, seq, call_id if call.get("progress") else None),
                approval=plan.approval,
            )
        except CodeModeError as exc:
            _fail(state, call_id, _error_data(exc, tool))
            return
        state.reply(ToolResultOk(type="tool_result", id=call_id, ok=True, result=result))

    async def _owned_call(
        self,
        state: Execution,
        call_id: int,
        spec: ToolSpec,
        answer: ToolAnswer,
        arguments: dict[str, Any],
        seq: int | None,
    ) -> None:
        """Answer a call of the caller's own tool (a notebook's function): checked, run, logged like any.

        The function runs for the program: the tool calls it makes are asked about as the program's.
        """
        calls = self.hub.call_log
        record = calls.start(spec.server, spec.name, arguments, execution_id=state.execution_id, seq=seq)
        run = state.plan.approval
        for_program = ApprovalCheck(
            run.policy if run is not None else self.hub.unstated.policy,
            run.approver if run is not None else None,
            state.execution_id,
            origin="notebook_tool",
            through=spec.name,
        )
        try:
            ArgumentValidator(spec).validate(arguments)
            with acting_for(for_program):
                result = await answer(arguments)
        except ToolArgumentError as exc:
            calls.finish(record, "invalid_arguments", error=str(exc))
            _fail(state, call_id, _error_data(exc, spec.name))
            return
        except ToolError as exc:
            calls.finish(record, "tool_error", error=str(exc))
            _fail(state, call_id, _error_data(exc, spec.name))
            return
        except asyncio.CancelledError:
            calls.finish(record, "cancelled", error="the execution was stopped")
            raise
        except Exception as exc:  # the owner's code failed: the program sees it as the tool's error
            message = f"{spec.name} raised {type(exc).__name__}: {exc}"
            calls.finish(record, "tool_error", error=message)
            _fail(
                state, call_id, _error_data(ToolError(message, server=spec.server, tool=spec.name), spec.name)
            )
            return
        calls.finish(record, "tool_error" if result.get("isError") else "ok", result=result)
        state.reply(ToolResultOk(type="tool_result", id=call_id, ok=True, result=result))

    async def _llm_call(
        self, state: Execution, call_id: int, arguments: dict[str, Any], seq: int | None
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
            _fail(state, call_id, _error_data(exc, LLM_TOOL))
            return
        except asyncio.CancelledError:
            calls.finish(record, "cancelled", error="the execution was stopped")
            raise
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        calls.finish(record, "ok", result=result)
        state.reply(ToolResultOk(type="tool_result", id=call_id, ok=True, result=result))

    def _replay_call(
        self,
        state: Execution,
        call_id: int,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        seq: int | None,
    ) -> bool:
        """Answer a call from the record (logged as replayed), or fail it as diverged; False: not recorded.

        A call the record lacks is the caller's (pending) or made live when the run may go beyond its
        record; in a strict replay it fails. Either way, a record holding a different call at this place
        means the program asked something else than when it was recorded: that fails, naming both.
        """
        book = state.plan.book
        assert book is not None
        recorded = book.answer(tool, arguments)
        calls = self.hub.call_log
        if recorded is None:
            other = book.conflict(seq, tool, arguments)
            if other is None and not state.plan.strict:
                return False
            message = f"replay diverged: no recorded result for {describe_call(tool, arguments)}"
            if other is not None:
                message = (
                    f"replay diverged at call {seq}: the program called {describe_call(tool, arguments)}, "
                    f"where the record has {describe_call(other['tool'], other.get('arguments') or {})}; "
                    "a program answered from a record must make the same calls in the same order"
                )
            record = calls.start(server, tool, arguments, execution_id=state.execution_id, seq=seq)
            calls.finish(record, "server_error", error=message)
            _fail(state, call_id, RequestError(type="ServerError", message=message, server=server))
            return True
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
            warnings=(REPLAYED,),
        )
        if status in ("ok", "tool_error") and isinstance(result, dict):
            state.reply(ToolResultOk(type="tool_result", id=call_id, ok=True, result=result))
            return True
        error = RequestError(
            type=_ERROR_FOR_STATUS.get(str(status), "ServerError"),
            message=str(recorded.get("error") or status),
            tool=tool,
        )
        _fail(state, call_id, error)
        return True

    # -- artifacts --------------------------------------------------------------------------------

    async def _artifact_request(self, state: Execution, request: ArtifactFrame) -> None:
        """Answer a program's store_artifact / get_artifact / list_artifacts, off the loop (SQLite)."""
        request_id = request["id"]
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(None, self._artifact_op, state.execution_id, request)
            frame = encode_frame(
                ArtifactResultOk(type="artifact_result", id=request_id, ok=True, result=result)
            )
        except ArtifactError as exc:
            error = RequestError(type=type(exc).__name__, message=str(exc), key=getattr(exc, "key", None))
            frame = encode_frame(
                ArtifactResultFailed(type="artifact_result", id=request_id, ok=False, error=error)
            )
        except ProtocolError as exc:
            message_text = (
                f"the artifact is too large to send to a program ({exc}); read it in the kernel with "
                "executor.artifacts.read_bytes(id)"
            )
            error = RequestError(type="ArtifactError", message=message_text)
            frame = encode_frame(
                ArtifactResultFailed(type="artifact_result", id=request_id, ok=False, error=error)
            )
        else:
            if request["op"] == "store":
                state.artifact_ids.append(cast(ArtifactMetadata, result)["id"])
        if not state.writer.is_closing():
            state.writer.write(frame)

    def _artifact_op(self, execution_id: str, request: ArtifactFrame) -> ArtifactAnswer:
        """Run one artifact request against the store (on a worker thread); what the program gets back."""
        if request["op"] == "store":
            try:
                value = decode_value(request["value"])
            except ValueError as exc:  # the envelope comes from untrusted code
                raise ArtifactError(f"store_artifact: {exc}") from None
            artifact = self.artifacts.put(
                value,
                name=request["name"],
                type=request["mime_type"],
                description=request["description"],
                execution_id=execution_id,
            )
            return artifact.to_dict()
        if request["op"] == "get":
            key: object = request["key"]  # the program's, as it passed it
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
        return [artifact.to_dict() for artifact in self.artifacts.list()]

    async def artifacts_of(self, state: Execution) -> list[ArtifactMetadata]:
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


def _fail(state: Execution, call_id: int, error: RequestError) -> None:
    """Answer a tool call with an error; the worker raises it at the program's calling line."""
    state.reply(ToolResultFailed(type="tool_result", id=call_id, ok=False, error=error))


def _error_data(exc: CodeModeError, tool: str) -> RequestError:
    """The error a failed call's answer carries; the worker raises the same class (``channel.py``)."""
    data = RequestError(type=type(exc).__name__, message=str(exc), tool=tool)
    if isinstance(exc, ToolArgumentError):
        data["field"] = exc.field
    if isinstance(exc, ToolTimeoutError):
        data["timeout"] = exc.timeout
    if isinstance(exc, (ServerError, ToolError)):
        data["server"] = exc.server
    return data
