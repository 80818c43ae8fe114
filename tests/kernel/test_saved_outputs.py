"""What a saved notebook keeps of a cell: no empty outputs, a table's first rows as text, one artifact shape.

``Reply.outputs()`` folds a cell's messages into the outputs a notebook keeps, as JupyterLab and nbclient do.
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

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from codemode_kernel.views.display import TRACE_MIME

PRINTS_AND_CALLS = (
    '%%codemode\nprint("before")\na = get_weather(city="Oslo", unit="celsius")\nprint("after")\na.temperature'
)


def empty(output: dict[str, Any]) -> bool:
    """An output that shows nothing: no data, or only an empty text/plain."""
    if output["output_type"] == "stream":
        return not output["text"]
    return not any(output["data"].values())


def records(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o["data"][TRACE_MIME] for o in outputs if TRACE_MIME in o.get("data", {})]


def test_a_codemode_cell_keeps_its_output_and_one_record_and_nothing_empty(kernel: Kernel) -> None:
    reply = kernel.run(PRINTS_AND_CALLS)
    assert reply.status == "ok", reply.content
    # Someone is watching (the request allows input): the live view is shown while it runs ...
    assert any(WIDGET_MIME in m["content"]["data"] for m in reply.of_type("display_data"))
    # ... and what stays is the printed output and the finished record, once; nothing empty.
    outputs = reply.outputs()
    assert [o for o in outputs if empty(o)] == [], outputs
    assert [r["status"] for r in records(outputs)] == ["ok"]
    assert "".join(o["text"] for o in outputs if o.get("name") == "stdout") == "before\nafter\n"
    assert not any(WIDGET_MIME in o.get("data", {}) for o in outputs), "the widget view was replaced"


def test_with_the_extension_the_live_trace_becomes_the_record(kernel: Kernel) -> None:
    comm_id = uuid.uuid4().hex
    announce = {"comm_id": comm_id, "target_name": "codemode.frontend", "data": {"mime_types": [TRACE_MIME]}}
    kernel.client.shell_channel.send(kernel.client.session.msg("comm_open", announce))
    try:
        reply = kernel.run(PRINTS_AND_CALLS)
    finally:
        kernel.client.shell_channel.send(kernel.client.session.msg("comm_close", {"comm_id": comm_id}))
    assert reply.status == "ok", reply.content
    first = next(
        m["content"]["data"] for m in reply.of_type("display_data") if TRACE_MIME in m["content"]["data"]
    )
    assert first[TRACE_MIME]["status"] == "running"
    outputs = reply.outputs()
    assert [o for o in outputs if empty(o)] == [], outputs
    (record,) = records(outputs)
    assert record["status"] == "ok" and record["tool_calls"][0]["tool"] == "get_weather"


def test_run_unattended_a_cell_shows_no_live_view_and_the_record_once(kernel: Kernel) -> None:
    """nbclient, nbval and papermill ask with ``allow_stdin: false``: nobody watches, nothing live."""
    reply = kernel.run(PRINTS_AND_CALLS, allow_stdin=False)
    assert reply.status == "ok", reply.content
    assert not reply.of_type("comm_open", "update_display_data"), "no live view when nobody watches"
    outputs = reply.outputs()
    assert [o for o in outputs if empty(o)] == [], outputs
    assert [o["data"]["text/plain"] for o in outputs if "data" in o] == [
        "codemode: ok, 1 tool call\nvalue: 6.1"
    ]


def test_an_interrupted_cell_says_so_where_its_live_view_was(kernel: Kernel) -> None:
    msg_id = kernel.client.execute(
        "%%codemode\nimport time\nget_weather(city='Oslo', unit='celsius')\ntime.sleep(30)"
    )
    # Interrupt once the first call has been reported on the live view.
    seen: list[dict[str, Any]] = []
    while True:
        message = kernel.client.get_iopub_msg(timeout=30)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(message)
        if message["msg_type"] == "comm_msg" and "✓ ok" in json.dumps(message["content"], ensure_ascii=False):
            kernel.manager.interrupt_kernel()
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            break
    outputs = Reply("error", {}, seen).outputs()
    assert [o for o in outputs if empty(o)] == [], outputs
    texts = [o["data"].get("text/plain", "") for o in outputs if "data" in o]
    assert texts == ["codemode: stopped before the program ended, 1 tool call"], texts


def test_a_table_value_shows_its_first_rows_as_text(kernel: Kernel) -> None:
    reply = kernel.run(
        '%%codemode\n[{"name": "apple", "qty": 3}, {"name": "pear", "qty": 12}, {"name": "fig", "qty": None}]'
    )
    assert reply.status == "ok", reply.content
    assert [o["data"]["text/plain"] for o in reply.outputs() if "data" in o] == [
        "codemode: ok, 0 tool calls\n"
        "value: table, 3 rows × 2 columns\n"
        "    name   qty\n"
        "0  apple     3\n"
        "1   pear    12\n"
        "2    fig  None"
    ]
    many = kernel.run('%%codemode\n[{"n": i, "square": i * i} for i in range(25)]').data()[-1]
    lines = many.splitlines()
    assert lines[1] == "value: table, 25 rows × 2 columns"
    assert lines[2:4] == ["   n  square", "0  0       0"]
    assert lines[-2:] == ["9  9      81", "… 15 more rows"]


def test_kernel_and_program_list_artifacts_in_one_shape(kernel: Kernel) -> None:
    reply = kernel.run(
        "%%codemode --out listed\n"
        'store_artifact({"rows": 3}, name="shape-check", description="three rows")\n'
        "list_artifacts()"
    )
    assert reply.status == "ok", reply.content
    same = kernel.run(
        "kernel_side = artifacts.list()\n"
        "(kernel_side == listed, all(type(a) is dict for a in listed), isinstance(kernel_side[0], dict),"
        " kernel_side[0]['name'], artifacts.get('shape-check')['description'])"
    )
    assert same.data() == ["(True, True, True, 'shape-check', 'three rows')"], same.content
    # Code written for the old objects still runs, and is told what to write instead.
    old = kernel.run("artifacts.list()[0].name")
    assert old.data() == ["'shape-check'"]
    warning = old.stream("stderr")
    assert "DeprecationWarning" in warning and "a['name']" in warning, warning


# -- %%agent ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def agent_kernel(
    jupyter_path: Path, model: ScriptedModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("agent-outputs")
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    config = {
        "mcpServers": {"weather": weather},
        "workspace": str(notebook),
        "models": [{"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}],
    }
    (notebook / "agent.json").write_text(json.dumps(config))
    with configured_kernel(jupyter_path, notebook, notebook / "agent.json") as k:
        yield k


def _script(model: ScriptedModelServer) -> None:
    program = 'print("checking")\nget_weather(city="Oslo", unit="celsius").temperature'
    model.add(
        ScriptedTurn(
            text="Let me look it up.", tool_calls=[ScriptedToolCall("execute_python", {"code": program})]
        ),
        ScriptedTurn(text="It is 6.1 degrees in Oslo."),
    )


@pytest.mark.parametrize("allow_stdin", [True, False], ids=["watched", "unattended"])
def test_an_agent_cell_keeps_each_text_record_and_answer_once_and_nothing_empty(
    agent_kernel: Kernel, model: ScriptedModelServer, allow_stdin: bool
) -> None:
    _script(model)
    reply = agent_kernel.run("%%agent --new\nHow warm is Oslo?", allow_stdin=allow_stdin)
    assert reply.status == "ok", reply.content
    outputs = reply.outputs()
    assert [o for o in outputs if empty(o)] == [], outputs
    texts = [o["data"].get("text/plain") for o in outputs if "data" in o]
    assert texts.count("Let me look it up.") == 1, texts
    assert texts.count("It is 6.1 degrees in Oslo.") == 1, texts
    assert [r["status"] for r in records(outputs)] == ["ok"]
    if allow_stdin:  # the text was streamed, and the program's trace shown, while they ran
        assert reply.of_type("update_display_data")
    else:
        assert not reply.of_type("update_display_data", "comm_open")
