"""A slow tool's progress in the kernel's live views, as a frontend receives it through jupyter_client.

The demo weather's ``get_forecast`` reports ``Oslo: day N of M`` after each day: the ipywidgets view's row
shows each while the call runs, then the finished row keeps a progress line. A chatty server (a thousand
notifications a second, tests/servers/chatty_progress_server.py) costs at most about ten refreshes a
second of the widget view, and five of the trace-MIME view the extension renders.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import WIDGET_MIME, Kernel, Reply, configured_kernel

from codemode_kernel.views.display import TRACE_MIME

pytestmark = pytest.mark.integration

CHATTY = Path(__file__).resolve().parents[1] / "servers" / "chatty_progress_server.py"
FORECAST = '%%codemode\nforecast = get_forecast(city="Oslo", days=4, delay_seconds=0.4)\nlen(forecast.days)'
STEPS, SECONDS = 2000, 2.0
CHATTY_CELL = f"%%codemode\ncount(to={STEPS}, seconds={SECONDS})"


@pytest.fixture(scope="module")
def kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A kernel with the demo weather server and the chatty one."""
    cwd = tmp_path_factory.mktemp("progress")
    config = cwd / "codemode.json"
    servers = {
        "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]},
        "chatty": {"command": sys.executable, "args": [str(CHATTY)]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    with configured_kernel(jupyter_path, cwd, config) as kernel:
        yield kernel


def _rows(reply: Reply) -> dict[str, list[tuple[float, str]]]:
    """Each call row widget's values in order, with when they came (by comm id)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    classes: dict[str, tuple[str, ...]] = {}
    for message in reply.of_type("comm_open", "comm_msg"):
        content = message["content"]
        state = content.get("data", {}).get("state", {})
        if "_dom_classes" in state:
            classes[content["comm_id"]] = tuple(state["_dom_classes"])
        if "codemode-call" in classes.get(content["comm_id"], ()) and state.get("value"):
            rows.setdefault(content["comm_id"], []).append((message["at"], state["value"]))
    return rows


def _header_values(reply: Reply) -> list[str]:
    values: list[str] = []
    header: str | None = None
    for message in reply.of_type("comm_open", "comm_msg"):
        content = message["content"]
        state = content.get("data", {}).get("state", {})
        if "codemode-trace-header" in state.get("_dom_classes", ()):
            header = content["comm_id"]
        if content["comm_id"] == header and state.get("value"):
            values.append(state["value"])
    return values


def test_a_slow_forecast_shows_each_day_on_its_row_while_it_runs(kernel: Kernel) -> None:
    reply = kernel.run(FORECAST)
    assert reply.status == "ok", reply.content
    assert any(WIDGET_MIME in m["content"]["data"] for m in reply.of_type("display_data"))
    (row,) = _rows(reply).values()
    record_at = reply.of_type("update_display_data")[-1]["at"]  # the live view became the record
    # Each day's message on the running row, with a bar filled that far, in order, well before the end.
    for day in range(1, 5):
        at, value = next((at, v) for at, v in row if f"Oslo: day {day} of 4" in v and "running" in v)
        assert f'<progress value="{day / 4:.3f}" max="1"' in value
        assert '<small class="codemode-progress-message">Oslo: day' in value
        if day < 4:
            assert at < record_at - 0.2, f"day {day} was shown only at the end"
    # The finished row: no bar, the progress on one line in its detail.
    finished = row[-1][1]
    assert "✓ ok" in finished and "<progress" not in finished
    assert "progress: 4 updates, last: Oslo: day 4 of 4" in finished
    # The header said, while it ran, that the one call was running and none done.
    assert any("1 tool call: 0 done, 1 running" in value for value in _header_values(reply))
    # The record displayed at the end carries the progress in its text and its trace.
    text = reply.data()[-1]
    assert text.splitlines()[-1] == "progress: #1 weather/get_forecast 4 updates, last: Oslo: day 4 of 4"
    (call,) = reply.data(TRACE_MIME)[-1]["tool_calls"]
    assert call["progress"] == {"count": 4, "progress": 4, "total": 4, "message": "Oslo: day 4 of 4"}


def test_a_chatty_server_is_coalesced_in_the_widget_view(kernel: Kernel) -> None:
    reply = kernel.run(CHATTY_CELL)
    assert reply.status == "ok", reply.content
    (row,) = _rows(reply).values()
    progress = [value for _, value in row if "codemode-progress-message" in value]
    span = row[-1][0] - row[0][0]
    # Seen moving while it ran, but at most about ten refreshes a second (plus the start and the end).
    assert len(progress) >= 5, "the row barely moved"
    assert len(row) <= 10 * span + 4, f"{len(row)} row updates in {span:.1f} s"
    steps = [int(value.split("step ")[1].split(" of")[0]) for value in progress]
    assert steps == sorted(steps) and steps[-1] > STEPS // 2
    # All the view's widget messages: far fewer than one per notification.
    messages = len(reply.of_type("comm_msg"))
    assert messages <= 25 * span + 20, f"{messages} widget messages in {span:.1f} s"
    # The end shows the last state: every notification counted, the last one's message.
    assert f"progress: {STEPS:,} updates, last: step {STEPS} of {STEPS}" in row[-1][1]


def _announce_trace_renderer(kernel: Kernel) -> str:
    """Open the comm the JupyterLab extension opens: it renders the trace MIME type."""
    comm_id = uuid.uuid4().hex
    content = {"comm_id": comm_id, "target_name": "codemode.frontend", "data": {"mime_types": [TRACE_MIME]}}
    kernel.client.shell_channel.send(kernel.client.session.msg("comm_open", content))
    return comm_id


def test_a_chatty_server_is_coalesced_in_the_trace_view_of_the_extension(kernel: Kernel) -> None:
    comm_id = _announce_trace_renderer(kernel)
    try:
        reply = kernel.run(CHATTY_CELL)
    finally:
        kernel.client.shell_channel.send(kernel.client.session.msg("comm_close", {"comm_id": comm_id}))
    assert reply.status == "ok", reply.content
    updates = [
        (m["at"], m["content"]["data"][TRACE_MIME])
        for m in reply.of_type("display_data", "update_display_data")
        if TRACE_MIME in m["content"]["data"] and m["content"]["data"][TRACE_MIME]["status"] == "running"
    ]
    seen: list[dict[str, Any]] = [t["tool_calls"][0]["progress"] for _, t in updates if t["tool_calls"]]
    counts = [p["count"] for p in seen if p]
    span = updates[-1][0] - updates[0][0]
    assert len(counts) >= 5 and counts == sorted(counts) and counts[-1] > STEPS // 2
    assert seen[-1] is not None and seen[-1]["message"] == f"step {counts[-1]} of {STEPS}"
    assert len(updates) <= 5 * span + 4, f"{len(updates)} updates of the trace in {span:.1f} s"
    final = reply.data(TRACE_MIME)[-1]["tool_calls"][0]["progress"]
    assert final == {"count": STEPS, "progress": STEPS, "total": STEPS, "message": f"step {STEPS} of {STEPS}"}
