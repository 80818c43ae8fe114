"""What a real kernel leaves for the Code Mode sidebar: its state file, the run history, and the magics.

The kernel's connection file is named as jupyter_server names it (``kernel-<id>.json``); the state file
must appear beside it as ``codemode-<id>.json``. The config is the demo servers plus the scripted
OpenAI-compatible model, so ``%%agent`` runs for real.
"""

from __future__ import annotations

import json
import stat
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, configured_kernel, state_path, wait_for_state

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn

TRACE_MIME = "application/vnd.codemode.trace.v1+json"
AGENT_MIME = "application/vnd.codemode.agent.v1+json"
PROGRAM = (
    'store_artifact({"rows": 3}, name="summary")\nget_weather(city="Oslo", unit="celsius")["temperature"]'
)


def _demo(name: str, *extra: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", f"codemode_kernel.servers.{name}", *extra]}


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory, model: ScriptedModelServer) -> Path:
    """The kernel's directory: a config with the three demo servers and the scripted model, and one
    with the weather server alone (for ``%codemode reload --config``)."""
    notebook = tmp_path_factory.mktemp("sidebar-notebook")
    models = [{"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}]
    servers = {
        "weather": _demo("weather"),
        "workspace": _demo("workspace", "--root", str(notebook)),
        "sqlite": _demo("sqlite"),
    }
    for name, chosen in (("all.json", servers), ("weather.json", {"weather": servers["weather"]})):
        config = {"mcpServers": chosen, "workspace": str(notebook), "models": models}
        (notebook / name).write_text(json.dumps(config))
    return notebook


@pytest.fixture(scope="module")
def connection_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runtime") / f"kernel-{uuid.uuid4()}.json"


@pytest.fixture(scope="module")
def sidebar_kernel(jupyter_path: Path, notebook: Path, connection_file: Path) -> Iterator[Kernel]:
    with configured_kernel(
        jupyter_path, notebook, notebook / "all.json", connection_file=connection_file
    ) as kernel:
        yield kernel


def _all_ready(state: dict[str, Any]) -> bool:
    return bool(state["servers"]) and all(s["state"] == "ready" for s in state["servers"])


def _history(notebook: Path) -> list[dict[str, Any]]:
    """The run files of the workspace, newest first, as the sidebar's server extension reads them."""
    files = sorted((notebook / ".codemode" / "history").glob("*.json"), reverse=True)
    return [json.loads(path.read_text()) for path in files]


def test_the_state_file_beside_the_connection_file_lists_servers_and_tools(
    sidebar_kernel: Kernel, connection_file: Path, notebook: Path
) -> None:
    path = state_path(connection_file)
    state = wait_for_state(path, lambda state: _all_ready(state) and "executor" in state)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert state["executor"] == {"backend": "local"}  # the sidebar's Executor section: this machine
    assert state["version"] == 1 and state["kernel_id"] == connection_file.stem.removeprefix("kernel-")
    assert state["workspace"] == str(notebook) and isinstance(state["pid"], int) and state["updated"]
    servers = {s["name"]: s for s in state["servers"]}
    assert list(servers) == ["weather", "workspace", "sqlite"]
    assert servers["weather"] == {
        "name": "weather",
        "state": "ready",
        "transport": "stdio",
        "tool_count": 3,
        "error": None,
        "fix": None,
        "signin_url": None,
    }
    tools = {t["name"]: t for t in state["tools"]}
    assert len(tools) == sum(s["tool_count"] for s in servers.values())
    weather = tools["get_weather"]
    assert weather["server"] == "weather" and weather["tool"] == "get_weather"
    assert weather["signature"].startswith(
        'def get_weather(city: str, unit: Literal["celsius", "fahrenheit"])'
    )
    assert weather["signature"].endswith(":")
    assert weather["call"] == 'get_weather(city=..., unit="celsius")'
    assert weather["doc"].startswith("Get the current weather for a city.")
    assert weather["input_schema"]["required"] == ["city", "unit"]
    assert weather["output_schema"]["properties"]["temperature"]["type"] == "number"
    assert tools["get_city"]["call"] == "get_city()"


def test_history_files_keep_each_codemode_run_with_what_the_cell_showed(
    sidebar_kernel: Kernel, notebook: Path
) -> None:
    reply = sidebar_kernel.run(f"%%codemode\n{PROGRAM}")
    assert reply.status == "ok", reply.content
    (shown,) = [o for o in reply.outputs() if TRACE_MIME in o.get("data", {})]
    newest = _history(notebook)[0]
    execution_id = shown["metadata"][TRACE_MIME]["execution_id"]
    assert newest["id"] == execution_id and newest["kind"] == "codemode"
    assert newest["code"].strip() == PROGRAM and newest["status"] == "ok" and newest["tool_calls"] == 1
    assert newest["kernel_id"] and newest["replayed"] is False and newest["finished"].endswith("+00:00")
    assert newest["bundle"] == {"data": shown["data"], "metadata": shown["metadata"]}  # exactly as shown


def test_history_files_keep_each_agent_request_with_its_answer(
    sidebar_kernel: Kernel, notebook: Path, model: ScriptedModelServer
) -> None:
    model.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": 'get_city()["city"]'})]),
        ScriptedTurn(text="You are in <b>Oslo</b>."),
    )
    reply = sidebar_kernel.run("%%agent --new\nWhere am I?")
    assert reply.status == "ok", reply.content
    (answer,) = [o for o in reply.outputs() if AGENT_MIME in o.get("data", {})]
    newest = _history(notebook)[0]
    assert newest["kind"] == "agent" and newest["model"] == "scripted" and newest["request"] == "Where am I?"
    assert newest["status"] == "answered" and newest["number"] >= 1
    assert newest["bundle"] == {"data": answer["data"], "metadata": answer["metadata"]}
    shown_markdown = newest["bundle"]["data"]["text/markdown"]  # as shown: safe_markdown, raw HTML escaped
    assert "You are in &lt;b>Oslo&lt;/b>." in shown_markdown and "<b>" not in shown_markdown
    (program,) = newest["executions"]  # the program the agent ran, as the cell showed its record
    (shown,) = [o for o in reply.outputs() if TRACE_MIME in o.get("metadata", {})]
    assert program == {"data": shown["data"], "metadata": shown["metadata"]}
    assert program["data"][TRACE_MIME]["status"] == "ok"


def test_load_puts_an_artifact_into_the_namespace_and_says_so(sidebar_kernel: Kernel) -> None:
    assert sidebar_kernel.run(f"%%codemode --quiet\n{PROGRAM}").status == "ok"
    reply = sidebar_kernel.run("%codemode load summary my_summary")
    assert reply.status == "ok", reply.content
    assert reply.stream().startswith("loaded 'summary' (") and reply.stream().endswith(
        "application/json, as my_summary (dict)\n"
    )
    assert sidebar_kernel.run("my_summary").data() == ["{'rows': 3}"]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("%codemode load summary 1st", "'1st' is not a Python name"),
        ("%codemode load summary class", "'class' is not a Python name"),
        ("%codemode load no-such-thing x", "no artifact has the id or name 'no-such-thing'"),
        ("%codemode load summary", "usage: %codemode load ARTIFACT NAME"),
        ("%codemode reconnect", "usage: %codemode reconnect NAME"),
        ("%codemode reconnect wether", "no server named 'wether'; did you mean 'weather'?"),
    ],
)
def test_the_sidebar_magics_fail_clearly(sidebar_kernel: Kernel, line: str, said: str) -> None:
    reply = sidebar_kernel.run(line)
    assert reply.status == "error" and reply.content["ename"] == "UsageError"
    assert said in reply.content["evalue"]


def test_reconnect_restarts_one_server_and_its_tools_work(
    sidebar_kernel: Kernel, connection_file: Path
) -> None:
    reply = sidebar_kernel.run("%codemode reconnect weather")
    assert reply.status == "ok", reply.content
    assert reply.stream() == "weather [stdio]: connected again, ready, 3 tools\n"
    assert sidebar_kernel.run('get_weather(city="Oslo", unit="celsius").city').data() == ["'Oslo'"]
    state = wait_for_state(state_path(connection_file), _all_ready)
    assert {s["name"]: s["state"] for s in state["servers"]}["weather"] == "ready"


def test_a_history_that_cannot_be_written_never_fails_the_cell(
    sidebar_kernel: Kernel, notebook: Path
) -> None:
    history = notebook / ".codemode" / "history"
    kept = notebook / "history-kept"
    history.rename(kept)
    history.write_text("a file where the directory should be")
    try:
        reply = sidebar_kernel.run('%%codemode\nget_city()["city"]')
        assert reply.status == "ok", reply.content
        assert reply.data() == ["codemode: ok, 1 tool call\nvalue: 'New York'"]
    finally:
        history.unlink()
        kept.rename(history)


def test_reload_rewrites_the_state_file(
    sidebar_kernel: Kernel, connection_file: Path, notebook: Path
) -> None:
    path = state_path(connection_file)
    wait_for_state(path, _all_ready)
    try:
        assert sidebar_kernel.run(f"%codemode reload --config {notebook / 'weather.json'}").status == "ok"
        state = wait_for_state(path, lambda s: [x["name"] for x in s["servers"]] == ["weather"])
        assert {t["server"] for t in state["tools"]} == {"weather"} and len(state["tools"]) == 3
    finally:
        assert sidebar_kernel.run(f"%codemode reload --config {notebook / 'all.json'}").status == "ok"
    wait_for_state(path, lambda s: len(s["servers"]) == 3 and _all_ready(s))


def test_history_survives_a_restart_and_the_state_file_is_removed_at_shutdown(
    jupyter_path: Path, notebook: Path, tmp_path: Path
) -> None:
    connection = tmp_path / f"kernel-{uuid.uuid4()}.json"
    path = state_path(connection)
    with configured_kernel(
        jupyter_path, notebook, notebook / "weather.json", connection_file=connection
    ) as k:
        wait_for_state(path, _all_ready)
        first = k.run('%%codemode\nget_city()["city"]')
        assert first.status == "ok"
        (ran,) = [
            o["metadata"][TRACE_MIME]["execution_id"]
            for o in first.outputs()
            if TRACE_MIME in o.get("metadata", {})
        ]
        pid = json.loads(path.read_text())["pid"]
        k.manager.restart_kernel(now=False)
        k.client.wait_for_ready(timeout=60)
        state = wait_for_state(path, lambda s: s["pid"] != pid and _all_ready(s))
        assert state["workspace"] == str(notebook)
        second = k.run('%%codemode\nget_city()["city"]')
        assert second.status == "ok"
        runs = _history(notebook)
        ids = [run["id"] for run in runs]
        assert ids.index(ran) > 0 and runs[0]["number"] == 1  # the new kernel numbers from 1 again
        assert path.exists()
    assert not path.exists()  # removed when the kernel shut down
    assert ran in [run["id"] for run in _history(notebook)]
