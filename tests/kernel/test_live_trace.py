"""The live trace widget of a running %%codemode cell, and the static record it becomes, in place."""

from __future__ import annotations

import uuid
from typing import Any

from kernel_session import WIDGET_MIME, Kernel

from codemode_kernel.views.display import TRACE_MIME

# Two calls 0.6 s apart: the live view is seen growing while the program runs.
TWO_SPACED_CALLS = (
    "%%codemode\n"
    "import time\n"
    'a = get_weather(city="Oslo", unit="celsius")\n'
    "time.sleep(0.6)\n"
    'b = get_weather(city="Lima", unit="celsius")\n'
    "time.sleep(0.6)\n"
    "[a.temperature, b.temperature]"
)


def _widget_states(reply: Any) -> dict[str, dict[str, Any]]:
    """Every widget model the cell opened, with its state after all updates (by comm id)."""
    states: dict[str, dict[str, Any]] = {}
    for message in reply.of_type("comm_open", "comm_msg"):
        content = message["content"]
        data = content.get("data", {})
        if "state" in data:
            states.setdefault(content["comm_id"], {}).update(data["state"])
    return states


def _html_history(reply: Any, comm_id: str) -> list[str]:
    """Each value an HTML widget took, in order."""
    values = []
    for message in reply.of_type("comm_open", "comm_msg"):
        content = message["content"]
        state = content.get("data", {}).get("state", {})
        if content["comm_id"] == comm_id and state.get("value"):
            values.append(state["value"])
    return values


def test_a_running_cell_shows_its_tool_calls_live_then_the_static_record(kernel: Kernel) -> None:
    reply = kernel.run(TWO_SPACED_CALLS)
    assert reply.status == "ok", reply.content
    displays = reply.of_type("display_data", "update_display_data")
    # First the live view (a widget; nothing as text), which becomes the record in place: one output.
    live = next(d for d in displays if WIDGET_MIME in d["content"]["data"])  # after a start-up status
    record = displays[-1]
    assert live["content"]["data"]["text/plain"] == ""
    display_id = live["content"]["transient"]["display_id"]
    assert record["msg_type"] == "update_display_data"
    assert record["content"]["transient"]["display_id"] == display_id
    assert TRACE_MIME in record["content"]["data"] and WIDGET_MIME not in record["content"]["data"]
    assert [d for d in displays if TRACE_MIME in d["content"]["data"]] == [record]

    states = _widget_states(reply)
    root_id = live["content"]["data"][WIDGET_MIME]["model_id"]
    assert "codemode-trace" in states[root_id]["_dom_classes"]
    rows = [comm for comm, state in states.items() if "codemode-call" in state.get("_dom_classes", ())]
    assert len(rows) == 2
    first = _html_history(reply, rows[0])
    # The row appeared while the call ran, and was filled in when it ended.
    assert "get_weather" in first[0] and "city=&quot;Oslo&quot;" in first[0] and "running" in first[0]
    assert "✓ ok" in first[-1] and "6.1" in first[-1]
    # The second call started after the first ended, while the program was still running.
    second_at = min(m["at"] for m in reply.of_type("comm_open") if m["content"]["comm_id"] == rows[1])
    assert second_at < record["at"] - 0.4
    # The header counted the elapsed time while the program slept.
    header = next(c for c, s in states.items() if "codemode-trace-header" in s.get("_dom_classes", ()))
    assert any("2 tool calls" in value for value in _html_history(reply, header))
    # Every widget is closed at the end: nothing lingers in the kernel.
    closed = {m["content"]["comm_id"] for m in reply.of_type("comm_close")}
    assert set(states) <= closed


def test_the_record_is_the_only_output_a_frontend_without_widgets_keeps(kernel: Kernel) -> None:
    reply = kernel.run('%%codemode\nprint("hello")\nget_weather(city="Oslo", unit="celsius").temperature')
    assert reply.stream() == "hello\n"
    assert reply.data() == ["codemode: ok, 1 tool call\nvalue: 6.1"]
    html = reply.data("text/html")[0]
    assert 'class="codemode-result mathjax_ignore tex2jax_ignore"' in html and 'class="codemode-call"' in html
    assert "get_weather(city=&quot;Oslo&quot;, unit=&quot;celsius&quot;)" in html


def test_a_tool_result_carrying_markup_stays_inert(kernel: Kernel) -> None:
    payload = "<img src=x onerror=alert(document.cookie)><script>alert(1)</script>"
    kernel.run(f"%%codemode\nwrite_file(path='evil.html', content={payload!r})", answers=["y"])
    reply = kernel.run("%%codemode\nread_file(path='evil.html')")
    assert reply.status == "ok", reply.content
    html = reply.data("text/html")[0]
    assert "<img src=x" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=alert(document.cookie)&gt;" in html
    rows = [
        state["value"]
        for state in _widget_states(reply).values()
        if "codemode-call" in state.get("_dom_classes", ()) and "value" in state
    ]
    assert rows and all("<script>" not in row and "<img src=x" not in row for row in rows)


def _announce_trace_renderer(kernel: Kernel) -> str:
    """Open the comm the JupyterLab extension opens: it renders the trace MIME type."""
    comm_id = uuid.uuid4().hex
    content = {"comm_id": comm_id, "target_name": "codemode.frontend", "data": {"mime_types": [TRACE_MIME]}}
    kernel.client.shell_channel.send(kernel.client.session.msg("comm_open", content))
    return comm_id


def test_with_the_extension_the_live_view_is_the_trace_itself_updated_in_place(kernel: Kernel) -> None:
    comm_id = _announce_trace_renderer(kernel)
    try:
        reply = kernel.run(TWO_SPACED_CALLS)
    finally:
        close = {"comm_id": comm_id, "data": {}}
        kernel.client.shell_channel.send(kernel.client.session.msg("comm_close", close))
    assert reply.status == "ok", reply.content
    assert not reply.of_type("comm_open"), "no widget is opened when the extension renders the trace"
    displays = reply.of_type("display_data", "update_display_data")
    live = next(d for d in displays if TRACE_MIME in d["content"]["data"])  # after a start-up status
    record = displays[-1]
    display_id = live["content"]["transient"]["display_id"]
    updates = [
        u
        for u in reply.of_type("update_display_data")
        if u["content"]["transient"]["display_id"] == display_id
    ]
    running = [u["content"]["data"][TRACE_MIME] for u in [live, *updates[:-1]]]
    assert live["content"]["data"]["text/plain"] == ""
    assert {t["status"] for t in running} == {"running"}
    assert all(t["code"].startswith("import time\n") for t in running)
    # A row appeared when the first call started, then it was filled in, then the second came.
    seen = [[(c["seq"], c["status"]) for c in t["tool_calls"]] for t in running]
    assert [(1, "ok")] in seen and [(1, "ok"), (2, "ok")] in seen
    assert seen.index([(1, "ok")]) < seen.index([(1, "ok"), (2, "ok")])
    assert running[-1]["tool_calls"][0]["arguments"] == {"city": "Oslo", "unit": "celsius"}
    # The clock ran while the program slept; the metadata carries it (and each call's start).
    elapsed = [u["content"]["metadata"][TRACE_MIME]["duration_ms"] for u in [live, *updates[:-1]]]
    assert elapsed == sorted(elapsed) and elapsed[-1] > 600
    # At the end it becomes the record, in place, with the program for the error context.
    assert updates[-1] is record
    final = record["content"]["data"][TRACE_MIME]
    assert record["msg_type"] == "update_display_data" and final["status"] == "ok"
    assert final["code"].endswith("[a.temperature, b.temperature]\n")
    # After the extension's comm closed, the next cell is back to the widget view.
    again = kernel.run('%%codemode\nget_weather(city="Oslo", unit="celsius").temperature')
    assert WIDGET_MIME in again.of_type("display_data")[0]["content"]["data"]
