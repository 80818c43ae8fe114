"""The Code Mode kernel as a frontend drives it: completion, inspection, interrupts, reset and restart.

test_kernel.py covers the namespace, ``%%codemode`` and a signal-mode interrupt of a ``%%codemode`` cell;
this file adds the other protocol requests, message-mode interrupts and interrupting a direct tool call.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, run_and_interrupt, shell_reply, start_kernel

from codemode_kernel.executor import DEFAULT_GRACE

ANSI = re.compile(r"\x1b\[[0-9;]*m")
OSLO_NOW = '%%codemode\nget_weather(city="Oslo", unit="celsius").temperature'
OSLO_NOW_SHOWN = "codemode: ok, 1 tool call\nvalue: 6.1"


@pytest.fixture(scope="module")
def message_kernel(
    message_mode_jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    """A Code Mode kernel whose spec asks for interrupts as messages (``interrupt_request``), not SIGINT."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        k = start_kernel(message_mode_jupyter_path, tmp_path_factory.mktemp("notebook"), monkeypatch)
    try:
        assert k.manager.kernel_spec is not None and k.manager.kernel_spec.interrupt_mode == "message"
        yield k
    finally:
        k.client.stop_channels()
        k.manager.shutdown_kernel(now=False)


@pytest.fixture(params=["signal", "message"])
def kernel_in_mode(request: pytest.FixtureRequest) -> Kernel:
    """The module's kernel for each interrupt mode: the default spec (signal) and its message-mode copy."""
    k: Kernel = request.getfixturevalue("kernel" if request.param == "signal" else "message_kernel")
    assert k.manager.kernel_spec is not None and k.manager.kernel_spec.interrupt_mode == request.param
    return k


@pytest.fixture
def kernel_with_tools(kernel: Kernel) -> Kernel:
    """The module's kernel with its servers connected (a cell waits for them)."""
    assert kernel.run("callable(get_weather)").data() == ["True"]
    return kernel


def complete(k: Kernel, code: str) -> dict[str, Any]:
    msg_id = k.client.complete(code, len(code))
    content: dict[str, Any] = shell_reply(k, msg_id, timeout=10)["content"]
    assert content["status"] == "ok", content
    return content


def inspect(k: Kernel, code: str) -> str:
    msg_id = k.client.inspect(code, len(code))
    content = shell_reply(k, msg_id, timeout=10)["content"]
    assert content["status"] == "ok" and content["found"], content
    return ANSI.sub("", content["data"]["text/plain"])


# -- completion and inspection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "matches", "replaced"),
    [
        ("get_weather(ci", ["city="], "ci"),
        ('get_weather(city="Oslo", u', ["unit="], "u"),
        ("tools.get_w", ["get_weather"], "get_w"),
        ("tools.get_forecast(city='Oslo', d", ["days=", "delay_seconds="], "d"),
    ],
)
def test_tool_names_and_keywords_complete(
    kernel_with_tools: Kernel, code: str, matches: list[str], replaced: str
) -> None:
    reply = complete(kernel_with_tools, code)
    assert [m for m in reply["matches"] if m.endswith("=") or m.startswith("get_")] == matches
    assert code[reply["cursor_start"] : reply["cursor_end"]] == replaced  # what the frontend replaces


def test_inspecting_a_tool_shows_its_typed_signature_and_docstring(kernel_with_tools: Kernel) -> None:
    text = inspect(kernel_with_tools, "get_weather")
    signature = "get_weather(city: str, unit: Literal['celsius', 'fahrenheit']) -> tools.GetWeatherOutput"
    assert f"Signature: {signature}" in text
    assert "Docstring:\nGet the current weather for a city." in text
    assert "city (str): The name of the city to get weather for" in text  # the schema's descriptions
    assert "MCP tool 'weather/get_weather'." in text


def test_inspecting_inside_a_call_shows_the_called_tool(kernel_with_tools: Kernel) -> None:
    text = inspect(kernel_with_tools, "tools.get_forecast(city='Oslo', ")
    assert "tools.get_forecast(\n    city: str,\n    *,\n    days: int = 3," in text
    assert "delay_seconds: float = 1.0," in text
    assert "Get a forecast of several days for a city" in text


def test_question_mark_pages_the_same_help(kernel: Kernel) -> None:
    reply = kernel.run("get_weather?")
    assert reply.status == "ok", reply.content
    (page,) = reply.content["payload"]
    assert page["source"] == "page"
    assert ANSI.sub("", page["data"]["text/plain"]) == inspect(kernel, "get_weather")


def test_a_fresh_kernel_completes_tools_before_its_first_cell(
    jupyter_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = start_kernel(jupyter_path, tmp_path, monkeypatch)
    try:
        deadline = time.monotonic() + 10  # the demo servers connect within a few seconds
        while not complete(k, "tools.get_w")["matches"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert complete(k, "get_weather(ci")["matches"] == ["city="]
    finally:
        k.client.stop_channels()
        k.manager.shutdown_kernel(now=False)


# -- interrupts -------------------------------------------------------------------------------------


def test_a_message_mode_interrupt_stops_a_codemode_cell_within_the_grace_period(
    message_kernel: Kernel,
) -> None:
    code = "%%codemode --timeout 120\nimport time\nprint('busy', flush=True)\ntime.sleep(60)"
    reply, delay = run_and_interrupt(message_kernel, code, started="busy")
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert delay < DEFAULT_GRACE + 1
    assert message_kernel.run(OSLO_NOW).data() == [OSLO_NOW_SHOWN]  # a fresh worker, the same tools


@pytest.fixture
def plain_tracebacks(kernel_in_mode: Kernel) -> Iterator[Kernel]:
    """The kernel with IPython's plain tracebacks for one test, then its mode as before.

    IPython's default (``Context``) renders each frame of a traceback with its source around it, parsed
    by stack_data: for an interrupt deep in threading and concurrent.futures that took 0.2-0.4 s, and
    1.3-1.8 s the first time in a kernel on a loaded machine, which made a test of how fast an interrupt
    stops a call fail on how fast IPython draws tracebacks (``Plain``: 5-60 ms, the same frames).
    """
    mode = kernel_in_mode.run("print(get_ipython().InteractiveTB.mode)").stream().strip()
    assert kernel_in_mode.run("%xmode Plain").status == "ok"
    try:
        yield kernel_in_mode
    finally:
        assert kernel_in_mode.run(f"%xmode {mode}").status == "ok"


def test_a_slow_tool_call_in_the_namespace_is_interruptible(plain_tracebacks: Kernel) -> None:
    k = plain_tracebacks
    code = "print('calling', flush=True)\nget_forecast(city='Oslo', days=7, delay_seconds=10)"  # ~70 s
    # No message says that the call is under way (the print comes just before it): half a second for
    # the kernel to send it; the traceback below shows it was.
    reply, delay = run_and_interrupt(k, code, started="calling", pause=0.5)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert delay < 2
    traceback = ANSI.sub("", "\n".join(reply["traceback"]))
    assert "get_forecast(city='Oslo', days=7, delay_seconds=10)" in traceback  # stopped in the call
    quick = k.run("get_forecast(city='Oslo', days=1, delay_seconds=0)['days'][0]['day']")
    assert quick.status == "ok" and quick.data() == ["1"]  # the server and the connection carry on


# -- reset and restart ------------------------------------------------------------------------------


def test_reset_forgets_the_users_variables_but_not_the_tools(kernel: Kernel) -> None:
    assert kernel.run("my_city = 'Oslo'").status == "ok"
    assert kernel.run("%reset -f").status == "ok"
    reply = kernel.run("'my_city' in dir(), tools.get_weather is get_weather")
    assert reply.data() == ["(False, True)"]
    assert kernel.run("%who").stream() == "Interactive namespace is empty.\n"  # the tools stay hidden
    assert kernel.run(OSLO_NOW).data() == [OSLO_NOW_SHOWN]


def test_a_restarted_kernel_comes_back_with_its_tools(
    jupyter_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = start_kernel(jupyter_path, tmp_path, monkeypatch)
    try:
        before = k.run("import os; my_city = 'Oslo'; os.getpid()").data()
        assert k.run(OSLO_NOW).data() == [OSLO_NOW_SHOWN]
        k.manager.restart_kernel(now=False)  # asks the kernel to shut down (servers, workers) first
        k.client.wait_for_ready(timeout=60)
        after = k.run("import os; os.getpid(), 'my_city' in dir(), callable(get_weather)").data()
        assert after[0] != before[0]
        assert after[0].endswith(", False, True)")  # a new process, a fresh namespace, the tools again
        assert k.run(OSLO_NOW).data() == [OSLO_NOW_SHOWN]
    finally:
        k.client.stop_channels()
        k.manager.shutdown_kernel(now=False)
