"""%%agent in a real kernel, against the scripted OpenAI-compatible server (the real openai client)."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, configured_kernel, shell_reply, wait_for_idle

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from codemode_kernel.views.display import TRACE_MIME

PROGRAM = (
    'cities = read_file(path="cities.txt").splitlines()\n'
    'temps = {c: get_weather(city=c, unit="celsius").temperature for c in cities}\n'
    "warmest = max(temps, key=temps.get)\n"
    'print(f"{len(temps)} cities; warmest {warmest} at {temps[warmest]}")'
)
ANSWER = "The warmest city is **Miami**. <img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def other_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def own_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def agent_kernel(
    jupyter_path: Path,
    server: ScriptedModelServer,
    other_server: ScriptedModelServer,
    own_server: ScriptedModelServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Kernel]:
    """A kernel whose config (named by CODEMODE_CONFIG) has the demo servers and the scripted model."""
    notebook = tmp_path_factory.mktemp("agent-notebook")
    (notebook / "cities.txt").write_text("Oslo\nLima\nMiami\n")
    demo = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    workspace = {
        "command": sys.executable,
        "args": ["-m", "codemode_kernel.servers.workspace", "--root", str(notebook)],
    }
    config = {
        "mcpServers": {"weather": demo, "workspace": workspace},
        "workspace": str(notebook),
        # No "enabled" anywhere: code mode is on (the product), unlike the Go design's "neither -> off".
        "defaults": {"codeMode": {"excludedTools": ["weather/get_city"]}},
        "models": [
            {"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": server.base_url},
            {"ref": "other", "provider": "openai", "model": "scripted", "baseUrl": other_server.base_url},
            # Its own codeMode replaces the defaults': get_city is a function in its programs.
            {
                "ref": "own",
                "provider": "openai",
                "model": "scripted",
                "baseUrl": own_server.base_url,
                "codeMode": {"excludedTools": []},
            },
        ],
    }
    (notebook / "agent.json").write_text(json.dumps(config))
    with configured_kernel(jupyter_path, notebook, notebook / "agent.json") as k:
        yield k


def _tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_one_program_does_the_work_and_the_model_sees_only_its_output(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    start = len(server.requests)
    server.add(
        ScriptedTurn(
            text="I'll write a program.", tool_calls=[ScriptedToolCall("execute_python", {"code": PROGRAM})]
        ),
        ScriptedTurn(text=ANSWER),
    )
    reply = agent_kernel.run(
        "%%agent --insert\nGet the weather for each city in cities.txt; which is warmest?"
    )
    assert reply.status == "ok", reply.content
    texts = reply.data()
    assert any(t.startswith("step 1: execute_python\ncities = read_file") for t in texts)
    assert "codemode: ok, 4 tool calls" in texts  # read_file + 3 get_weather, inside the one program
    assert reply.stream() == "3 cities; warmest Miami at 24.4\n"
    assert texts[-2] == ANSWER  # the answer as text, then the summary
    assert texts[-1].startswith("agent: answered, 2 model requests, 1 program")
    markdown = reply.data("text/markdown")[-1]
    assert "**Miami**" in markdown and "<img" not in markdown and "&lt;img src=x" in markdown
    # --insert: the final program comes back as a new %%codemode cell below.
    (payload,) = [p for p in reply.content["payload"] if p["source"] == "set_next_input"]
    assert payload["text"].startswith("%%codemode\ncities = read_file") and payload["replace"] is False

    first, second = (r.body for r in server.requests[start:])
    # execute_python, then get_city: the defaults exclude it from code mode, so it is a classic tool.
    tool, excluded = first["tools"]
    assert (tool["function"]["name"], excluded["function"]["name"]) == ("execute_python", "get_city")
    assert "def get_weather(city: str, unit: Literal[" in tool["function"]["description"]
    assert _tool_messages(second) == [_tool_messages(second)[0]]
    assert "3 cities; warmest Miami at 24.4" in _tool_messages(second)[0]
    assert '"conditions"' not in _tool_messages(second)[0]  # the raw tool results never reach the model


def test_classic_flag_offers_every_tool_and_code_mode_comes_back_after(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("get_weather", {"city": "Oslo", "unit": "celsius"})]),
        "It is cold in Oslo.",
        "Code mode again.",
    )
    start = len(server.requests)
    reply = agent_kernel.run("%%agent --classic --new\nHow warm is Oslo?")
    assert reply.status == "ok", reply.content
    assert reply.data()[-2] == "It is cold in Oslo."
    assert agent_kernel.run("%%agent --new\nAnd now?").status == "ok"
    classic, answered, code_mode = (r.body for r in server.requests[start:])
    offered = {t["function"]["name"] for t in classic["tools"]}
    assert {"get_weather", "read_file"} <= offered and "execute_python" not in offered
    assert '"temperature"' in _tool_messages(answered)[0]  # classic: the raw result goes to the model
    assert [t["function"]["name"] for t in code_mode["tools"]] == ["execute_python", "get_city"]


def test_a_follow_up_continues_the_conversation_until_new(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    server.add("It was 24.4 °C.", "Hello again.")
    start = len(server.requests)
    assert agent_kernel.run("%%agent\nHow warm was it there?").status == "ok"
    assert agent_kernel.run("%%agent --new\nHello?").status == "ok"
    follow_up, fresh = (r.body for r in server.requests[start:])
    users = [m["content"] for m in follow_up["messages"] if m["role"] == "user"]
    assert users[-1] == "How warm was it there?" and len(users) >= 2  # the earlier request is still there
    fresh_messages = [m for m in fresh["messages"] if m["role"] != "system"]
    assert fresh_messages == [{"role": "user", "content": "Hello?"}]
    history = agent_kernel.run("%codemode history").data()[0]
    assert "agent requests:" in history and "How warm was it there?" in history


def test_llm_inside_a_program_reaches_the_configured_model(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    server.add("SUNNY AND WARM")
    start = len(server.requests)
    reply = agent_kernel.run('%%codemode\nllm("Describe Miami weather in three words", system="terse")')
    assert reply.data()[0] == "codemode: ok, 1 tool call\nvalue: 'SUNNY AND WARM'"
    (asked,) = (r.body for r in server.requests[start:])
    assert asked["messages"][-1] == {"role": "user", "content": "Describe Miami weather in three words"}
    assert "terse" in json.dumps(asked["messages"][0])


def test_a_failing_endpoint_fails_the_cell_with_the_reason(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    server.add(ScriptedTurn(status=404, error="model not found"))
    reply = agent_kernel.run("%%agent --new\nAnything")
    assert reply.status == "error"
    assert "LLMModelNotFoundError" in reply.content["evalue"] and "scripted" in reply.content["evalue"]


def test_an_interrupt_cancels_the_model_request_in_flight(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    server.add(ScriptedTurn(text="never sent", delay=60), "Still here.")
    msg_id = agent_kernel.client.execute("%%agent --new\nThis will take a while")
    deadline = time.monotonic() + 30
    while not server.requests or server.requests[-1].body.get("messages", [{}])[-1].get("content") != (
        "This will take a while"
    ):
        assert time.monotonic() < deadline, "the model request never arrived"
        time.sleep(0.1)
    agent_kernel.manager.interrupt_kernel()
    interrupted = time.monotonic()
    reply = shell_reply(agent_kernel, msg_id)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - interrupted < 5
    wait_for_idle(agent_kernel.client, msg_id)  # else the next cell may be aborted (stop_on_error)
    assert server.wait_disconnected(timeout=10), "the model request was not cancelled at the server"
    assert agent_kernel.run("%%agent\nAre you there?").data()[-2] == "Still here."


def test_llm_in_an_agents_program_asks_that_agents_model(
    agent_kernel: Kernel, server: ScriptedModelServer, other_server: ScriptedModelServer
) -> None:
    program = 'print(llm("Name a warm city"))'
    other_server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        "Lima",  # the program's llm() question
        "The model said Lima.",
    )
    before = len(server.requests)
    reply = agent_kernel.run("%%agent --model other --new\nAsk for a warm city")
    assert reply.status == "ok", reply.content
    assert reply.stream() == "Lima\n"
    asked = [r.body["messages"][-1]["content"] for r in other_server.requests]
    assert "Name a warm city" in asked
    assert len(server.requests) == before  # the first model was never asked


def test_a_models_own_code_mode_decides_which_tools_are_functions_in_its_programs(
    agent_kernel: Kernel, server: ScriptedModelServer, own_server: ScriptedModelServer
) -> None:
    # The defaults exclude weather/get_city: not a function in the notebook's programs ...
    excluded = agent_kernel.run("%%codemode\nget_city()")
    assert excluded.status == "error"
    assert excluded.content["evalue"] == "line 1: NameError: name 'get_city' is not defined"
    # ... nor for a model that follows the defaults: it gets get_city as a classic tool.
    server.add("Nothing to do.")
    before = len(server.requests)
    assert agent_kernel.run("%%agent --model scripted --new\nWhere am I?").status == "ok"
    offered = server.requests[before].body["tools"]
    (execute,) = [t["function"] for t in offered if t["function"]["name"] == "execute_python"]
    assert "def get_city(" not in execute["description"]
    assert "get_city" in [t["function"]["name"] for t in offered]
    # The model whose own codeMode excludes nothing has it as a function, and its program calls it.
    program = (
        "here = get_city()\n"
        + "print(here.city, get_weather(city=here.city, unit='celsius').temperature > -99)"
    )
    own_server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        "You are in the demo city.",
    )
    reply = agent_kernel.run("%%agent --model own --new\nWhere am I?")
    assert reply.status == "ok", reply.content
    offered = own_server.requests[0].body["tools"]
    assert [t["function"]["name"] for t in offered] == ["execute_python"]
    assert "def get_city(" in offered[0]["function"]["description"]
    assert _tool_messages(own_server.requests[1].body)[0].startswith("New York True\n[ok")


def test_with_the_extension_an_agents_program_shows_the_trace_live_then_its_record(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    # The JupyterLab extension announces that it draws the trace type (labextension/src/announce.ts).
    comm_id = uuid.uuid4().hex
    announce = {"comm_id": comm_id, "target_name": "codemode.frontend", "data": {"mime_types": [TRACE_MIME]}}
    agent_kernel.client.shell_channel.send(agent_kernel.client.session.msg("comm_open", announce))
    program = 'import time\na = get_weather(city="Oslo", unit="celsius")\ntime.sleep(0.5)\na.temperature'
    server.add(
        ScriptedTurn(text="", tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        ScriptedTurn(text="6.1"),
    )
    try:
        reply = agent_kernel.run("%%agent --new\nHow warm is Oslo?")
    finally:
        close = {"comm_id": comm_id, "data": {}}
        agent_kernel.client.shell_channel.send(agent_kernel.client.session.msg("comm_close", close))
    assert reply.status == "ok", reply.content
    assert not reply.of_type("comm_open"), "no widget when the extension draws the trace"
    traces = [
        m for m in reply.of_type("display_data", "update_display_data") if TRACE_MIME in m["content"]["data"]
    ]
    live = [m["content"]["data"][TRACE_MIME] for m in traces if m["content"]["data"]["text/plain"] == ""]
    assert live and {t["status"] for t in live} == {"running"} and live[0]["code"] == program
    assert [(c["tool"], c["status"]) for c in live[-1]["tool_calls"]] == [("get_weather", "ok")]
    record = traces[-1]  # the live trace became the record, in place
    assert record["msg_type"] == "update_display_data"
    assert record["content"]["data"][TRACE_MIME]["status"] == "ok"
    assert record["content"]["data"][TRACE_MIME]["code"] == program  # the error context's source
