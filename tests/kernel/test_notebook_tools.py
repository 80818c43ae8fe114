"""Notebook-defined tools (``@codemode.tool``) in a real kernel: stubs, calls, errors, lifetime, agent."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, Reply, configured_kernel

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from codemode_kernel.views.display import TRACE_MIME

SCALE = '''
from typing import Annotated
from pydantic import Field

scaled = []

@codemode.tool
def scale(x: float, factor: Annotated[int, Field(description="the multiplier", ge=1)] = 2) -> float:
    """Multiply a number.

    Keeps a list of what it was asked, in the kernel.

    Args:
        x: the number to scale.
    """
    scaled.append(x)
    return x * factor
'''


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def kernel(
    jupyter_path: Path, model: ScriptedModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    """A kernel with the weather server and the scripted model (CODEMODE_CONFIG)."""
    notebook = tmp_path_factory.mktemp("notebook-tools")
    config = {
        "mcpServers": {
            "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
        },
        "workspace": str(notebook),
        "models": [{"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}],
    }
    (notebook / "codemode.json").write_text(json.dumps(config))
    with configured_kernel(jupyter_path, notebook, notebook / "codemode.json") as k:
        yield k


def _ok(reply: Reply) -> Reply:
    assert reply.status == "ok", (reply.content, reply.stream("stderr"))
    return reply


def _value(kernel: Kernel, expression: str) -> Any:
    """An expression's value in the kernel, through JSON."""
    reply = _ok(kernel.run(f"import json as _json\nprint(_json.dumps({expression}))"))
    return json.loads(reply.stream())


def _trace(reply: Reply) -> dict[str, Any]:
    (trace,) = reply.data(TRACE_MIME)
    return trace  # type: ignore[no-any-return]


def test_a_decorated_function_is_a_typed_function_of_programs_called_100_times(kernel: Kernel) -> None:
    _ok(kernel.run(SCALE))
    stub = _ok(
        kernel.run("%%codemode\nimport inspect\nprint(inspect.signature(scale))\nhelp(scale)")
    ).stream()
    assert stub.startswith("(x: float, *, factor: int = 2) -> float\n")
    assert "Multiply a number." in stub and "Keeps a list of what it was asked" in stub
    assert "x (float): the number to scale." in stub and "factor (int): the multiplier" in stub

    reply = _ok(
        kernel.run("%%codemode\ntotal = 0\nfor i in range(100):\n    total += scale(x=i, factor=3)\ntotal")
    )
    assert reply.data()[0] == "codemode: ok, 100 tool calls\nvalue: 14850.0"
    assert _value(kernel, "scaled") == [float(i) for i in range(100)]  # the kernel's function ran each time
    calls = _trace(reply)["tool_calls"]
    assert [(c["server"], c["tool"], c["status"]) for c in calls] == [("notebook", "scale", "ok")] * 100
    assert calls[7]["arguments"] == {"x": 7, "factor": 3}
    history = _ok(kernel.run("%codemode history 1"))
    assert "ok, 100 tool calls: total = 0" in history.data()[0]
    assert history.data("text/html")[0].count("<code>scale(x=") == 100


def test_bad_arguments_and_a_failing_function_are_errors_at_the_programs_line(kernel: Kernel) -> None:
    _ok(kernel.run(SCALE))
    bad = kernel.run('%%codemode\nx = 1\nscale(x="ten")')
    assert bad.status == "error"
    error = _trace(bad)["error"]
    assert (error["type"], error["line"]) == ("ToolArgumentError", 2)
    assert "x" in error["message"]
    too_small = _trace(kernel.run("%%codemode\nscale(x=1, factor=0)"))["error"]
    assert too_small["type"] == "ToolArgumentError" and "factor" in too_small["message"]
    assert _value(kernel, "scaled") == []  # refused before the function saw them

    _ok(kernel.run('@codemode.tool\ndef refuse(reason: str) -> str:\n    raise ValueError(f"no: {reason}")'))
    caught = _ok(
        kernel.run(
            '%%codemode\ntry:\n    refuse(reason="busy")\nexcept ToolError as e:\n    print("caught", e)'
        )
    )
    assert caught.stream() == "caught refuse raised ValueError: no: busy\n"
    uncaught = _trace(kernel.run('%%codemode\n\nrefuse(reason="late")'))["error"]
    assert (uncaught["type"], uncaught["line"]) == ("ToolError", 2)


def test_redefinition_unregister_and_reset_behave_as_a_user_expects(kernel: Kernel) -> None:
    _ok(kernel.run(SCALE))
    assert _ok(kernel.run("%%codemode\nscale(x=2)")).data()[0].endswith("value: 4.0")
    _ok(kernel.run("@codemode.tool\ndef scale(x: float) -> float:\n    return x + 100"))
    assert _ok(kernel.run("%%codemode\nscale(x=2)")).data()[0].endswith("value: 102.0")  # the new body

    undecorated = _ok(kernel.run("def scale(x):\n    return x"))
    assert "notebook tool scale removed" in undecorated.stream("stderr")
    assert _trace(kernel.run("%%codemode\nscale(x=2)"))["error"]["type"] == "NameError"

    _ok(kernel.run("@codemode.tool\ndef shout(text: str) -> str:\n    return text.upper()"))
    assert "shout" in _value(kernel, "list(codemode.notebook_tools())")
    _ok(kernel.run("codemode.unregister_tool('shout')"))
    assert "shout" not in _value(kernel, "list(codemode.notebook_tools())")
    assert _trace(kernel.run("%%codemode\nshout(text='a')"))["error"]["type"] == "NameError"

    _ok(kernel.run("import os\ncodemode.register_tool(os.path.basename, name='base_name')"))
    _ok(kernel.run("@codemode.tool\ndef shout(text: str) -> str:\n    return text.upper()"))
    listed = _ok(kernel.run("%codemode tools")).stream()
    assert (
        "\nnotebook:\n" in listed
        and "\n  shout(text: str) -> str\n" in listed
        and "\n  base_name(p: Any)" in listed
    )
    status = _ok(kernel.run("%codemode status")).stream()
    assert "notebook tools: " in status and "base_name, shout" in status
    # Decorated again on top (functools.wraps, lru_cache): the name binds a wrapper of it, which keeps it.
    cached = "import functools\n@functools.lru_cache\n@codemode.tool\ndef twice(n: int) -> int:\n"
    assert "removed" not in _ok(kernel.run(cached + "    return n * 2")).stream("stderr")
    assert _ok(kernel.run("%%codemode\ntwice(n=4)")).data()[0].endswith("value: 8")
    _ok(kernel.run("%reset -f"))
    for code in ("shout(text='a')", "base_name(p='a/b')", "twice(n=1)"):
        assert _trace(kernel.run(f"%%codemode\n{code}"))["error"]["type"] == "NameError"
    assert _value(kernel, "codemode.notebook_tools()") == {}  # codemode is back, empty


def test_a_name_taken_by_an_mcp_tool_or_by_code_mode_is_refused(kernel: Kernel) -> None:
    clash = kernel.run("@codemode.tool\ndef get_weather(city: str) -> str:\n    return 'sunny'")
    assert clash.status == "error" and clash.content["ename"] == "ToolNameCollisionError"
    assert "get_weather is already a configured MCP tool" in clash.content["evalue"]
    assert '@codemode.tool(name="...")' in clash.content["evalue"]
    reserved = kernel.run("@codemode.tool\ndef parallel(n: int) -> int:\n    return n")
    assert reserved.content["ename"] == "ToolNameCollisionError"
    renamed = "@codemode.tool(name='own_weather')\ndef get_weather(city: str) -> str:\n    return 'sunny'"
    _ok(kernel.run(renamed))
    reply = _ok(
        kernel.run("%%codemode\n[own_weather(city='Oslo'), get_weather(city='Oslo', unit='celsius').city]")
    )
    assert reply.data()[0].endswith('value: ["sunny", "Oslo"]')
    dropped = _ok(kernel.run("del get_weather"))  # the kernel's get_weather is the MCP tool again
    assert "notebook tool own_weather removed" in dropped.stream("stderr")


def test_replay_answers_a_notebook_tool_from_the_record_without_calling_it(kernel: Kernel) -> None:
    _ok(kernel.run(SCALE))
    cell = "%%codemode\nscale(x=5) + scale(x=6)"
    first = _ok(kernel.run(cell))
    replayed = _ok(kernel.run(cell.replace("%%codemode", "%%codemode --replay")))
    assert first.data()[0].endswith("value: 22.0") and replayed.data()[0].endswith("value: 22.0")
    assert _trace(replayed)["replayed"] is True
    assert _value(kernel, "scaled") == [5.0, 6.0]  # called by the first run only


def test_print_in_a_notebook_tool_shows_in_the_cells_output(kernel: Kernel) -> None:
    _ok(
        kernel.run(
            '@codemode.tool\ndef greet(name: str) -> str:\n    print("greeting", name)\n    return "hi"'
        )
    )
    reply = _ok(kernel.run('%%codemode\nprint(greet(name="Ada"))'))
    assert reply.stream() == "greeting Ada\nhi\n"


def test_the_agents_programs_call_notebook_tools_described_in_execute_python(
    kernel: Kernel, model: ScriptedModelServer
) -> None:
    _ok(kernel.run(SCALE))
    program = "print(sum(scale(x=i) for i in range(100)))"
    model.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        ScriptedTurn(text="The sum is 9900."),
    )
    start = len(model.requests)
    reply = _ok(kernel.run("%%agent --new\nAdd up scale(i) for i below 100."))
    assert reply.stream() == "9900.0\n"
    assert "codemode: ok, 100 tool calls" in reply.data()
    assert len(_value(kernel, "scaled")) == 100
    first, second = (r.body for r in model.requests[start:])
    (execute,) = [t for t in first["tools"] if t["function"]["name"] == "execute_python"]
    assert "def scale(x: float, *, factor: int = 2) -> float" in execute["function"]["description"]
    assert "9900.0" in next(m["content"] for m in second["messages"] if m["role"] == "tool")


def test_a_coroutine_function_is_awaited_and_a_parallel_batch_runs_together(kernel: Kernel) -> None:
    _ok(
        kernel.run(
            "import asyncio\n@codemode.tool\nasync def later(n: int) -> list[int]:\n"
            "    await asyncio.sleep(0.5)\n    return [n, n * n]"
        )
    )
    reply = _ok(kernel.run("%%codemode\nparallel([lambda i=i: later(n=i) for i in range(8)])"))
    assert reply.data()[0].endswith(
        "value: [[0, 0], [1, 1], [2, 4], [3, 9], [4, 16], [5, 25], [6, 36], [7, 49]]"
    )
    assert reply.elapsed < 3.0  # eight half-second calls at once (4 s one after another)
