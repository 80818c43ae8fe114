"""Tools named like what code mode defines (parallel, atools, llm) get a trailing underscore and a warning.

Against a real SDK server (tests/servers/reserved_names_server.py), in the kernel's namespace, in a
program run by a real worker, and in ``codemode doctor``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codemode_kernel import Executor, Toolbox
from codemode_kernel.config import load_config

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parents[1] / "servers" / "reserved_names_server.py"


@pytest.fixture(scope="module")
def config_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reserved")
    path = folder / "codemode.json"
    path.write_text(
        json.dumps({"mcpServers": {"reserved": {"command": sys.executable, "args": [str(SERVER)]}}})
    )
    return path


def test_the_tools_get_their_own_names_and_say_why(config_path: Path) -> None:
    with Toolbox(load_config(config_path)) as tb:
        assert {"parallel_", "atools_", "llm_"} <= set(dir(tb.tools))
        assert tb.tools.parallel_(x=21) == 42
        renamed = {m.spec.name: m for m in tb.models if m.renamed_from is not None}
        assert set(renamed) == {"parallel", "atools", "llm"}
        assert "reserved/atools is atools_() in code mode" in renamed["atools"].warnings[-1]
        assert "prefix" in renamed["atools"].warnings[-1]


def test_a_program_has_both_the_tools_and_code_modes_own_names(config_path: Path) -> None:
    program = (
        "import asyncio\n"
        "pair = parallel([lambda: parallel_(x=1), lambda: atools_(name='ada')])\n"
        "async def both():\n"
        "    return await atools.parallel_(x=5)\n"
        "[pair, asyncio.run(both()), llm_(prompt='hi')]"
    )
    with Toolbox(load_config(config_path)) as tb, Executor(tb) as ex:
        result = ex.run(program)
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": [[2, "hello ada"], 10, "echo: hi"]}


def test_doctor_warns_about_each_renamed_tool(config_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "codemode_kernel.cli", "doctor", "--config", str(config_path)],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    for name in ("parallel", "atools", "llm"):
        assert (
            f"warning: reserved/{name} is {name}_() in code mode: {name} is a name code mode defines" in out
        )
