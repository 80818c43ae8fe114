"""The live trace widget of a running %%codemode cell, and the static record that replaces it."""

from __future__ import annotations

from typing import Any

from kernel_session import WIDGET_MIME, Kernel

from codemode_kernel.kernel.display import TRACE_MIME


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
    reply = kernel.run(
        "%%codemode\n"
        "import time\n"
        'a = get_weather(city="Oslo", unit="celsius")\n'
        "time.sleep(0.6)\n"
        'b = get_weather(city="Lima", unit="celsius")\n'
        "time.sleep(0.6)\n"
        "[a.temperature, b.temperature]"
    )
    assert reply.status == "ok", reply.content
    displays = reply.of_type("display_data", "update_display_data")
    # First the live view (a widget; nothing as text), then it is emptied, then the record.
    live, emptied, record = displays[0], displays[-2], displays[-1]
    assert WIDGET_MIME in live["content"]["data"] and live["content"]["data"]["text/plain"] == ""
    display_id = live["content"]["transient"]["display_id"]
    assert emptied["msg_type"] == "update_display_data"
    assert emptied["content"]["transient"]["display_id"] == display_id
    assert emptied["content"]["data"] == {"text/plain": ""}
    assert record["msg_type"] == "display_data" and TRACE_MIME in record["content"]["data"]

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
    assert 'class="codemode-result"' in html and 'class="codemode-call"' in html
    assert "get_weather(city=&quot;Oslo&quot;, unit=&quot;celsius&quot;)" in html


def test_a_tool_result_carrying_markup_stays_inert(kernel: Kernel) -> None:
    payload = "<img src=x onerror=alert(document.cookie)><script>alert(1)</script>"
    kernel.run(f"%%codemode\nwrite_file(path='evil.html', content={payload!r})")
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
