"""A real server's result fields named like dict methods, a keyword and a dunder, through ``codemode run``.

tests/servers/field_names_server.py answers like a spreadsheet server (``read_range(...).values``). A
program run by the CLI in a real worker reads every field the way the stub says, and a dict method taken
for a field says how to read the field instead of "object is not iterable".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import AgentOptions, build_toolset, compact_listing
from codemode_kernel.config import CodeModeSettings, load_config
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parents[1] / "servers" / "field_names_server.py"
SHADOWED = ["values", "items", "keys", "get", "copy", "update", "pop"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fields")
    config = {"mcpServers": {"sheet": {"command": sys.executable, "args": [str(SERVER)]}}}
    (folder / "codemode.json").write_text(json.dumps(config))
    return folder


def run_program(workspace: Path, program: str) -> dict[str, object]:
    """``codemode run --json`` on ``program``: the result record a user would read."""
    (workspace / "program.py").write_text(program)
    done = run_cli("run", "--json", "--config", "codemode.json", "program.py", cwd=workspace)
    assert done.returncode in (0, 1), done.stderr
    record: dict[str, object] = json.loads(done.stdout)
    return record


def test_every_field_is_read_the_way_the_stub_says(workspace: Path) -> None:
    program = (
        "r = read_range()\n"
        "doc = tool_schema('read_range')['doc']\n"
        "marked = [line.split()[0] for line in doc.splitlines() if 'read as r[' in line]\n"
        "{\n"
        "    'marked': marked,\n"
        "    'by_key': {name: r[name] for name in marked},\n"
        "    'by_attribute': [r.range, r.next_range, r.count, r.index],\n"
        "    'rows': [row for row in r['values']],\n"
        "    'methods': [len(r.keys()), len(r.values()), len(r.items()), r.get('pop'), len(r.copy())],\n"
        "}\n"
    )
    record = run_program(workspace, program)
    assert record["status"] == "ok", record["error"]
    value = record["value"]
    assert isinstance(value, dict)
    data = value["data"]
    assert sorted(data["marked"]) == sorted([*SHADOWED, "class", "__init__"])
    assert data["by_key"]["values"] == [["name", "qty"], ["apple", "3"], ["pear", "5"]]
    assert data["by_key"]["class"] == "fruit" and data["by_key"]["__init__"] == "the __init__ field"
    assert data["by_attribute"] == ["A1:B3", "", 3, 0]
    assert data["rows"] == data["by_key"]["values"]
    assert data["methods"] == [13, 13, 13, 2, 13]


def test_iterating_the_dict_method_for_the_field_says_how_to_read_it(workspace: Path) -> None:
    record = run_program(workspace, "r = read_range()\nfor row in r.values:\n    print(row)\n")
    assert record["status"] == "error"
    error = record["error"]
    assert isinstance(error, dict)
    assert error["type"] == "TypeError" and error["line"] == 2
    assert 'read the field as r["values"]' in error["message"]


def test_the_description_and_the_stub_mark_the_same_fields(workspace: Path) -> None:
    with Toolbox(load_config(workspace / "codemode.json")) as tb:
        toolset = build_toolset(tb.models, tb.hub.tool_specs(), CodeModeSettings(), AgentOptions())
        listing = compact_listing(tb.models)
    assert toolset.execute_python is not None
    description = toolset.execute_python.description
    methods = sorted([*SHADOWED, "clear", "fromkeys", "popitem", "setdefault"])
    assert f"named like a dict method ({', '.join(methods)})" in description
    for name in SHADOWED:
        assert f'read as r["{name}"]: r.{name} is the dict method' in description
    assert 'read as r["class"]' in description and 'read as r["__init__"]' in description
    assert 'read as r["count"]' not in description and 'read as r["range"]' not in description
    # The hard-wrapped description is listed by its first sentence, whole.
    line = next(line for line in listing.splitlines() if "read_range(" in line)
    assert line.endswith(
        "# Read the cells of a range of the demo sheet as strings, row by row; read the next page if "
        "`next_range` is not empty."
    ), line


def test_search_tools_gives_whole_sentences(workspace: Path) -> None:
    """Its budget (200 characters) holds the second sentence too; the wrapped first line is never cut."""
    record = run_program(workspace, "search_tools('range')[0]['description']\n")
    assert record["status"] == "ok", record["error"]
    value = record["value"]
    assert isinstance(value, dict)
    assert value == {
        "kind": "text",
        "text": "Read the cells of a range of the demo sheet as strings, row by row; read the next page if "
        "`next_range` is not empty. The sheet has two columns, e.g. name and qty.",
    }
