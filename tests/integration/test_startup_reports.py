"""What a user sees when servers cannot start as configured (issue 24, items 3 and 9).

Two servers that each have a tool of the same name are a configuration problem: one message naming both
servers and both fixes, exit code 2 from ``codemode run``, and no internal traceback. A server that exits
during start-up: doctor, ``%codemode status`` and the sidebar's entry show the end of its stderr (the
reason), short, printable, and without the secret the server was given.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codemode_kernel import Toolbox, load_config
from codemode_kernel.kernel.state_file import server_entry
from tests.conftest import run_cli as codemode
from tests.integration.startup_support import REASON, assert_safe_tail, exiting_server_config

pytestmark = pytest.mark.integration

LISTING_SERVER = Path(__file__).resolve().parent.parent / "servers" / "listing_server.py"


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    out = result.stdout + result.stderr
    assert "Traceback" not in out and "listener failed" not in out, out


def two_servers_sharing_search(project: Path) -> None:
    """``alpha`` and ``beta``: two real server processes, each with a tool named ``search``."""
    listing = {"tools": [{"name": "search", "inputSchema": {"type": "object"}}]}
    (project / "listing.json").write_text(json.dumps(listing))
    server = {"command": sys.executable, "args": [str(LISTING_SERVER), "listing.json"], "cwd": "."}
    (project / "conf.json").write_text(json.dumps({"mcpServers": {"alpha": server, "beta": server}}))


def assert_one_collision_message(out: str) -> None:
    assert out.count("alpha/search and beta/search") == 1, out
    assert "conf.json" in out, out  # the file to change
    assert '"prefix"' in out and '"excludedTools"' in out and "beta/search" in out, out


def run_with_two_servers_sharing_a_tool_name(project: Path) -> subprocess.CompletedProcess[str]:
    two_servers_sharing_search(project)
    return codemode("run", "--config", "conf.json", "-", cwd=project, stdin="print(1)\n")


def test_run_with_two_servers_sharing_a_tool_name_says_so_once(tmp_path: Path) -> None:
    result = run_with_two_servers_sharing_a_tool_name(tmp_path)
    assert_no_traceback(result)
    assert_one_collision_message(result.stderr)
    assert result.stdout == ""  # the program never ran
    assert result.returncode != 0


def test_run_with_two_servers_sharing_a_tool_name_exits_2(tmp_path: Path) -> None:
    result = run_with_two_servers_sharing_a_tool_name(tmp_path)
    assert result.returncode == 2, result.stderr  # configuration, not "the program raised"


def test_doctor_with_two_servers_sharing_a_tool_name_says_so_once(tmp_path: Path) -> None:
    two_servers_sharing_search(tmp_path)
    result = codemode("doctor", "--config", "conf.json", cwd=tmp_path)
    assert_no_traceback(result)
    assert_one_collision_message(result.stdout + result.stderr)
    assert result.returncode == 1


def test_doctor_shows_the_end_of_the_stderr_of_a_server_that_exits_at_start(tmp_path: Path) -> None:
    exiting_server_config(tmp_path)
    result = codemode("doctor", "--config", "conf.json", cwd=tmp_path)
    assert_no_traceback(result)
    out = result.stdout
    assert "weather [stdio]: failed" in out, out
    assert_safe_tail(out)
    assert "weather.stderr.log" in out  # where the whole log is
    assert result.returncode == 1


def test_status_and_sidebar_entry_show_the_end_of_its_stderr(tmp_path: Path) -> None:
    exiting_server_config(tmp_path)
    config = load_config(tmp_path / "conf.json")
    with Toolbox(config) as toolbox:
        toolbox.wait_for_servers()
        (status,) = toolbox.status()
    assert status.state == "failed"
    assert status.log_tail and status.log_tail[-1] == REASON, status.log_tail
    assert_safe_tail("\n".join(status.log_tail))
    entry = server_entry(status)  # what the sidebar shows as the server's error
    assert entry["error"].startswith(status.error)
    assert_safe_tail(entry["error"])
