"""A program's table value reads as its rows wherever a result becomes text (issue 25).

``codemode run`` prints it, the agent's model reads it, and ``codemode serve`` answers with it: a header,
the column names and the rows, as the notebook's text reading shows them; never a bare size. Real
processes throughout: the CLI, a worker, the scripted model server, a served ``execute_python``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import anyio
import pytest
from mcp import Client, stdio_client

from codemode_kernel import Toolbox
from codemode_kernel.agent import EXECUTE_PYTHON, Agent
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


def test_the_agents_model_reads_a_table_value_as_its_rows(tmp_path: Path) -> None:
    config = tmp_path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": {}, "workspace": str(tmp_path)}))
    turns = [
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": DATAFRAME_PROGRAM})]),
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": RECORDS_PROGRAM})]),
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
    seen = [r.tool_results for r in server.requests if r.api != "other"]
    [frame], [records] = seen[1][-1:], seen[2][-1:]
    assert frame.startswith("value: " + DATAFRAME_TEXT), frame
    _assert_records_rows(records)


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
