"""A call's progress in every kernel view: the live widget's row (a bar with the server's last message,
coalesced), the finished call's detail line (saved HTML, history), the result's text/plain and the saved
trace's JSON. The records are made by a real ``CallLog``, as the hub makes them from a server's
notifications (the demo weather's ``get_forecast`` reports ``Oslo: day N of M``)."""

from __future__ import annotations

import time
from typing import Any

from codemode_kernel.calllog import CallLog, CallRecord
from codemode_kernel.executor import ExecutionResult
from codemode_kernel.views.display import TRACE_MIME, history_bundle, result_bundle
from codemode_kernel.views.live import PROGRESS_INTERVAL, LiveTrace
from codemode_kernel.views.render import call_html, progress_bar_html, progress_text

ARGS = {"city": "Oslo", "days": 5, "delay_seconds": 0.6}


def _forecast(log: CallLog, days: int = 5, *, seq: int = 1) -> tuple[CallRecord, list[CallRecord]]:
    """A get_forecast call as the hub records it: started, one notification a day; (started, each update)."""
    started = log.start("weather", "get_forecast", dict(ARGS, days=days), execution_id="e", seq=seq)
    updates = [log.progress(started, day, days, f"Oslo: day {day} of {days}") for day in range(1, days + 1)]
    return started, updates


def _finish(log: CallLog, record: CallRecord) -> CallRecord:
    return log.finish(record, "ok", result={"content": [{"type": "text", "text": '{"city": "Oslo"}'}]})


def test_a_finished_call_says_how_many_updates_and_the_last_message() -> None:
    log = CallLog()
    started, _ = _forecast(log)
    done = _finish(log, started).to_json()
    assert progress_text(done.get("progress")) == "5 updates, last: Oslo: day 5 of 5"
    html = call_html(done)
    line = "progress: 5 updates, last: Oslo: day 5 of 5"
    assert f'<div class="codemode-progress" style="opacity: 0.75">{line}</div>' in html
    # In the detail, not on the row: the summary of a finished call has no bar and no message.
    summary = html[: html.index("</summary>")]
    assert "<progress" not in summary and "day 5 of 5" not in summary


def test_the_line_falls_back_to_the_values_and_reads_any_edited_record() -> None:
    assert (
        progress_text({"count": 1, "progress": 3.0, "total": 4.0, "message": None})
        == "1 update, last: 3 of 4"
    )
    assert (
        progress_text({"count": 2, "progress": 2.5, "total": None, "message": ""}) == "2 updates, last: 2.5"
    )
    assert progress_text({"count": 2, "progress": float("nan"), "total": float("inf")}) == "2 updates"
    assert progress_text({"progress": 7}) == "last: 7"  # no count: an edited notebook
    assert progress_text({"count": 3}) == "3 updates"
    for broken in (None, {}, "5 updates", [1, 2], {"count": "5", "progress": "x", "total": True}):
        assert progress_text(broken) == "", broken
    assert (
        progress_text({"count": 1, "message": "line one\n  line two"}) == "1 update, last: line one line two"
    )
    assert 'class="codemode-progress"' not in call_html({"tool": "t", "status": "ok", "progress": None})


def test_a_server_message_is_escaped_and_cut_short() -> None:
    hostile = "<img src=x onerror=alert(1)>" + "x" * 1000
    progress = {"count": 1, "progress": 1, "total": 2, "message": hostile}
    for status in ("running", "ok"):
        html = call_html({"tool": "t", "status": status, "progress": progress})
        assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert len(progress_text(progress)) == 300 and progress_text(progress).endswith("…")
    bar = progress_bar_html(progress)
    assert bar.count("x" * 100) == 2 and "x" * 300 not in bar  # the title and the row's words, both short


def test_a_running_call_shows_a_bar_determinate_with_a_total_else_animated() -> None:
    log = CallLog()
    _, updates = _forecast(log, days=4)
    summary = call_html(updates[2].to_json()).split("</summary>")[0]
    assert '<progress value="0.750" max="1" title="3 of 4: Oslo: day 3 of 4"' in summary
    assert '<small class="codemode-progress-message">Oslo: day 3 of 4</small>' in summary
    # No total: the browser animates a <progress> without a value; the value is shown as words.
    open_ended = call_html({"tool": "t", "status": "running", "progress": {"count": 2, "progress": 40}})
    assert '<progress title="40"' in open_ended and 'value="' not in open_ended
    assert '<small class="codemode-progress-message">40</small>' in open_ended
    assert progress_bar_html(None) == "" and "<progress" not in call_html({"tool": "t", "status": "running"})


def test_the_result_text_and_the_saved_trace_keep_the_progress() -> None:
    log = CallLog()
    first, _ = _forecast(log, days=3)
    plain = log.start("weather", "get_weather", {"city": "Lima"}, execution_id="e", seq=2)
    calls = [_finish(log, first).to_json(), _finish(log, plain).to_json()]
    result = ExecutionResult(status="ok", execution_id="e", tool_calls=list(calls))
    data, _ = result_bundle(result)
    assert data["text/plain"] == (
        "codemode: ok, 2 tool calls\nprogress: #1 weather/get_forecast 3 updates, last: Oslo: day 3 of 3"
    )
    saved = data[TRACE_MIME]["tool_calls"]
    assert saved[0]["progress"] == {"count": 3, "progress": 3, "total": 3, "message": "Oslo: day 3 of 3"}
    assert saved[1]["progress"] is None
    assert data["text/html"].count('class="codemode-progress"') == 1
    assert "progress: 3 updates" in history_bundle([], calls)["text/html"]


def test_many_calls_with_progress_leave_the_text_short() -> None:
    log = CallLog()
    calls = [_finish(log, _forecast(log, days=1, seq=n)[0]).to_json() for n in range(1, 15)]
    text = result_bundle(ExecutionResult(status="ok", execution_id="e", tool_calls=calls))[0]["text/plain"]
    lines = text.splitlines()
    assert len(lines) == 12 and lines[-1] == "progress: … 4 more calls reported progress"


def _values(widget: Any) -> list[str]:
    """Every value the widget takes from now on (each is one message to the frontend)."""
    seen: list[str] = []
    widget.observe(lambda change: seen.append(change["new"]), names="value")
    return seen


def test_the_live_widget_coalesces_a_chatty_server_and_always_shows_the_last_state() -> None:
    log = CallLog()
    live = LiveTrace("get_forecast(city='Oslo', days=1000)")
    log.subscribe(live.call)
    record = log.start("weather", "get_forecast", {"city": "Oslo"}, execution_id="e", seq=1)
    (row,) = live._calls.children
    rows, headers = _values(row), _values(live._header)
    began = time.monotonic()
    for step in range(1, 1001):
        log.progress(record, step, 1000, f"step {step} of 1000")
    spent = time.monotonic() - began
    # A thousand notifications: one refresh at once, then at most one per interval.
    assert 1 <= len(rows) <= 1 + spent / PROGRESS_INTERVAL + 1
    assert len(headers) <= len(rows)  # the header (its clock, its counts) goes with them, never more often
    # When the notifications stop, the next tick shows the last one, and the header the running call.
    live.tick()
    assert "step 1000 of 1000" in row.value and '<progress value="1.000" max="1"' in row.value
    assert "1 tool call: 0 done, 1 running" in live._header.value
    live.tick()  # nothing new: the row is not sent again
    assert rows.count(row.value) == 1
    # The end is shown at once, with the progress line in the detail and no bar.
    _finish(log, record)
    assert "✓ ok" in row.value and "progress: 1,000 updates, last: step 1000 of 1000" in row.value
    assert "<progress" not in row.value and "1 tool call" in live._header.value
    # A running state arriving after the end (it cannot from the log; a reordered copy could) is ignored.
    live.call(record)
    assert "✓ ok" in row.value
    live.close()
