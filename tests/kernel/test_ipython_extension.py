"""``%load_ext codemode_kernel`` in plain (terminal) IPython: the tools, a program, a clean exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
CELLS = [
    "%load_ext codemode_kernel",
    'get_weather(city="Oslo", unit="celsius").temperature',
    'get_ipython().run_cell_magic("codemode", "", "get_weather(city=\'Lima\', unit=\'celsius\').city")',
    "exit",
]


def _processes_in(directory: Path) -> list[str]:
    """Command lines of the processes whose working directory is ``directory`` (what we left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == directory:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def test_load_ext_in_terminal_ipython_works_and_exits_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER}}))
    env = {
        **os.environ,
        "CODEMODE_CONFIG": str(tmp_path / "codemode.json"),
        "IPYTHONDIR": str(tmp_path / ".ipython"),
    }
    session = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--simple-prompt", "--colors=NoColor"],
        input="\n".join(CELLS) + "\n",
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = session.stdout + session.stderr
    assert "Out[2]: 6.1" in session.stdout, output
    assert "codemode: ok, 1 tool call\nvalue: 'Lima'" in session.stdout, output
    assert session.returncode == 0, output
    # What the user saw at exit: nothing (it used to be "cannot schedule new futures after shutdown").
    assert "Traceback" not in output and "Exception ignored" not in output, output
    assert "Task was destroyed" not in output, output
    assert _processes_in(tmp_path) == []  # the worker process and the server stopped with IPython
