"""An ExecutionResult as a MIME bundle: deterministic text and JSON, escaped HTML, timings in metadata.

nbval compares ``text/plain`` and the JSON payload of stored notebooks, so both leave out what changes
from run to run (durations, ids, timestamps) and what changes from machine to machine (protections):
those go into the output's metadata. Every string that comes from a tool or the program is escaped in
the HTML, because JupyterLab trusts live outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape as esc
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..core.records import (
    ArtifactIds,
    CallTimes,
    NoteRecord,
    TraceArtifact,
    TraceCall,
    TraceMetadata,
    TraceRecord,
)
from ..executor import ExecutionResult
from ..executor.value_text import value_text
from .asked import asked_text
from .markdown import NO_TEX_CLASS
from .render import (
    approval_text,
    arguments_text,
    call_html,
    code_html,
    error_html,
    note_text,
    notes_html,
    progress_text,
    status_badge,
    value_html,
)

if TYPE_CHECKING:
    from ..agent import AgentResult

__all__ = [
    "TRACE_MIME",
    "AgentRun",
    "CellRun",
    "history_bundle",
    "nodes_text",
    "result_bundle",
    "result_text",
    "split_volatile",
    "stable_notes",
    "stopped_bundle",
    "trace_record",
]

TRACE_MIME = "application/vnd.codemode.trace.v1+json"
_REPLAYED = " (replayed from the record: no server was called)"
HTML_CALLS = 200
"""Calls the HTML fallback lists; the rest are counted. A frontend parses all of a ``text/html`` output even
when it draws another type (JupyterLab's HTML parser took most of a 10,000-call notebook's opening), and the
trace type and ``%codemode history`` keep every call."""
TEXT_BUDGET = 2000
"""Characters of a value the text reading shows (a table: the rows that fit); the trace type has it all."""
_CALL_VOLATILE = tuple(CallTimes.__annotations__)
"""A call's keys that change from run to run (``core/records.py``): they go into the metadata."""
_ARTIFACT_VOLATILE = tuple(ArtifactIds.__annotations__)


class CellRun(Protocol):
    """A ``%%codemode`` run as the history listing shows it (the kernel's ``history.CellRun`` is one).

    Stated here, not imported, because a view never imports the kernel package.
    """

    @property
    def number(self) -> int:
        """Its number in the kernel (1, 2, ...)."""

    @property
    def code(self) -> str:
        """The program as written."""

    @property
    def result(self) -> ExecutionResult:
        """What happened."""

    @property
    def replayed(self) -> bool:
        """Whether it ran on the recorded tool results of an earlier run."""


class AgentRun(Protocol):
    """An ``%%agent`` request as the history listing shows it (the kernel's ``history.AgentRun`` is one)."""

    @property
    def number(self) -> int:
        """Its number in the kernel (counted with the ``%%codemode`` runs)."""

    @property
    def model(self) -> str:
        """The ``models`` entry that answered."""

    @property
    def request(self) -> str:
        """The cell's text."""

    @property
    def result(self) -> AgentResult:
        """The agent's whole record: steps, programs, tool calls, usage."""


def split_volatile(
    items: Sequence[Mapping[str, Any]], *, artifacts: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Calls (or artifacts) as (stable parts, for the data; volatile parts, for the metadata), by index."""
    volatile = _ARTIFACT_VOLATILE if artifacts else _CALL_VOLATILE
    stable = [{k: v for k, v in item.items() if k not in volatile} for item in items]
    return stable, [{k: item.get(k) for k in volatile} for item in items]


def result_bundle(
    result: ExecutionResult, *, replayed: bool = False, code: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (data, metadata) pair to display for a finished execution (``replayed``: from a record).

    ``code``, the program as written, lets a renderer show the lines around an error.
    """
    trace, metadata = trace_record(result)
    if code is not None:
        trace["code"] = code
    if replayed:
        trace["replayed"] = True
    data = {
        "text/plain": result_text(result, replayed=replayed),
        "text/html": _html(result, result.tool_calls, replayed=replayed),
        TRACE_MIME: trace,
    }
    return data, {TRACE_MIME: metadata}


def trace_record(result: ExecutionResult) -> tuple[TraceRecord, TraceMetadata]:
    """The trace MIME type's data and metadata (core/records.py's ``TraceRecord``, ``TraceMetadata``).

    The run split into what reads the same every run (the data, which nbval compares) and what does not
    (ids, timings, protections).

    The calls are in the order the program made them (numbered by the worker, so parallel batches too are
    stable from run to run); the metadata keeps, call by call in that order, when each started and its id.
    """
    record = result.to_dict()
    calls, call_times = split_volatile(record["tool_calls"])
    artifacts, artifact_ids = split_volatile(record["artifacts"], artifacts=True)
    trace = TraceRecord(
        status=record["status"],
        value=record["value"],
        error=record["error"],
        stdout=record["stdout"],
        stderr=record["stderr"],
        output_truncated=record["output_truncated"],
        tool_calls=cast(list[TraceCall], calls),
        artifacts=cast(list[TraceArtifact], artifacts),
        timeout_s=record["timeout_s"],
        pending_calls=record["pending_calls"],
        completed=record["completed"],
    )
    metadata = TraceMetadata(
        execution_id=record["execution_id"],
        duration_ms=record["duration_ms"],
        protections=record["protections"],
        tool_calls=cast(list[CallTimes], call_times),
        artifacts=cast(list[ArtifactIds], artifact_ids),
    )
    if "nodes" in record:
        metadata["nodes"] = record["nodes"]
    if result.notes:
        trace["notes"] = stable_notes(result.notes)
    if result.notes_dropped:
        trace["notes_dropped"] = result.notes_dropped
    return trace, metadata


def stable_notes(notes: Sequence[Mapping[str, Any]]) -> list[NoteRecord]:
    """Notes as the trace's data keeps them: message and data, not when (that changes every run; nbval)."""
    return cast(
        list[NoteRecord], [{"message": n.get("message", ""), "data": n.get("data", {})} for n in notes]
    )


def nodes_text(nodes: Sequence[Mapping[str, Any]] | None) -> str | None:
    """Where a run on a Ray cluster ran: ``on node abcd1234``, or ``moved: abcd1234 (lost) → efgh5678``.

    Node ids are cut to their first 8 hex digits; an attempt that did not finish says how it ended (the
    word before its reason). None off a cluster.
    """
    if not nodes:
        return None
    names = []
    for attempt in nodes:
        outcome = str(attempt.get("outcome", ""))
        ending = "" if outcome == "finished" else f" ({outcome.split(':', 1)[0].strip() or 'unknown'})"
        names.append(f"{str(attempt.get('node', ''))[:8]}{ending}")
    return f"on node {names[0]}" if len(names) == 1 else f"moved: {' → '.join(names)}"


def stopped_bundle(calls: int) -> dict[str, str]:
    """What a live view leaves when its program stopped before the end (an interrupt): one line."""
    text = f"codemode: stopped before the program ended, {calls} tool call{'s' * (calls != 1)}"
    return {"text/plain": text, "text/html": f'<div class="codemode-result {NO_TEX_CLASS}">{esc(text)}</div>'}


def result_text(result: ExecutionResult, *, replayed: bool = False) -> str:
    """A short deterministic summary: status, tool calls, the value or the error with its line."""
    calls = len(result.tool_calls)
    where = f", {nodes}" if (nodes := nodes_text(result.nodes)) else ""
    lines = [f"codemode: {result.status}, {calls} tool call{'s' * (calls != 1)}{where}{_REPLAYED * replayed}"]
    if result.value is not None and result.value != {"kind": "json", "data": None}:
        lines.append(f"value: {value_text(result.value, TEXT_BUDGET, quoted=True)}")
    lines.extend(_approval_lines(result.tool_calls))
    lines.extend(_progress_lines(result.tool_calls))
    lines.extend(_per_call_lines(result.tool_calls, "asked", asked_text, 10, "asked back"))
    lines.extend(_note_lines(result.notes, result.notes_dropped))
    if result.error is not None:
        lines.append(_error_text(result.error))
    lines.extend(f"artifact: {_artifact_text(a)}" for a in result.artifacts)
    return "\n".join(lines)


def _note_lines(notes: Sequence[Mapping[str, Any]], dropped: int, limit: int = 10) -> list[str]:
    """``note: <message> · key=value`` for the last ``limit`` notes, and a count of the others."""
    earlier = len(notes) - limit + dropped if len(notes) > limit else dropped
    lines = [f"note: … {earlier} earlier notes"] if earlier > 0 else []
    return lines + [f"note: {note_text(note)}" for note in notes[-limit:]]


def _approval_lines(calls: Sequence[Mapping[str, Any]], limit: int = 20) -> list[str]:
    """``approval: #1 memory/delete_entities denied by the user: ...`` for each call that needed one.

    A console shows only ``text/plain``: who allowed or denied a destructive call must be there too.
    """
    return _per_call_lines(calls, "approval", approval_text, limit, "needed approval")


def _progress_lines(calls: Sequence[Mapping[str, Any]], limit: int = 10) -> list[str]:
    """``progress: #1 weather/get_forecast 5 updates, last: Oslo: day 5 of 5`` per call that reported any.

    A console shows only ``text/plain``; a program of many slow calls gets the first few and a count.
    """
    return _per_call_lines(calls, "progress", progress_text, limit, "reported progress")


def _per_call_lines(
    calls: Sequence[Mapping[str, Any]],
    field: str,
    text_of: Callable[[Any], str | None],
    limit: int,
    what: str,
) -> list[str]:
    """``field: #N server/tool <text>`` for each call whose ``field`` says something; at most ``limit``."""
    lines = []
    for call in calls:
        text = text_of(call.get(field))
        if text:
            seq = call.get("seq")
            number = f"#{seq} " if isinstance(seq, int) else ""
            lines.append(f"{field}: {number}{call.get('server')}/{call.get('tool')} {text}")
    if len(lines) > limit:
        return [*lines[:limit], f"{field}: … {len(lines) - limit} more calls {what}"]
    return lines


def _artifact_text(artifact: Mapping[str, Any]) -> str:
    description = f", {artifact['description']}" if artifact.get("description") else ""
    name = artifact.get("name") or "(unnamed)"
    return f"{name} ({artifact.get('type')}, {artifact.get('size')} bytes{description})"


def _error_text(error: Mapping[str, Any]) -> str:
    where = f"line {error['line']}: " if error.get("line") else ""
    head = f"{where}{error.get('type', 'Error')}: {error.get('message', '')}"
    source = error.get("source_line")
    return f"{head}\n    {source.strip()}" if source else head


def _html(result: ExecutionResult, calls: Sequence[Mapping[str, Any]], *, replayed: bool = False) -> str:
    calls_count = len(calls)
    where = f" · {esc(nodes)}" if (nodes := nodes_text(result.nodes)) else ""
    parts = [
        f'<div class="codemode-result {NO_TEX_CLASS}"><b>codemode</b> {status_badge(result.status)}'
        f" · {calls_count} tool call{'s' * (calls_count != 1)}{where}{esc(_REPLAYED) * replayed}",
        *(call_html(call, volatile=False) for call in calls[:HTML_CALLS]),
    ]
    if calls_count > HTML_CALLS:
        parts.append(
            f"<div><i>… {calls_count - HTML_CALLS} more tool calls, listed by the Code Mode extension's "
            "renderer and <code>%codemode history</code></i></div>"
        )
    if result.value is not None and result.value != {"kind": "json", "data": None}:
        parts.append(f'<div class="codemode-value">{value_html(result.value)}</div>')
    parts.append(notes_html(result.notes))
    if result.error is not None:
        parts.append(error_html(result.error))
    if result.artifacts:
        items = "".join(f"<li>{esc(_artifact_text(a))}</li>" for a in result.artifacts)
        parts.append(
            f"<div>stored artifacts (<code>%codemode artifacts</code> to browse):<ul>{items}</ul></div>"
        )
    parts.append("</div>")
    return "".join(parts)


def history_bundle(
    runs: Sequence[CellRun],
    direct_calls: Sequence[Mapping[str, Any]],
    agent_runs: Sequence[AgentRun] | None = None,
) -> dict[str, Any]:
    """The kernel's executions, direct tool calls and agent requests: a text list, a foldable HTML one."""
    agent_runs = agent_runs or []
    lines = [
        f"codemode history: {len(runs)} execution{'s' * (len(runs) != 1)}, "
        f"{len(direct_calls)} direct tool call{'s' * (len(direct_calls) != 1)}"
    ]
    for run in runs:
        lines.append(f"  #{run.number} {_run_line(run)}")
        if run.result.error is not None:
            lines.append(f"      {_error_text(run.result.error).splitlines()[0]}")
    if direct_calls:
        lines.append("direct tool calls:")
        lines.extend(
            f"  {c.get('tool')}({arguments_text(c.get('arguments'))}) {c.get('status')}"
            + (f" ({approval})" if (approval := approval_text(c.get("approval"))) else "")
            for c in direct_calls
        )
    html_parts = [f'<div class="codemode-history {NO_TEX_CLASS}">', f"<b>{esc(lines[0])}</b>"]
    for run in runs:
        result = run.result
        summary = (
            f"#{run.number} {status_badge(result.status)} · {esc(_run_line(run, with_status=False))}"
            f" <small>{result.duration_ms / 1000:.2f} s</small>"
        )
        body = [
            code_html(run.code),
            *(call_html(call) for call in result.tool_calls),
        ]
        if result.error is not None:
            body.append(error_html(result.error))
        html_parts.append(
            f'<details class="codemode-run"><summary>{summary}</summary>'
            f'<div style="margin-left: 1.5em">{"".join(body)}</div></details>'
        )
    if direct_calls:
        html_parts.append("<div><b>direct tool calls</b></div>")
        html_parts.extend(call_html(call) for call in direct_calls)
    if agent_runs:
        lines.append("agent requests:")
        lines.extend(f"  #{run.number} {_agent_line(run)}" for run in agent_runs)
        html_parts.append("<div><b>agent requests</b></div>")
        html_parts.extend(_agent_html(run) for run in agent_runs)
    html_parts.append("</div>")
    return {"text/plain": "\n".join(lines), "text/html": "".join(html_parts)}


def _agent_line(run: AgentRun) -> str:
    result = run.result
    request = run.request.splitlines()[0] if run.request else ""
    request = request if len(request) <= 60 else request[:57] + "..."
    return f"{result.status}, {result.round_trips} model requests ({run.model}): {request}"


def _agent_html(run: AgentRun) -> str:
    """One agent request as a transcript: each step's text, programs with their records, tool calls."""
    steps = []
    for step in run.result.steps:
        body = [f"<div><b>step {step.index}</b> <small>{step.usage.input_tokens} tokens in</small></div>"]
        if step.text:
            body.append(f"<pre style='white-space: pre-wrap'>{esc(step.text)}</pre>")
        for action in step.actions:
            if action.code is not None:
                body.append(code_html(action.code))
            else:
                body.append(
                    f"<code>{esc(str(action.call.name))}({esc(arguments_text(action.call.arguments))})</code>"
                )
            body.append(f"<pre style='white-space: pre-wrap'>{esc(action.text)}</pre>")
        steps.append("".join(body))
    summary = f"#{run.number} {status_badge(run.result.status)} · {esc(_agent_line(run))}"
    return (
        f'<details class="codemode-agent-run"><summary>{summary}</summary>'
        f'<div style="margin-left: 1.5em">{"".join(steps)}</div></details>'
    )


def _run_line(run: CellRun, *, with_status: bool = True) -> str:
    calls = len(run.result.tool_calls)
    first = next((line.strip() for line in run.code.splitlines() if line.strip()), "")
    first = first if len(first) <= 60 else first[:57] + "..."
    status = f"{run.result.status}, " if with_status else ""
    replayed = " (replayed)" if run.replayed else ""
    return f"{status}{calls} tool call{'s' * (calls != 1)}{replayed}: {first}"
