"""What a ``%%agent`` cell shows, step by step, and its final answer as Markdown.

Each step: the model's text, its program with a live trace and the record, tokens and time. Where someone
watches (``live``), the text streams into a display that then holds it for good (the answer's, the step's
line: the answer is shown last, as Markdown), and a program's live trace becomes its record, in place: a
saved notebook keeps each once and no empty output. Unattended (nbclient, nbval), each is shown once,
complete, in the same order.

Events come from the agent on the hub's thread; ``AgentView.handle`` is only called from the kernel's
main thread (see kernel/agent_magic.py), so outputs reach the notebook in order. Model text is escaped before
it becomes HTML, and written by ``markdown.safe_markdown`` before it becomes Markdown: like tool text, it
must never run as markup in a trusted output, nor make the browser fetch a remote image.
"""

from __future__ import annotations

import html
from typing import Any

from IPython.display import display, update_display

from ..agent import (
    AgentEvent,
    AgentResult,
    CodeRequested,
    ExecutionFinished,
    ExecutionOutput,
    ExecutionRunning,
    ExecutionToolCall,
    FinalAnswer,
    StepFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    ToolsSelected,
)
from .display import result_bundle
from .live import LiveView, open_live_view
from .markdown import safe_markdown
from .render import arguments_text, code_html

__all__ = ["AGENT_MIME", "AgentView", "answer_bundle"]

AGENT_MIME = "application/vnd.codemode.agent.v1+json"


class AgentView:
    """Turns agent events into cell outputs."""

    def __init__(self, *, live: bool, trace_mime: bool = False) -> None:
        self._watched = live
        self._trace_mime = trace_mime
        self._live: dict[str, LiveView] = {}
        """The live trace of each program still running, by its execute_python call (several run at once
        when one runs on past its wait)."""
        self._code: dict[str, str] = {}
        self._text: dict[int, str] = {}
        self._text_display: dict[int, str] = {}

    def handle(self, event: AgentEvent) -> None:
        """Show one event."""
        if isinstance(event, TextDelta):
            self._stream_text(event.step, event.text)
        elif isinstance(event, CodeRequested | ToolCallRequested):
            self._end_text(event.step, keep=True)  # the text that came with the call, before it
            if isinstance(event, CodeRequested):
                self._show_code(event)
            else:
                call = f"{event.name}({arguments_text(event.arguments)})"
                _show(f"tool call: {call}", f"<code>{html.escape(call)}</code>")
        elif isinstance(event, ExecutionToolCall):
            if event.call_id in self._live:
                self._live[event.call_id].call(event.record)
        elif isinstance(event, ExecutionOutput):
            print(event.text, end="", flush=True)
        elif isinstance(event, ExecutionRunning):
            text = f"{event.execution_id} runs on: the model may wait for it, stop it, or go on"
            _show(text, f"<small>{html.escape(text)}</small>")
        elif isinstance(event, ExecutionFinished):
            data, metadata = result_bundle(event.result, code=self._code.pop(event.call_id, None))
            live = self._live.pop(event.call_id, None)
            if live is not None:
                live.finish(data, metadata)
            else:
                display(data, raw=True, metadata=metadata)  # type: ignore[no-untyped-call]
        elif isinstance(event, ToolCallFinished):
            status = "error" if event.is_error else "ok"
            text = event.text if len(event.text) <= 600 else event.text[:600] + "…"
            _show(f"-> {status}: {text}", f"<pre>-> {status}: {html.escape(text)}</pre>")
        elif isinstance(event, StepFinished):
            # A step without calls: its text is the answer, shown last; where it streamed, the step's line.
            self._show_step(event, into=self._end_text(event.step, keep=False))
        elif isinstance(event, FinalAnswer):
            self._close_live()
        elif isinstance(event, ToolsSelected):
            text = selection_text(event)
            _show(text, f"<small>{html.escape(text)}</small>")

    def tick(self) -> None:
        """Refresh the live trace's clock (called while waiting for events)."""
        for live in self._live.values():
            live.tick()

    def close(self) -> None:
        """Remove a live view left open (an interrupt)."""
        self._close_live()

    def show_answer(self, result: AgentResult) -> None:
        """The final answer (Markdown, made safe) and a summary of the run, once."""
        usage = result.usage
        summary = (
            f"agent: {result.status}, {result.round_trips} model request{'s' * (result.round_trips != 1)}, "
            f"{len(result.executions)} program{'s' * (len(result.executions) != 1)}, "
            f"{usage.input_tokens} tokens in, {usage.output_tokens} out"
        )
        data, metadata = answer_bundle(result)
        display(data, raw=True, metadata=metadata)  # type: ignore[no-untyped-call]
        display({"text/plain": summary, "text/html": f"<small>{html.escape(summary)}</small>"}, raw=True)  # type: ignore[no-untyped-call]

    # -- parts --------------------------------------------------------------------------------------

    def _stream_text(self, step: int, delta: str) -> None:
        """Show the text as it streams (where someone watches), in a display that then holds it for good.

        The display starts once there is text to show, never empty. Unattended, the text is only gathered:
        it is shown once, complete, when its step ends; nbval, which compares a display as first sent,
        then sees what the saved notebook holds.
        """
        text = self._text.get(step, "") + delta
        self._text[step] = text
        if not self._watched or not text.strip():
            return
        bundle = {"text/markdown": safe_markdown(text), "text/plain": text}
        display_id = self._text_display.get(step)
        if display_id is None:
            handle = display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]
            self._text_display[step] = handle.display_id
        else:
            update_display(bundle, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]

    def _end_text(self, step: int, *, keep: bool) -> str | None:
        """The step's text is complete: shown once, in its streaming display if it has one.

        ``keep=False``: the text is the answer, which ``show_answer`` shows last; the id of the display
        it streamed into (if any) is returned, for what comes next to take its place.
        """
        display_id = self._text_display.pop(step, None)
        text = self._text.pop(step, "").strip()
        if not keep:
            return display_id
        if text:
            bundle = {"text/markdown": safe_markdown(text), "text/plain": text}
            _show_in(bundle, display_id)
        return None

    def _show_code(self, event: CodeRequested) -> None:
        display(  # type: ignore[no-untyped-call]
            {
                "text/plain": f"step {event.step}: execute_python\n{event.code}",
                "text/html": f"<div><b>step {event.step}</b>: <code>execute_python</code></div>"
                + code_html(event.code),
            },
            raw=True,
        )
        self._code[event.call_id] = event.code
        if self._watched:
            live = open_live_view(event.code, timeout=event.timeout, trace_mime=self._trace_mime)
            self._live[event.call_id] = live
            live.show()

    def _show_step(self, event: StepFinished, *, into: str | None = None) -> None:
        """The step's line (tokens, times); ``into``: in that display, in place."""
        usage = event.usage
        text = (
            f"step {event.step}: {usage.input_tokens} tokens in, {usage.output_tokens} out; "
            f"model {event.model_ms / 1000:.2f} s, tools {event.execution_ms / 1000:.2f} s"
        )
        _show_in({"text/plain": text, "text/html": f"<small>{html.escape(text)}</small>"}, into)

    def _close_live(self) -> None:
        for live in self._live.values():
            live.close()
        self._live.clear()


def answer_bundle(result: AgentResult) -> tuple[dict[str, Any], dict[str, Any]]:
    """The final answer as (data, metadata): safe Markdown, text, and the agent MIME type.

    The cell shows it, and the workspace's history keeps it (kernel/run_records.py) for the sidebar to show
    alike.
    """
    answer = result.answer.strip() or "(no answer)"
    data = {
        "text/markdown": safe_markdown(answer),
        "text/plain": answer,
        AGENT_MIME: {
            "status": result.status,
            "code_mode": result.code_mode,
            "round_trips": result.round_trips,
            "answer": result.answer,
        },
    }
    return data, {AGENT_MIME: {"duration_ms": result.duration_ms}}


def selection_text(event: ToolsSelected) -> str:
    """One line saying which tools the model picked for the request (full stubs), or why none were."""
    selection = event.selection
    if not selection.used:
        return (
            f"tool selection ({selection.model}): {selection.fallback}; "
            f"all {selection.offered} tools listed compactly"
        )
    picked = ", ".join(selection.tools) or "none"
    return (
        f"tools selected by {selection.model} ({len(selection.tools)} of {selection.offered}, full stubs): "
        f"{picked}"
    )


def _show_in(bundle: dict[str, str], display_id: str | None) -> None:
    """Show ``bundle`` in the display ``display_id``, in place; as a new output without one."""
    if display_id is not None:
        update_display(bundle, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
    else:
        display(bundle, raw=True)  # type: ignore[no-untyped-call]


def _show(text: str, html_text: str) -> None:
    display({"text/plain": text, "text/html": html_text}, raw=True)  # type: ignore[no-untyped-call]
