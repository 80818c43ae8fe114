"""Who allowed or denied a call that needed approval, in every view of the call: the HTML row (saved trace,
history, live widget), the result's text/plain and the history's text. The approvals are made by
``Decision.to_json``, as the hub records them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from codemode_kernel.approvals import Decision
from codemode_kernel.calllog import CallRecord
from codemode_kernel.executor import ExecutionResult
from codemode_kernel.views.display import history_bundle, result_bundle
from codemode_kernel.views.live import LiveTrace
from codemode_kernel.views.render import approval_text, call_html

DESTRUCTIVE = "its server marks it destructive (destructiveHint)"
DENIED_ERROR = "memory/delete_entities was denied by the user; nothing was sent"


def _record(decision: Decision | None, *, status: str = "ok", seq: int = 1) -> CallRecord:
    denied = decision is not None and not decision.allowed
    return CallRecord(
        id=f"c{seq}",
        server="memory",
        tool="delete_entities",
        arguments={"entityNames": ["Oslo"]},
        started=1.0,
        status="denied" if denied else status,  # type: ignore[arg-type]
        duration_ms=3.0,
        result=None if denied else {"content": [{"type": "text", "text": "Entities deleted"}]},
        error=DENIED_ERROR if denied else None,
        seq=seq,
        approval=decision.to_json(DESTRUCTIVE) if decision is not None else None,
    )


def test_each_decision_reads_as_one_short_line() -> None:
    def line(decision: Decision, reason: str = DESTRUCTIVE) -> str:
        return approval_text(decision.to_json(reason))

    assert line(Decision(True, "the user")) == f"allowed by the user (once): {DESTRUCTIVE}"
    assert line(Decision(True, "the user", scope="kernel")) == (
        f"allowed by the user (this tool, for this kernel): {DESTRUCTIVE}"
    )
    assert line(Decision(True, "the user (allowed earlier)", scope="kernel")) == (
        f"allowed by the user (allowed earlier; this tool, for this kernel): {DESTRUCTIVE}"
    )
    assert line(Decision(True, "the client", scope="session")) == (
        f"allowed by the client (this tool, for this session): {DESTRUCTIVE}"
    )
    assert line(Decision(False, "the user")) == f"denied by the user: {DESTRUCTIVE}"
    assert line(Decision(False, "timeout")) == f"denied (no decision in time): {DESTRUCTIVE}"
    assert line(Decision(False, "nobody")) == f"denied (nobody could be asked): {DESTRUCTIVE}"
    configured = 'the config asks for it (codeMode.approve: "memory/*")'
    assert (
        line(Decision(True, "--approve all"), configured) == f"allowed by --approve all (once): {configured}"
    )


def test_a_call_without_approval_or_with_a_broken_one_has_no_line() -> None:
    assert approval_text(None) == "" and approval_text({}) == "" and approval_text("allowed") == ""
    assert approval_text({"decision": "denied"}) == "denied"  # an edited record: what is left of it
    assert 'class="codemode-approval"' not in call_html(_record(None).to_json())


def test_the_html_row_says_who_allowed_it_in_amber_and_who_denied_it_in_red() -> None:
    allowed = call_html(_record(Decision(True, "the user")).to_json())
    assert (
        '<div class="codemode-approval" style="color: #9a6700">'
        f"allowed by the user (once): {DESTRUCTIVE}</div>" in allowed
    )
    denied = call_html(_record(Decision(False, "the user")).to_json())
    assert (
        f'<div class="codemode-approval" style="color: #cf222e">denied by the user: {DESTRUCTIVE}</div>'
        in denied
    )
    # The line comes first in the row's body, before the error that says the same to the program.
    assert denied.index("codemode-approval") < denied.index(DENIED_ERROR)
    assert "✗ denied" in denied


def test_untrusted_approval_text_is_escaped_and_cut_short() -> None:
    approval: dict[str, Any] = {
        "decision": "allowed",
        "by": "<img src=x onerror=alert(1)>",
        "scope": "once",
        "reason": "x" * 1000,
    }
    html = call_html(replace(_record(None), approval=approval).to_json())
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert len(approval_text(approval)) == 300 and approval_text(approval).endswith("…")


def test_the_saved_trace_keeps_the_approval_in_its_data_html_and_text() -> None:
    calls = [
        _record(Decision(True, "the user")).to_json(),
        _record(Decision(False, "the user"), seq=2).to_json(),
    ]
    calls.append({**_record(None, seq=3).to_json(), "tool": "read_graph"})
    result = ExecutionResult(status="ok", execution_id="e", tool_calls=list(calls))  # type: ignore[arg-type]
    data, _ = result_bundle(result)
    trace_calls = data["application/vnd.codemode.trace.v1+json"]["tool_calls"]
    assert [c["approval"] and c["approval"]["decision"] for c in trace_calls] == ["allowed", "denied", None]
    assert data["text/html"].count('class="codemode-approval"') == 2
    assert data["text/plain"] == (
        "codemode: ok, 3 tool calls\n"
        f"approval: #1 memory/delete_entities allowed by the user (once): {DESTRUCTIVE}\n"
        f"approval: #2 memory/delete_entities denied by the user: {DESTRUCTIVE}"
    )


def test_the_history_lists_it_for_direct_calls_too() -> None:
    direct = _record(Decision(False, "the user")).to_json()
    bundle = history_bundle([], [direct])
    assert (
        f'delete_entities(entityNames=["Oslo"]) denied (denied by the user: {DESTRUCTIVE})'
        in (bundle["text/plain"])
    )
    assert f"denied by the user: {DESTRUCTIVE}</div>" in bundle["text/html"]


def test_the_live_widget_row_shows_the_decision_once_it_is_made() -> None:
    live = LiveTrace("delete_entities(entityNames=['Oslo'])")
    record = _record(None, status="running")
    live.call(record)
    (row,) = live._calls.children
    assert "codemode-approval" not in row.value  # still waiting for the person
    live.call(replace(record, status="denied", approval=Decision(False, "the user").to_json(DESTRUCTIVE)))
    assert f"denied by the user: {DESTRUCTIVE}" in row.value
    live.close()
