"""Tools the client of ``codemode serve`` owns: its definitions, the pending answer and the follow-up call.

The pending-call protocol of seed 003 (``executor/owned.py``, docs/pending.md) over MCP, kept stateless as
the seed keeps it: ``execute_python(code, tools=[...])`` makes each of the client's tool definitions a typed
function of the program, and a run that waits on their calls answers with status ``pending``, the calls, and
a ``resume`` state holding what the next round needs besides the code (the definitions, the record of every
call answered so far, the pending calls, a digest of the code). The client runs the calls and sends
``execute_python(code, resume=..., answers=[{"id": ..., "result" | "error": ...}])`` with the same code; the
program runs again from the top, every call in the record answered from it (no server called twice), and
goes on. The code is sent again, as the seed's client sends its history again: ``code`` stays the one
required argument of ``execute_python``, as every host and model already knows it.

The state grants nothing: a record only ever *answers* calls (it never makes one), and whoever can send it
can already run any program. It is checked as carefully as the rest of the input, so a malformed one is an
error naming the field, never a crash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from ..calllog import ToolCallRecord
from ..core.errors import ClientToolsError
from ..core.limits import TimeoutValueError, check_timeout
from ..core.toolspec import ToolSpec
from ..executor import ExecutionResult
from ..executor.owned import OwnedTool, answered, call_result
from ..executor.result import ErrorRecord, PendingCall
from ..hub.validation import ArgumentValidator, refs_not_inside, refs_outside
from ..toolbox import RESERVED_NAMES
from ..typegen import build_tool_models

__all__ = [
    "ANSWERS_PARAMETER",
    "CLIENT_SERVER",
    "RESUME_PARAMETER",
    "RESUME_VERSION",
    "TOOLS_PARAMETER",
    "ClientRun",
    "ClientToolsError",
    "client_run",
    "error_hint",
    "pending_reply",
]

CLIENT_SERVER = "client"
"""The owner the client's tools are logged under (``client/web_search`` in call records and messages)."""

RESUME_VERSION = 1

TOOLS_PARAMETER = (
    "Optional. Your own tools, which this server cannot run, as MCP tool definitions (name, description, "
    "inputSchema, optional outputSchema, as in tools/list): each is a typed function in the program, named "
    "in snake_case (webSearch is web_search) and called with keyword arguments. When the program calls "
    'them, the result has status "pending" and lists the calls; run them and answer in a follow-up call '
    "with the same code, resume and answers. Not with session."
)
RESUME_PARAMETER = (
    "Only in a follow-up call, with the same code: the `resume` object of the pending result, exactly as "
    "it came. It holds your tools and every answer so far, so tools may be left out."
)
ANSWERS_PARAMETER = (
    'Only with resume: the results of the pending calls, [{"id": "call_2", "result": <what the tool '
    'returned: any JSON value, or an MCP CallToolResult>}], or {"id": ..., "error": "message"} for a '
    "call that failed (the program gets a ToolError). A call left unanswered is asked again."
)

_REPLAYABLE = ("ok", "tool_error", "invalid_arguments", "timeout", "server_error")
_KEEP = ("seq", "server", "tool", "arguments", "status", "result", "error", "artifact_id")
"""What the next round's replay reads from a call record; the rest (timings, ids) is left out of the state."""
_PASS_BACK = "pass back the `resume` object of the pending result exactly as it came"
_DIVERGED = "replay diverged"


@dataclass(frozen=True)
class ClientRun:
    """One round of a program with the client's tools: what to run, and with which record."""

    code: str
    definitions: list[dict[str, Any]]
    """The client's tool definitions as checked, kept in the resume state."""
    resumed_sha256: str | None
    """The digest of the code the resume state was made for (None in a first round)."""
    tools: list[OwnedTool]
    record: list[Mapping[str, Any]]
    """The calls answered so far (the replay record), the client's new answers last."""
    timeout: float | None


def client_run(
    code: str,
    tools: Sequence[Any] | None,
    resume: Mapping[str, Any] | None,
    answers: Sequence[Any] | None,
    timeout: float | None,
) -> ClientRun | None:
    """The round these ``execute_python`` arguments ask for; None for a plain run (no tools, no resume).

    ``tools`` and ``timeout`` given with ``resume`` replace the state's.

    Raises:
        ClientToolsError: a bad tool definition, a malformed state, or answers that answer nothing.
    """
    if resume is None:
        if answers is not None:
            raise ClientToolsError(
                "answers: answers need the `resume` object of the pending result they answer; pass it "
                "as resume, with these answers"
            )
        if tools is None:
            return None
        definitions = _check_tools(tools, "tools")
        return ClientRun(code, definitions, None, _owned(definitions), [], timeout)
    state = _check_resume(resume)
    definitions = _check_tools(tools, "tools") if tools is not None else state.definitions
    if not answers:
        ids = ", ".join(call["id"] for call in state.pending)
        raise ClientToolsError(
            f"answers: missing; give the result of each pending call ({ids}) as "
            '[{"id": "...", "result": ...}], or {"id": "...", "error": "..."} for a call that failed'
        )
    record = [*state.record, *_check_answers(answers, state.pending)]
    return ClientRun(
        code,
        definitions,
        state.code_sha256,
        _owned(definitions),
        record,
        timeout if timeout is not None else state.timeout,
    )


def _check_tools(tools: Sequence[Any], where: str) -> list[dict[str, Any]]:
    """The client's MCP tool definitions, checked: each a name, an object input schema, valid JSON Schema."""
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        raise ClientToolsError(f"{where}: must be a list of MCP tool definitions (name, inputSchema...)")
    checked: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, tool in enumerate(tools):
        place = f"{where}[{index}]"
        if not isinstance(tool, Mapping):
            raise ClientToolsError(
                f"{place}: must be an MCP tool definition, an object such as "
                '{"name": "web_search", "description": "...", "inputSchema": {"type": "object", ...}}'
            )
        name = tool.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ClientToolsError(f'{place}: "name" is missing; give each tool its name, as in tools/list')
        if name in seen:
            raise ClientToolsError(
                f'{place}: a second tool named "{name}" ({where}[{seen[name]}] is the first); give each '
                "tool once, or each its own name"
            )
        seen[name] = index
        place = f'{place} ("{name}")'
        description = tool.get("description") or ""  # null too: what a serialized SDK Tool holds
        if not isinstance(description, str):
            raise ClientToolsError(f'{place}: "description" must be a string')
        title = tool.get("title")
        if title is not None and not isinstance(title, str):
            raise ClientToolsError(f'{place}: "title" must be a string')
        definition: dict[str, Any] = {
            "name": name,
            "description": description,
            "inputSchema": _check_schema(tool.get("inputSchema"), f"{place}.inputSchema", required=True),
        }
        output = _check_schema(tool.get("outputSchema"), f"{place}.outputSchema", required=False)
        if output is not None:
            definition["outputSchema"] = output
        if title is not None:
            definition["title"] = title
        checked.append(definition)
    return checked


def pending_reply(
    result: ExecutionResult, run: ClientRun
) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """A pending run's answer to the client: its pending calls with ids, the resume state, what to do next."""
    pending = [_with_id(call, index) for index, call in enumerate(result.pending_calls)]
    record = [
        {key: call.get(key) for key in _KEEP if key in call}
        for call in result.tool_calls
        if call["status"] in _REPLAYABLE
    ]
    resume: dict[str, Any] = {
        "version": RESUME_VERSION,
        "code_sha256": run.resumed_sha256 or _digest(run.code),
        "tools": run.definitions,
        "record": record,
        "pending": pending,
    }
    if run.timeout is not None:
        resume["timeout"] = run.timeout
    return pending, resume, _instructions(pending, resume)


def error_hint(error: ErrorRecord, run: ClientRun) -> str:
    """A line on a failed round with the client's tools that says what went wrong with them, or ""."""
    message = str(error.get("message", ""))
    if message.startswith(_DIVERGED) and run.resumed_sha256 not in (None, _digest(run.code)):
        return (
            "The code is not the program the `resume` state was made for: send the same code with resume and "
            "answers, or run the new code without them.\n"
        )
    if error.get("type") == "NameError":
        specs = [tool.spec for tool in run.tools]
        renamed = [
            f"{m.spec.name} is {m.function_name}"
            for m in build_tool_models(specs, check=ArgumentValidator, reserved=RESERVED_NAMES)
            if m.function_name != m.spec.name and f"'{m.spec.name}'" in message
        ]
        if renamed:
            return f"Your tools have snake_case names in programs: {', '.join(renamed)}.\n"
    return ""


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


# -- the tool definitions -----------------------------------------------------------------------------


def _check_schema(schema: Any, place: str, *, required: bool) -> dict[str, Any] | None:
    """A tool's input or output schema: a JSON Schema object of type "object" (MCP requires both)."""
    if schema is None:
        if required:
            raise ClientToolsError(
                f'{place}: missing; give the tool\'s arguments as a JSON Schema, {{"type": "object", '
                '"properties": {...}, "required": [...]}} ({"type": "object"} for a tool without arguments)'
            )
        return None
    if not isinstance(schema, Mapping):
        raise ClientToolsError(
            f'{place}: must be a JSON Schema object such as {{"type": "object", "properties": {{...}}}}, '
            f"not {type(schema).__name__}"
        )
    if schema.get("type", "object") != "object":
        raise ClientToolsError(
            f'{place}: "type" is {json.dumps(schema["type"])}; MCP tools take and give objects: '
            'use "type": "object" with the values as properties'
        )
    checked: dict[str, Any] = {"type": "object", **schema}
    cls = jsonschema.validators.validator_for(checked)
    try:
        cls.check_schema(checked)
    except jsonschema.SchemaError as exc:
        at = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in exc.absolute_path)
        raise ClientToolsError(f"{place}{at}: not valid JSON Schema: {exc.message}") from None
    # The kernel checks calls and results against it, and never fetches a $ref (a file on this host, an
    # address): one that points outside the schema is refused now, so the client can put it in $defs.
    outside = refs_outside(checked, cls)
    if outside:
        raise ClientToolsError(
            f'{place}: {refs_not_inside(outside)}; put what it refers to under "$defs" and refer to '
            '"#/$defs/<name>"'
        )
    return checked


def _owned(definitions: Sequence[Mapping[str, Any]]) -> list[OwnedTool]:
    """Each definition as a caller's tool without an answer: its calls come back to the client as pending."""
    return [
        OwnedTool(
            ToolSpec(
                server=CLIENT_SERVER,
                name=d["name"],
                description=d["description"],
                input_schema=dict(d["inputSchema"]),
                output_schema=dict(d["outputSchema"]) if "outputSchema" in d else None,
                title=d.get("title"),
            )
        )
        for d in definitions
    ]


# -- the resume state and the answers -----------------------------------------------------------------


@dataclass(frozen=True)
class _State:
    code_sha256: str
    definitions: list[dict[str, Any]]
    record: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    timeout: float | None


def _check_resume(resume: Mapping[str, Any]) -> _State:
    if not isinstance(resume, Mapping):
        raise ClientToolsError(f"resume: must be an object; {_PASS_BACK}")
    version = resume.get("version")
    if version != RESUME_VERSION:
        raise ClientToolsError(
            f"resume.version: is {json.dumps(version)}, this server reads {RESUME_VERSION}; {_PASS_BACK}, "
            "or run the program again without resume"
        )
    code = resume.get("code_sha256")
    if not isinstance(code, str):
        raise ClientToolsError(f"resume.code_sha256: missing or not a string; {_PASS_BACK}")
    timeout = resume.get("timeout")
    try:
        timeout = None if timeout is None else check_timeout(timeout, field="resume.timeout")
    except TimeoutValueError as exc:
        raise ClientToolsError(f"{exc}; {_PASS_BACK}") from None
    definitions = _check_tools(_list(resume, "tools"), "resume.tools")
    record = [_check_record(call, f"resume.record[{i}]") for i, call in enumerate(_list(resume, "record"))]
    pending = [
        _check_pending(call, f"resume.pending[{i}]") for i, call in enumerate(_list(resume, "pending"))
    ]
    if not pending:
        raise ClientToolsError(f"resume.pending: no call is pending; {_PASS_BACK}")
    return _State(code, definitions, record, pending, timeout)


def _list(resume: Mapping[str, Any], key: str) -> list[Any]:
    value = resume.get(key)
    if not isinstance(value, list):
        raise ClientToolsError(f"resume.{key}: missing or not a list; {_PASS_BACK}")
    return value


def _check_call(call: Any, place: str) -> dict[str, Any]:
    """The fields every call of the state has: tool, server, arguments and seq."""
    if not isinstance(call, Mapping):
        raise ClientToolsError(f"{place}: must be a call object; {_PASS_BACK}")
    for key in ("server", "tool"):
        if not isinstance(call.get(key), str):
            raise ClientToolsError(f'{place}: "{key}" missing or not a string; {_PASS_BACK}')
    if not isinstance(call.get("arguments"), Mapping):
        raise ClientToolsError(f'{place} ({call["tool"]}): "arguments" must be an object; {_PASS_BACK}')
    seq = call.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
        raise ClientToolsError(f'{place} ({call["tool"]}): "seq" must be a call number; {_PASS_BACK}')
    return dict(call)


def _check_record(call: Any, place: str) -> dict[str, Any]:
    checked = _check_call(call, place)
    if checked.get("status") not in _REPLAYABLE:
        raise ClientToolsError(
            f'{place} ({checked["tool"]}): "status" must be one of {", ".join(_REPLAYABLE)}; {_PASS_BACK}'
        )
    if checked.get("result") is not None and not isinstance(checked["result"], Mapping):
        raise ClientToolsError(f'{place} ({checked["tool"]}): "result" must be an object; {_PASS_BACK}')
    if checked.get("error") is not None and not isinstance(checked["error"], str):
        raise ClientToolsError(f'{place} ({checked["tool"]}): "error" must be a string; {_PASS_BACK}')
    if checked.get("artifact_id") is not None and not isinstance(checked["artifact_id"], str):
        raise ClientToolsError(f'{place} ({checked["tool"]}): "artifact_id" must be a string; {_PASS_BACK}')
    return checked


def _check_pending(call: Any, place: str) -> dict[str, Any]:
    checked = _check_call(call, place)
    if not isinstance(checked.get("id"), str):
        raise ClientToolsError(f'{place} ({checked["tool"]}): "id" missing or not a string; {_PASS_BACK}')
    return checked


def _check_answers(answers: Sequence[Any], pending: Sequence[Mapping[str, Any]]) -> list[ToolCallRecord]:
    """Each answer as a record entry (``owned.answered``), matched to its pending call by id or seq."""
    if not isinstance(answers, Sequence) or isinstance(answers, str):
        raise ClientToolsError('answers: must be a list such as [{"id": "call_2", "result": ...}]')
    by_id = {call["id"]: call for call in pending}
    by_seq = {call["seq"]: call for call in pending if call.get("seq") is not None}
    known = ", ".join(f"{call['id']} ({call['tool']})" for call in pending)
    first: dict[str, int] = {}
    out: list[ToolCallRecord] = []
    for index, answer in enumerate(answers):
        place = f"answers[{index}]"
        if not isinstance(answer, Mapping):
            raise ClientToolsError(f'{place}: must be an object such as {{"id": "call_2", "result": ...}}')
        call = _answered_call(answer, place, by_id, by_seq, known)
        place = f"{place} ({call['id']}, {call['tool']})"
        if call["id"] in first:
            raise ClientToolsError(
                f"{place}: answered twice (answers[{first[call['id']]}] is the first); give one answer "
                "per call"
            )
        first[call["id"]] = index
        has_result, has_error = "result" in answer, "error" in answer
        if has_result == has_error:
            which = "not both" if has_result else "one of them"
            raise ClientToolsError(
                f'{place}: give "result" (what the tool returned: any JSON value, or an MCP CallToolResult) '
                f'or "error" (a message the program gets as a ToolError), {which}'
            )
        target = PendingCall(
            server=call["server"], tool=call["tool"], arguments=dict(call["arguments"]), seq=call.get("seq")
        )
        if has_error:
            error = answer["error"]
            if not isinstance(error, str) or not error.strip():
                raise ClientToolsError(f'{place}: "error" must be a message (a non-empty string)')
            out.append(answered(target, error=error))
        else:
            out.append(answered(target, _check_result(answer["result"], place)))
    return out


def _answered_call(
    answer: Mapping[str, Any],
    place: str,
    by_id: Mapping[str, Mapping[str, Any]],
    by_seq: Mapping[int, Mapping[str, Any]],
    known: str,
) -> Mapping[str, Any]:
    """The pending call an answer names by ``id`` (or ``seq``); both given must name the same one."""
    ident, seq = answer.get("id"), answer.get("seq")
    if ident is None and seq is None:
        raise ClientToolsError(
            f'{place}: give the "id" of the pending call it answers; the pending calls are {known}'
        )
    call = by_id.get(ident) if isinstance(ident, str) else None
    if ident is not None and call is None:
        raise ClientToolsError(
            f"{place}: no pending call has the id {json.dumps(ident)}; the pending calls are {known}"
        )
    if seq is not None:
        by_number = by_seq.get(seq) if isinstance(seq, int) and not isinstance(seq, bool) else None
        if by_number is None:
            raise ClientToolsError(
                f"{place}: no pending call has the seq {json.dumps(seq)}; the pending calls are {known}"
            )
        if call is not None and call is not by_number:
            raise ClientToolsError(
                f"{place}: id {json.dumps(ident)} and seq {seq} name different calls; give the id alone"
            )
        call = by_number
    assert call is not None
    return call


def _check_result(value: Any, place: str) -> dict[str, Any]:
    """An answer's result as a CallToolResult; one given as such must be well formed."""
    result = call_result(value)
    content = result["content"]
    if not all(isinstance(block, Mapping) and isinstance(block.get("type"), str) for block in content):
        raise ClientToolsError(
            f'{place}.result.content: each block must be an object with a "type", such as '
            '{"type": "text", "text": "..."}; or give the value itself as result'
        )
    if "isError" in result and not isinstance(result["isError"], bool):
        raise ClientToolsError(f"{place}.result.isError: must be true or false")
    structured = result.get("structuredContent")
    if structured is not None and not isinstance(structured, Mapping):
        raise ClientToolsError(f"{place}.result.structuredContent: must be an object")
    return result


# -- the pending answer ---------------------------------------------------------------------------------


def _with_id(call: PendingCall, index: int) -> dict[str, Any]:
    """A pending call as the client sees it, with the id its answer names (``call_<seq>``)."""
    seq = call.get("seq")
    ident = f"call_{seq}" if seq is not None else f"call_p{index + 1}"
    return {
        "id": ident,
        "seq": seq,
        "server": call["server"],
        "tool": call["tool"],
        "arguments": call["arguments"],
    }


def _instructions(pending: Sequence[Mapping[str, Any]], resume: Mapping[str, Any]) -> str:
    """What a model reading only the text must do next: run the calls, then call again with the answers."""
    count = len(pending)
    calls = "\n".join(
        f"  {call['id']}: {call['tool']} {json.dumps(call['arguments'], ensure_ascii=False)}"
        for call in pending
    )
    example = ", ".join(f'{{"id": "{call["id"]}", "result": ...}}' for call in pending[:2])
    return (
        f"The program is waiting for {count} call{'s' * (count != 1)} of your own tools (the tools you "
        "passed in `tools`; this server cannot run them):\n"
        f"{calls}\n"
        "Run each of them yourself, then call execute_python again with the same code and two more "
        "arguments:\n"
        "  resume: the JSON object after 'resume:' below, exactly as it is (it holds your tools and every "
        "answer so far: tools may be left out)\n"
        f'  answers: one entry per call, [{example}]: "result" is what the tool returned (any JSON value, or '
        'an MCP CallToolResult); give "error": "message" instead of "result" for a call that failed (the '
        "program gets a ToolError).\n"
        "The program then runs again from the top: the calls answered so far are not made again, and it goes "
        "on from where it stopped.\n"
        f"resume: {json.dumps(resume, ensure_ascii=False, separators=(',', ':'))}\n"
    )
