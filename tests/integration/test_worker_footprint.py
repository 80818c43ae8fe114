"""What a prepared worker holds when its program starts: few modules, little memory.

Read by a program in a real worker, as ``bench/executor.py`` reads it. Both numbers are deterministic
enough to hold a line: a module the worker side starts importing up front shows here at once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor
from codemode_kernel.typegen.search import DEFAULT_LIMIT
from codemode_kernel.worker import tools_module

pytestmark = pytest.mark.integration

MODULES_UNDER = 150
"""Issue 25's target, 149 today (172 before it): a new module a worker loads up front fails this test; make
it load where it is used, as search_tools' ranking, concurrent.futures, logging and the version do. What
is left comes with what a worker needs before its program runs: the sandbox (pathlib, which brings
urllib.parse, ipaddress, ntpath and fnmatch; glob, for the ``/tmp/ssh-*`` pattern among the hidden paths;
ctypes), ``dataclasses`` (inspect, dis, ast, tokenize), ``socket`` (selectors, array) and the records inside
frames (``core/records.py``: protocol.py's TypedDicts are made with them)."""
RSS_MIB_UNDER = 25.0

FOOTPRINT = """
import sys
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
{"modules": sorted(sys.modules), "rss_kib": int(status["VmRSS"].split()[0])}
"""


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    path = tmp_path_factory.mktemp("ws")
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    (path / "codemode.json").write_text(json.dumps({"mcpServers": {"weather": weather}}))
    with Toolbox(load_config(path / "codemode.json", cwd=path)) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


def test_a_prepared_worker_starts_a_program_with_few_modules_and_little_memory(executor: Executor) -> None:
    executor.run("pass")  # the workers prepared after the first run are the ones a user meets
    result = executor.run(FOOTPRINT)
    assert result.status == "ok", result.error
    assert result.value is not None
    seen = result.value["data"]
    modules: list[str] = seen["modules"]
    assert len(modules) < MODULES_UNDER, modules
    # Loaded by the programs that use them, not by every worker.
    lazy = {"concurrent.futures", "logging", "queue", "traceback", "base64", "datetime", "asyncio"}
    lazy.add("codemode_kernel.typegen.search")  # search_tools' ranking
    assert not lazy & set(modules)
    assert seen["rss_kib"] / 1024 < RSS_MIB_UNDER


def test_search_tools_states_the_rankings_default_limit() -> None:
    # tools_module states it rather than importing it, which would load the ranking into every worker.
    assert tools_module._SEARCH_LIMIT == DEFAULT_LIMIT
