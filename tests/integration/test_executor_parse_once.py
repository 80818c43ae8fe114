"""A program is parsed once per run, however long it waits for a server still connecting (issue 25)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.executor import Executor, references
from codemode_kernel.worker.source import PreparedCode
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

LIFECYCLE = ROOT / "tests" / "servers" / "lifecycle_server.py"


def lifecycle(*args: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(LIFECYCLE), *args]}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The sources the kernel side prepared for parsing (its names: what the program reads and binds)."""
    seen: list[str] = []
    real = references.prepare

    def counting(code: str, **options: Any) -> PreparedCode:
        seen.append(code)
        return real(code, **options)

    monkeypatch.setattr(references, "prepare", counting)
    yield seen


def test_a_session_program_waiting_for_a_slow_server_is_parsed_once(
    tmp_path: Path, parses: list[str]
) -> None:
    servers = {"good": lifecycle(), "slow": lifecycle("--initialize-delay", "4", "--prefix", "slow_")}
    config = tmp_path / "codemode.json"
    # start() returns a second or two after "good" is ready: "slow" is still connecting when the run starts.
    config.write_text(json.dumps({"mcpServers": servers, "defaults": {"startWait": 1}}))
    program = "print(slow_echo(text='late'))\nanswer = 42"
    with Toolbox.from_config(config) as tb, Executor(tb) as ex:
        assert tb.pending == ["slow"]
        result = ex.run(program, session="s", timeout=60)
        assert result.status == "ok", result
        assert result.stdout == "late\n"
        # The names it bound count for the session's next program, without parsing it again.
        assert parses.count(program) == 1, f"parsed {parses.count(program)} times"
        later = ex.run("print(answer)", session="s", timeout=60)
        assert later.stdout == "42\n", later
