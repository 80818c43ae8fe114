"""A program's table value reads as its rows wherever a result becomes text (issue 25).

``codemode run`` prints it, the agent's model reads it, and ``codemode serve`` answers with it: a header,
the column names and the rows, as the notebook's text reading shows them; never a bare size. Real
processes throughout: the CLI, a worker, the scripted model server, a served ``execute_python``. A hostile
table (one huge cell over thousands of empty rows) reads in a few times its size, and the agent and serve
build none of its rows past their budget; padded to its widest cell it came to gigabytes, so those tests
cap the memory of the process they run.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from codemode_kernel import Toolbox
from codemode_kernel.agent import EXECUTE_PYTHON, Agent, AgentOptions
from codemode_kernel.config import CodeModeSettings, load_config
from codemode_kernel.executor import Executor
from codemode_kernel.llm import OpenAIChatModel
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from tests.conftest import run_cli
from tests.integration.serve_support import demo_server, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

URL = "https://example.org/reports/2026/oslo-weather-station-17.csv"
"""A cell longer than the notebook's preview keeps: a reader with no budget of its own gets it whole."""

RECORDS_PROGRAM = f"""\
rows = [{{"n": i, "square": i * i}} for i in range(30)]
rows[0]["square"] = {URL!r}
rows
"""
DATAFRAME_PROGRAM = """\
import pandas as pd
pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [6.1, 17.9]})
"""
DATAFRAME_TEXT = "table, 2 rows × 2 columns\n   city  temp\n0  Oslo   6.1\n1  Lima  17.9\n"

LONG_CELL_PROGRAM = """\
rows = [{"a": ""} for _ in range(2_000)]
rows[0]["a"] = "x" * 20_000
rows
"""
"""One long cell over many empty rows, small enough for the test's own process: 40 MB of text, padded."""
HUGE_CELL = 800_000
HOSTILE_PROGRAM = f"""\
rows = [{{"a": ""}} for _ in range(20_000)]
rows[0]["a"] = "x" * {HUGE_CELL}
rows
"""
"""A table value of 0.9 MB, within the worker's million bytes: padding its 20,000 rows to the widest cell
made 16 GB of text."""
MEMORY_MB = 2048
"""The address space of the CLI or the server running HOSTILE_PROGRAM: ample for them, not for that text."""
BUDGET = AgentOptions().result_budget


def _assert_records_rows(text: str) -> None:
    """The 30 rows of RECORDS_PROGRAM, the long cell whole, under the header and the column names."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "table, 30 rows × 2 columns" in line)
    assert lines[head + 1].split() == ["n", "square"], text
    assert lines[head + 2].split() == ["0", "0", URL], text
    assert lines[head + 31].split() == ["29", "29", "841"], text
    assert "<table" not in text


def test_codemode_run_prints_a_table_value_as_its_rows(tmp_path: Path) -> None:
    frame = run_cli("run", "-", cwd=tmp_path, stdin=DATAFRAME_PROGRAM)
    assert frame.returncode == 0, frame.stderr
    assert frame.stdout.startswith(DATAFRAME_TEXT), frame.stdout
    records = run_cli("run", "-", cwd=tmp_path, stdin=RECORDS_PROGRAM)
    assert records.returncode == 0, records.stderr
    _assert_records_rows(records.stdout)


def test_codemode_run_prints_a_hostile_table_in_a_few_times_its_size(tmp_path: Path) -> None:
    done = run_cli("run", "-", cwd=tmp_path, stdin=HOSTILE_PROGRAM, memory_mb=MEMORY_MB, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout) < 3 * HUGE_CELL, len(done.stdout)
    lines = done.stdout.splitlines()
    assert lines[0] == "table, 20000 rows × 1 column" and lines[1].split() == ["a"], lines[:2]
    assert lines[2].split() == ["0", "x" * HUGE_CELL]  # the cell whole
    assert lines[-2].split() == ["19999"] and lines[-1].startswith("[ok in "), lines[-2:]


def test_the_agents_model_reads_a_table_value_as_its_rows(tmp_path: Path) -> None:
    config = tmp_path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": {}, "workspace": str(tmp_path)}))
    turns = [
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": DATAFRAME_PROGRAM})]),
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": RECORDS_PROGRAM})]),
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": LONG_CELL_PROGRAM})]),
        ScriptedTurn(text="Read them."),
    ]
    with (
        Toolbox(load_config(config)) as toolbox,
        Executor(toolbox, grace=1.0) as executor,
        ScriptedModelServer(turns) as server,
    ):
        model = OpenAIChatModel("scripted", ref="scripted", base_url=server.base_url, env={})
        agent = Agent(toolbox, executor, model, CodeModeSettings())

        async def main() -> None:
            try:
                await agent.run("Show me the tables")
            finally:
                await model.aclose()

        asyncio.run(main())
        artifacts = executor.artifacts
    seen = [r.tool_results for r in server.requests if r.api != "other"]
    [frame], [records], [long_cell] = seen[1][-1:], seen[2][-1:], seen[3][-1:]
    assert frame.startswith("value: " + DATAFRAME_TEXT), frame
    _assert_records_rows(records)
    # The rows stop past the budget: the whole kept for the model is the rows it could be shown.
    assert long_cell.startswith("value: table, 2000 rows × 1 column\n"), long_cell[:200]
    assert (more := re.search(r"… ([\d,]+) more rows\n", long_cell)) is not None, long_cell
    saved = re.search(r"the whole is artifact (\w+)", long_cell)
    assert saved is not None, long_cell
    whole = artifacts.read_bytes(saved[1]).decode()
    assert len(whole) < 20_000 + 2 * BUDGET and "x" * 20_000 in whole, len(whole)
    assert whole.endswith(f"… {more[1]} more rows\n")


def test_codemode_serve_answers_a_table_value_with_its_rows(tmp_path: Path) -> None:
    config = write_serve_config(tmp_path, {"weather": demo_server("weather")})

    async def session() -> None:
        with (tmp_path / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(stdio_params(tmp_path, config), errlog=errlog)) as client:
                result = await client.call_tool("execute_python", {"code": RECORDS_PROGRAM})
                assert not result.is_error, result.content
                text = "".join(getattr(block, "text", "") for block in result.content)
                _assert_records_rows(text)
                assert result.structured_content is not None
                assert result.structured_content["value"]["row_count"] == 30

    anyio.run(session)


def test_codemode_serve_builds_a_hostile_tables_rows_only_up_to_its_budget(tmp_path: Path) -> None:
    config = write_serve_config(tmp_path, {})
    served = stdio_params(tmp_path, config)
    limited = StdioServerParameters(
        command=sys.executable,
        args=["-c", _WITH_MEMORY, str(MEMORY_MB), served.command, *served.args],
        env=served.env,
        cwd=served.cwd,
    )

    async def session() -> None:
        with (tmp_path / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(limited, errlog=errlog)) as client:
                result = await client.call_tool("execute_python", {"code": HOSTILE_PROGRAM})
                assert not result.is_error, result.content
                text = "".join(getattr(block, "text", "") for block in result.content)
                assert len(text) <= BUDGET and "value: table, 20000 rows × 1 column\n" in text, text[:500]
                assert "\n… 19,999 more rows\n" in text, text[-1000:]  # the first row, past the budget
                record = result.structured_content
                assert record is not None and record["value"]["row_count"] == 20_000
                assert HUGE_CELL - BUDGET < record["cut"]["characters"] < HUGE_CELL, record["cut"]
                # The server is still there for the next call.
                again = await client.call_tool("execute_python", {"code": "1 + 1"})
                assert again.structured_content is not None and again.structured_content["value"]["data"] == 2

    anyio.run(session)


_WITH_MEMORY = (
    "import os, resource, sys; limit = int(sys.argv[1]) << 20; "
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit)); os.execv(sys.argv[2], sys.argv[2:])"
)
"""Runs ``argv[2:]`` with an address space of ``argv[1]`` MiB (RLIMIT_AS)."""
