"""``codeMode.maxTimeout`` in the notebook: ``%%codemode --timeout`` follows the config's maximum (issue 27).

A real kernel through jupyter_client, with the user's config named by ``CODEMODE_CONFIG`` (a file the user
chose needs no trust; a project file raising the maximum would).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, kernel_in

from codemode_kernel.views.display import TRACE_MIME

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}


@pytest.fixture(scope="module")
def long_kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A kernel whose config allows programs of up to 1800 s."""
    folder = tmp_path_factory.mktemp("long")
    config = folder / "long.json"
    config.write_text(
        json.dumps({"mcpServers": {"weather": WEATHER}, "defaults": {"codeMode": {"maxTimeout": 1800}}})
    )
    env = {"CODEMODE_CONFIG": str(config), "XDG_CONFIG_HOME": str(folder / "xdg")}
    with kernel_in(jupyter_path, folder, env) as kernel:
        yield kernel


def test_a_cell_timeout_above_the_configs_maximum_is_refused_naming_it(long_kernel: Kernel) -> None:
    status = long_kernel.run("%codemode status", timeout=60).stream()
    assert "defaults.codeMode.maxTimeout: programs may run up to 1800 s" in status, status
    for given, allowed in (("2000", True), ("4000", False)):
        reply = long_kernel.run(f"%%codemode --timeout {given}\nprint('ran')", timeout=60)
        assert reply.status == "error" and reply.content["ename"] == "UsageError", reply.content
        evalue = reply.content["evalue"]
        assert f"--timeout: {given} seconds is outside 1 to 1800; " in evalue
        assert ("maxTimeout to 2000 or more (up to 3600)" in evalue) == allowed, evalue
        assert "ran" not in reply.stream()


def test_a_cell_may_ask_for_more_than_300_s_when_the_config_allows_it(long_kernel: Kernel) -> None:
    reply = long_kernel.run("%%codemode --timeout 1200\n1 + 1", timeout=60)
    assert reply.status == "ok", reply.content
    trace = reply.data(TRACE_MIME)[0]
    assert (trace["status"], trace["timeout_s"]) == ("ok", 1200)
