"""``codemode serve`` through a third-party MCP client: the MCP Inspector's CLI (npm), as a user runs it.

The Inspector is the MCP project's own debugging client, written in TypeScript on the TypeScript SDK: if
it can list ``execute_python``, call it and read the record, hosts built on that SDK can too. It prints
each answer as JSON on stdout; these tests read that output, as a user reading the terminal would.

The upstream servers are ours (the weather demo) and a third party's (``server-everything`` from npm), so
a program's calls cross two servers written by different people in different languages.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from codemode_kernel.artifacts import ArtifactStore
from codemode_kernel.core.errors import ArtifactNotFoundError
from codemode_kernel.servers.weather import get_weather
from tests.conftest import NODE_BIN, require_executable
from tests.integration.serve_support import (
    CODE_MODE_TOOLS,
    demo_server,
    serve_argv,
    serve_env,
    served_http,
    write_serve_config,
)

pytestmark = pytest.mark.integration

INSPECTOR_DIR = NODE_BIN.parent / "@modelcontextprotocol" / "inspector-cli" / "build"
"""Where the Inspector CLI runs: version 1.0.3 finds its own package.json as ``../package.json`` of its
working directory (``fs.existsSync`` relative to the cwd, then ``import`` relative to the module), so
started anywhere else it stops with "Cannot find module .../package.json". Serve's workspace is in its
config, so its own working directory does not matter."""

TWO_SERVERS_PROGRAM = (
    'w = get_weather(city="Oslo", unit="celsius")\n'
    'said = echo(message=f"{w.city} is {w.conditions}")\n'
    "total = get_sum(a=w.temperature, b=10)\n"
    '{"city": w.city, "echo": said, "sum": total}\n'
)
RAISING_PROGRAM = 'x = get_weather(city="Oslo", unit="celsius")\nraise ValueError("boom")\n'


@pytest.fixture(scope="module")
def inspector() -> str:
    return require_executable(NODE_BIN / "mcp-inspector-cli")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, everything_bin: str) -> Path:
    """A folder with a private home and a serve config naming the weather demo and server-everything."""
    folder = tmp_path_factory.mktemp("clients")
    write_serve_config(folder, {"weather": demo_server("weather"), "everything": {"command": everything_bin}})
    return folder


@pytest.fixture(scope="module")
def served(project: Path) -> Iterator[tuple[psutil.Process, str]]:
    """One ``codemode serve --transport http`` for the module's HTTP tests: its process and URL."""
    with served_http(project, project / "serve.json") as (proc, url):
        yield psutil.Process(proc.pid), url


@pytest.fixture(scope="module")
def url(served: tuple[psutil.Process, str]) -> str:
    return served[1]


def run_inspector(inspector: str, project: Path, *args: str) -> dict[str, Any]:
    """``mcp-inspector-cli --cli ARGS``: the JSON it prints; fails with its stderr if it exits non-zero."""
    done = subprocess.run(
        [inspector, "--cli", *args],
        cwd=INSPECTOR_DIR,
        env=serve_env(project),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, f"the Inspector exited {done.returncode}:\n{done.stderr}\n{done.stdout}"
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def call_execute_python(inspector: str, project: Path, target: list[str], code: str) -> dict[str, Any]:
    """tools/call of execute_python with ``code``, through the Inspector connected to ``target``."""
    # The Inspector parses each --tool-arg value as JSON first: a program must not be valid JSON (a
    # multi-line program never is), or it would arrive as a number or an object.
    args = ["--method", "tools/call", "--tool-name", "execute_python", "--tool-arg", f"code={code}"]
    return run_inspector(inspector, project, *target, *args)


def js(number: float) -> str:
    """``number`` as JavaScript prints it (server-everything is a Node server): 16 for 16.0, else as repr."""
    return str(int(number)) if number.is_integer() else repr(number)


def check_two_servers(answer: dict[str, Any]) -> None:
    """The record of TWO_SERVERS_PROGRAM, as the Inspector printed it."""
    weather = get_weather("Oslo", "celsius")
    assert answer.get("isError") is not True, answer
    record = answer["structuredContent"]
    assert record["status"] == "ok"
    assert record["value"] == {
        "kind": "json",
        "data": {
            "city": "Oslo",
            "echo": f"Echo: Oslo is {weather.conditions}",
            "sum": f"The sum of {js(weather.temperature)} and 10 is {js(weather.temperature + 10)}.",
        },
    }
    calls = [(call["server"], call["tool"], call["status"]) for call in record["tool_calls"]]
    assert calls == [
        ("weather", "get_weather", "ok"),
        ("everything", "echo", "ok"),
        ("everything", "get-sum", "ok"),
    ]
    text = answer["content"][0]["text"]
    assert "[ok in" in text and "3 tool calls]" in text


def test_inspector_lists_execute_python_with_both_servers_tools(
    inspector: str, project: Path, url: str
) -> None:
    answer = run_inspector(inspector, project, url, "--method", "tools/list")
    assert [tool["name"] for tool in answer["tools"]] == CODE_MODE_TOOLS
    tool = answer["tools"][0]
    assert "def get_weather(city: str" in tool["description"]
    assert (
        "# --- server: everything ---" in tool["description"]
        and "def get_sum(a: float" in tool["description"]
    )
    assert tool["inputSchema"]["required"] == ["code"]
    assert {"status", "value", "tool_calls"} <= set(tool["outputSchema"]["properties"])


def test_inspector_runs_a_program_calling_ours_and_a_third_party_server(
    inspector: str, project: Path, url: str
) -> None:
    check_two_servers(call_execute_python(inspector, project, [url], TWO_SERVERS_PROGRAM))


def test_inspector_sees_a_raising_program_as_is_error_with_its_line(
    inspector: str, project: Path, url: str
) -> None:
    answer = call_execute_python(inspector, project, [url], RAISING_PROGRAM)
    assert answer["isError"] is True
    record = answer["structuredContent"]
    assert record["status"] == "error"
    assert (record["error"]["type"], record["error"]["line"]) == ("ValueError", 2)
    assert [call["tool"] for call in record["tool_calls"]] == ["get_weather"]
    assert 'raise ValueError("boom")' in answer["content"][0]["text"]


def test_inspector_starts_serve_over_stdio_from_a_desktop_style_config(inspector: str, project: Path) -> None:
    """The shape Claude Desktop and Cursor use: ``{"mcpServers": {"codemode": {command, args}}}``."""
    argv = serve_argv(project / "serve.json")
    hosts = project / "host.json"
    hosts.write_text(json.dumps({"mcpServers": {"codemode": {"command": argv[0], "args": argv[1:]}}}))
    target = ["--config", str(hosts), "--server", "codemode"]
    check_two_servers(call_execute_python(inspector, project, target, TWO_SERVERS_PROGRAM))


def test_inspector_reads_an_artifact_a_program_kept_as_a_resource(
    inspector: str, project: Path, url: str
) -> None:
    program = (
        'rows = [get_weather(city=c, unit="celsius") for c in ["Oslo", "Lima"]]\n'
        'store_artifact(rows, name="two-cities")\n'
    )
    record = call_execute_python(inspector, project, [url], program)["structuredContent"]
    assert record["status"] == "ok"
    kept = record["artifacts"][0]
    assert kept["name"] == "two-cities" and record["value"]["text"] == kept["id"]

    listed = run_inspector(inspector, project, url, "--method", "resources/list")["resources"]
    entry = next(r for r in listed if r["name"] == "two-cities")
    assert (entry["uri"], entry["mimeType"]) == (f"artifact://{kept['id']}", "application/json")
    templates = run_inspector(inspector, project, url, "--method", "resources/templates/list")
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["artifact://{id_or_name}"]

    rows = [get_weather(city, "celsius").model_dump() for city in ("Oslo", "Lima")]
    for uri in (entry["uri"], "artifact://two-cities"):  # by id as listed, and by name through the template
        read = run_inspector(inspector, project, url, "--method", "resources/read", "--uri", uri)
        assert [(c["uri"], c["mimeType"]) for c in read["contents"]] == [(uri, "application/json")]
        assert json.loads(read["contents"][0]["text"]) == rows


STOP_LIMIT_S = 5.0
"""How long after the Inspector's Ctrl-C the program's worker may live (a cancelled run stops in 0.2 s)."""


def _alive(pids: set[int]) -> set[int]:
    found = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                found.add(pid)
        except psutil.NoSuchProcess:
            pass
    return found


def test_ctrl_c_in_the_inspector_stops_the_program_and_loses_nothing(
    inspector: str, project: Path, served: tuple[psutil.Process, str]
) -> None:
    _server, url = served
    # The program names its process (the worker runs in a PID namespace, so its pid means nothing here),
    # which tells it apart from the workers the server keeps prepared.
    program = (
        "import ctypes, time\nctypes.CDLL(None).prctl(15, b'cm-ctrl-c', 0, 0, 0)\n"
        'store_artifact("running", name="ctrl-c-probe")\nwhile True:\n    time.sleep(0.1)\n'
    )
    args = ["--method", "tools/call", "--tool-name", "execute_python", "--tool-arg", f"code={program}"]
    client = subprocess.Popen(
        [inspector, "--cli", url, *args, "--tool-arg", "timeout=60"],
        cwd=INSPECTOR_DIR,
        env=serve_env(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        store = ArtifactStore.for_workspace(project)
        deadline = time.monotonic() + 30
        while True:  # the program says it runs by storing an artifact
            try:
                store.get("ctrl-c-probe")
                break
            except ArtifactNotFoundError:
                assert time.monotonic() < deadline, "the program never started"
                time.sleep(0.1)
        worker = {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "cm-ctrl-c"}
        assert worker, "no worker runs the program"
        os.killpg(client.pid, signal.SIGINT)  # Ctrl-C in the terminal reaches the Inspector's group
        client.wait(20)
    finally:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait()
    deadline = time.monotonic() + STOP_LIMIT_S
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(worker)
    # Nothing lost: the server still answers, and the next program runs.
    check_two_servers(call_execute_python(inspector, project, [url], TWO_SERVERS_PROGRAM))
    assert not left, f"the program's worker {sorted(left)} still runs {STOP_LIMIT_S} s after Ctrl-C"
