"""``%%codemode --background``: the cell ends at once, its live trace keeps updating while other cells run.

Driven through jupyter_client as JupyterLab drives the kernel, with the extension's trace renderer
announced: the running record is the trace MIME type, updated in place with ``update_display_data``.
Each request is sent on its own and the iopub messages are sorted by the request they belong to, because
a background cell's messages keep coming after its reply, while later cells run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, Reply, shell_reply, start_kernel, state_path, wait_for_state

from codemode_kernel.views.display import TRACE_MIME

Message = dict[str, Any]

# Calls spaced over about three seconds, a note half way; the value names the calls made.
SPACED = (
    "%%codemode --background --out spaced\n"
    "import time\n"
    "temps = []\n"
    "for i, city in enumerate(['Oslo', 'Lima', 'Pune', 'Kyiv', 'Rome', 'Doha']):\n"
    "    temps.append(get_weather(city=city, unit='celsius').temperature)\n"
    "    print('weather of', city)\n"
    "    if i == 2:\n"
    "        notify('half way', done=3)\n"
    "    time.sleep(0.5)\n"
    "len(temps)"
)
FOREGROUND = "import time\ntime.sleep(2.0)\n'foreground done'"
# One call, then a long sleep: running until stopped.
LONG = "%%codemode --background\nget_weather(city='Oslo', unit='celsius')\nimport time\ntime.sleep(120)\n"


class Iopub:
    """Every iopub message since it was made, each with the time it came (``at``)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.messages: list[Message] = []

    def until(self, done: Callable[[list[Message]], bool], timeout: float = 60, what: str = "") -> None:
        """Read messages until ``done(messages)``; fail naming ``what`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not done(self.messages):
            left = deadline - time.monotonic()
            assert left > 0, (
                f"never came: {what}; last messages: {[m['msg_type'] for m in self.messages[-8:]]}"
            )
            try:
                message = self.kernel.client.get_iopub_msg(timeout=min(left, 1.0))
            except Exception:  # queue.Empty: nothing in this second
                continue
            self.messages.append({**message, "at": time.monotonic()})

    def of(self, msg_id: str) -> Reply:
        """The messages of the request ``msg_id``, as a Reply (its folded outputs, its streams)."""
        mine = [m for m in self.messages if m["parent_header"].get("msg_id") == msg_id]
        return Reply("", {}, mine)

    def idle(self, msg_id: str) -> Callable[[list[Message]], bool]:
        return lambda messages: any(
            m["parent_header"].get("msg_id") == msg_id
            and m["msg_type"] == "status"
            and m["content"]["execution_state"] == "idle"
            for m in messages
        )

    def ended(self, msg_id: str) -> Callable[[list[Message]], bool]:
        """The background cell ``msg_id`` shows a finished record (its trace's status is not running)."""
        return lambda messages: bool(_final(self.of(msg_id)))

    def run(self, code: str, timeout: float = 60) -> tuple[str, Message]:
        """Send a cell; returns its id and execute reply once it is idle (its messages are kept)."""
        msg_id = self.kernel.client.execute(code)
        reply = shell_reply(self.kernel, msg_id, timeout=timeout)
        self.until(self.idle(msg_id), timeout, f"idle after {code[:40]!r}")
        return msg_id, reply["content"]


def _traces(reply: Reply) -> list[Message]:
    """The trace records the cell sent (first display and each update), in order, with their time."""
    return [
        {**m["content"]["data"][TRACE_MIME], "at": m["at"]}
        for m in reply.of_type("display_data", "update_display_data")
        if TRACE_MIME in m["content"]["data"]
    ]


def _final(reply: Reply) -> Message | None:
    traces = [t for t in _traces(reply) if t["status"] != "running"]
    return traces[-1] if traces else None


def _job_id(reply: Reply) -> str:
    line = next(line for line in reply.stream().splitlines() if "in the background as job" in line)
    return line.split("as job ")[1].split(":")[0]


def _announce(kernel: Kernel) -> None:
    """Open the comm the JupyterLab extension opens: it renders the trace MIME type."""
    content = {
        "comm_id": uuid.uuid4().hex,
        "target_name": "codemode.frontend",
        "data": {"mime_types": [TRACE_MIME]},
    }
    kernel.client.shell_channel.send(kernel.client.session.msg("comm_open", content))


@pytest.fixture(scope="module")
def connection_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Named as jupyter_server names it, so the kernel writes its state file (the sidebar's) beside it."""
    return tmp_path_factory.mktemp("runtime") / f"kernel-{uuid.uuid4()}.json"


@pytest.fixture(scope="module")
def lab_kernel(
    jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory, connection_file: Path
) -> Iterator[Kernel]:
    """A kernel as JupyterLab with the extension drives it."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        notebook = tmp_path_factory.mktemp("notebook")
        kernel = start_kernel(jupyter_path, notebook, monkeypatch, connection_file=connection_file)
    try:
        _announce(kernel)
        assert kernel.run("%codemode status").status == "ok"  # the servers are up before timing anything
        yield kernel
    finally:
        kernel.client.stop_channels()
        kernel.manager.shutdown_kernel(now=False)


def test_a_background_cell_keeps_updating_while_a_foreground_cell_runs(lab_kernel: Kernel) -> None:
    iopub = Iopub(lab_kernel)
    started = time.monotonic()
    background, content = iopub.run(SPACED)
    assert content["status"] == "ok"
    assert time.monotonic() - started < 10, "the background cell ended only after its program"
    job = _job_id(iopub.of(background))
    assert _final(iopub.of(background)) is None, "the program had already ended when its cell did"

    foreground, content = iopub.run(FOREGROUND)
    assert content["status"] == "ok"
    fg = iopub.of(foreground)
    busy = next(m["at"] for m in fg.of_type("status") if m["content"]["execution_state"] == "busy")
    idle = next(m["at"] for m in fg.of_type("status") if m["content"]["execution_state"] == "idle")
    iopub.until(iopub.ended(background), 60, "the background record")

    bg = iopub.of(background)
    during = [t for t in _traces(bg) if busy < t["at"] < idle and t["status"] == "running"]
    calls = [len(t["tool_calls"]) for t in during]
    assert len(during) >= 2 and calls[-1] > calls[0], (
        f"the view stood still while the other cell ran: {calls}"
    )
    assert not _traces(fg), "the background view's updates went to the foreground cell"
    assert fg.stream() == "" and "weather of Doha" not in fg.stream("stderr"), "its prints went elsewhere"
    printed = [m["at"] for m in bg.of_type("stream") if "weather of" in m["content"]["text"]]
    assert any(busy < at < idle for at in printed), "nothing it printed reached its cell meanwhile"
    assert "weather of Oslo" in bg.stream() and "weather of Doha" in bg.stream()
    assert any(t.get("notes") == [{"message": "half way", "data": {"done": 3}}] for t in _traces(bg))

    # The end: the same record a foreground run leaves, in place of the live view (one output).
    final = _final(bg)
    assert final is not None and final["status"] == "ok", final
    assert final["value"]["data"] == 6 and len(final["tool_calls"]) == 6
    assert final["notes"] == [{"message": "half way", "data": {"done": 3}}]
    outputs = [o for o in bg.outputs() if TRACE_MIME in o.get("data", {})]
    assert len(outputs) == 1 and "note: half way · done=3" in outputs[0]["data"]["text/plain"]

    # --out bound before the next cell; jobs[ID] has it too.
    after = lab_kernel.run(f"print(spaced, jobs[{job!r}].value, jobs[{job!r}].status)")
    assert after.stream() == "6 6 ok\n", after.messages


def test_interrupting_the_foreground_cell_leaves_the_background_run_alone(lab_kernel: Kernel) -> None:
    _interrupt_beside_a_background_run(lab_kernel)


def test_an_interrupt_request_message_leaves_the_background_run_alone(
    message_mode_jupyter_path: Path, tmp_path: Path
) -> None:
    """A frontend that interrupts with a message (remote kernels): ipykernel signals its process group."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        kernel = start_kernel(message_mode_jupyter_path, tmp_path, monkeypatch)
    try:
        _announce(kernel)
        _interrupt_beside_a_background_run(kernel)
    finally:
        kernel.client.stop_channels()
        kernel.manager.shutdown_kernel(now=True)


def _interrupt_beside_a_background_run(kernel: Kernel) -> None:
    """Interrupt a sleeping foreground cell while a background run goes on: the run ends ok."""
    iopub = Iopub(kernel)
    background, _ = iopub.run(SPACED.replace("--out spaced", ""))
    foreground = kernel.client.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    iopub.until(lambda _: "sleeping" in iopub.of(foreground).stream(), 30, "the foreground cell's print")
    kernel.manager.interrupt_kernel()
    reply = shell_reply(kernel, foreground)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    iopub.until(iopub.ended(background), 60, "the background record")
    final = _final(iopub.of(background))
    assert final is not None and final["status"] == "ok" and final["value"]["data"] == 6, final


def test_jobs_wait_and_cancel(lab_kernel: Kernel, connection_file: Path) -> None:
    iopub = Iopub(lab_kernel)
    long_cell, _ = iopub.run(LONG)
    long_job = _job_id(iopub.of(long_cell))
    state = wait_for_state(
        state_path(connection_file), lambda s: s.get("jobs", [{}])[0].get("id") == long_job
    )
    assert state["jobs"][0]["status"] == "running" and state["jobs"][0]["seconds"] is None
    assert state["jobs"][0]["first_line"] == "get_weather(city='Oslo', unit='celsius')"
    short_cell, _ = iopub.run("%%codemode --background --out short\nimport time\ntime.sleep(1)\n40 + 2")
    short_job = _job_id(iopub.of(short_cell))

    def run(code: str) -> Reply:
        msg_id, content = iopub.run(code)
        reply = iopub.of(msg_id)
        reply.status, reply.content = content["status"], content
        return reply

    listed = run("%codemode jobs").stream()
    assert f"{long_job}  running" in listed and "get_weather(city='Oslo'" in listed, listed

    waited = run(f"%codemode wait {short_job[:6]}")  # the start of an id is enough
    assert f"job {short_job}: codemode: ok" in waited.stream() and "value: 42" in waited.stream()
    assert run("print(short)").stream() == "42\n"

    still = run(f"%codemode wait {long_job} --timeout 0.5").stream()
    assert f"job {long_job} still running after 0.5 s" in still

    cancelled = run(f"%codemode cancel {long_job}")
    assert f"job {long_job} cancelled after" in cancelled.stream(), cancelled.messages
    iopub.until(iopub.ended(long_cell), 30, "the cancelled record")
    final = _final(iopub.of(long_cell))
    assert final is not None and final["status"] == "cancelled", final
    assert "stopped by %codemode cancel" in final["error"]["message"]
    assert len(final["tool_calls"]) == 1 and final["tool_calls"][0]["status"] == "ok"
    assert f"{long_job}  cancelled" in run("%codemode jobs").stream()
    state = wait_for_state(state_path(connection_file), lambda s: s["jobs"][1]["status"] == "cancelled")
    assert [job["id"] for job in state["jobs"][:2]] == [short_job, long_job]  # newest first
    assert state["jobs"][1]["seconds"] > 0 and state["jobs"][0]["status"] == "ok"

    unknown = run("%codemode wait nosuchjob")
    assert (
        unknown.status == "error"
        and "no job of this kernel has the id 'nosuchjob'" in unknown.content["evalue"]
    )


def test_interrupting_a_wait_stops_the_waiting_not_the_run(lab_kernel: Kernel) -> None:
    iopub = Iopub(lab_kernel)
    cell, _ = iopub.run(SPACED.replace("--out spaced", ""))
    job = _job_id(iopub.of(cell))
    waiting = lab_kernel.client.execute(f"%codemode wait {job}")
    iopub.until(lambda _: "waiting for job" in iopub.of(waiting).stream(), 30, "the wait's first line")
    lab_kernel.manager.interrupt_kernel()
    reply = shell_reply(lab_kernel, waiting)
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    iopub.until(iopub.idle(waiting), 30, "idle after the interrupted wait")
    assert f"stopped waiting; job {job} still runs" in iopub.of(waiting).stream("stderr")
    iopub.until(iopub.ended(cell), 60, "the background record")
    final = _final(iopub.of(cell))
    assert final is not None and final["status"] == "ok" and final["value"]["data"] == 6, final


@pytest.mark.parametrize("restart", [True, False], ids=["restart", "shutdown"])
def test_a_restart_or_shutdown_cancels_a_background_run_and_its_cell_says_so(
    jupyter_path: Path, tmp_path: Path, restart: bool
) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        kernel = start_kernel(jupyter_path, tmp_path, monkeypatch)
    try:
        _announce(kernel)
        iopub = Iopub(kernel)
        cell, _ = iopub.run(LONG)
        # Until the call has ended (ok): the run is then in its sleep, and the call's record must stay ok.
        iopub.until(
            lambda _: any([c["status"] for c in t["tool_calls"]] == ["ok"] for t in _traces(iopub.of(cell))),
            30,
            "the call's end",
        )
        if restart:
            kernel.manager.restart_kernel(now=False)
        else:
            kernel.manager.shutdown_kernel(now=False)
        iopub.until(iopub.ended(cell), 30, "the record of the run the kernel's end stopped")
        final = _final(iopub.of(cell))
        assert final is not None and final["status"] == "cancelled", final
        by = "the kernel restarting" if restart else "the kernel shutting down"
        assert f"stopped by {by}" in final["error"]["message"]
        assert len(final["tool_calls"]) == 1 and final["tool_calls"][0]["status"] == "ok"
        assert "codemode: cancelled" in iopub.of(cell).outputs()[0]["data"]["text/plain"]
    finally:  # kernel_in would shut down a kernel already shut down (its zmq context closed by then)
        kernel.client.stop_channels()
        if kernel.manager.has_kernel:
            kernel.manager.shutdown_kernel(now=True)


def test_without_the_extension_the_widget_view_updates_then_becomes_the_record(kernel: Kernel) -> None:
    iopub = Iopub(kernel)
    cell, _ = iopub.run(SPACED.replace("--out spaced", "--out widget_run"))
    iopub.until(iopub.ended(cell), 60, "the background record")
    bg = iopub.of(cell)
    assert len(bg.of_type("comm_msg")) >= 6, "the widget view was not updated after the cell ended"
    outputs = bg.outputs()
    records = [o for o in outputs if TRACE_MIME in o.get("data", {})]
    assert len(records) == 1 and records[0]["data"][TRACE_MIME]["status"] == "ok"
    assert all("application/vnd.jupyter.widget-view+json" not in o.get("data", {}) for o in outputs)


def test_a_call_that_needs_approval_is_denied_in_the_background_saying_how_to_allow_it(
    lab_kernel: Kernel,
) -> None:
    iopub = Iopub(lab_kernel)
    cell, _ = iopub.run("%%codemode --background\nwrite_file(path='note.txt', content='hi')")
    iopub.until(iopub.ended(cell), 30, "the record (no question nobody sees)")
    final = _final(iopub.of(cell))
    assert final is not None and final["status"] != "ok"
    assert not [m for m in iopub.messages if m["msg_type"] == "input_request"]
    text = iopub.of(cell).outputs()[0]["data"]["text/plain"]
    assert "a background run cannot ask" in text and "%codemode approve workspace/write_file" in text, text
