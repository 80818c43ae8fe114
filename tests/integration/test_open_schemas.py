"""Schemas that accept null and extra keys, called through typed functions against a real server.

The server (tests/servers/open_schema_server.py) echoes the arguments it received, so each test sees
what arrived: in the kernel (Toolbox) and in a program run by a worker (Executor), which binds calls
with the same typegen code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.core.errors import ToolArgumentError
from codemode_kernel.executor import Executor

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parents[1] / "servers" / "open_schema_server.py"


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolbox]:
    workspace = tmp_path_factory.mktemp("open")
    servers = {"open": {"command": sys.executable, "args": [str(SERVER)]}}
    config = workspace / "codemode.json"
    config.write_text(json.dumps({"mcpServers": servers, "workspace": str(workspace)}))
    with Toolbox(load_config(config)) as tb:
        yield tb


def test_null_and_extra_keys_arrive_at_the_server(toolbox: Toolbox) -> None:
    tools = toolbox.tools
    assert tools.search(query="q", lang=None) == {"query": "q", "lang": None}
    assert tools.search(query="q") == {"query": "q"}
    assert tools.tag(name="n", colour="red") == {"name": "n", "colour": "red"}
    assert tools.tag(id=3, **{"x-team": "core"}) == {"id": 3, "x-team": "core"}
    assert tools.note(text="t", meta=None) == {"text": "t", "meta": None}
    assert tools.classify(**{"class": 1, "class_": 2}) == {"class": 1, "class_": 2}
    assert tools.classify(class_=1) == {"class": 1}


def test_what_the_schema_refuses_is_still_refused_before_sending(toolbox: Toolbox) -> None:
    with pytest.raises(ToolArgumentError, match="argument query must be of type str"):
        toolbox.tools.search(query=None)
    with pytest.raises(ToolArgumentError, match="x-team"):  # the id alternative takes only x- strings
        toolbox.tools.tag(id=3, **{"x-team": 5})
    with pytest.raises(ToolArgumentError, match="colour"):  # ...and no other key
        toolbox.tools.tag(id=3, colour="red")


def test_a_program_in_the_worker_sends_the_same(toolbox: Toolbox) -> None:
    code = """
[
    search(query="q", lang=None),
    tag(name="n", colour="red"),
    note(text="t", meta=None),
    classify(**{"class": 1, "class_": 2}),
]
"""
    with Executor(toolbox, grace=1.0) as executor:
        result = executor.run(code)
    assert result.status == "ok", result.error
    assert [c["arguments"] for c in result.tool_calls] == [
        {"query": "q", "lang": None},
        {"name": "n", "colour": "red"},
        {"text": "t", "meta": None},
        {"class": 1, "class_": 2},
    ]
    assert result.value is not None and result.value["data"] == [c["arguments"] for c in result.tool_calls]
