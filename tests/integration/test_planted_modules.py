"""A program plants Python modules in the workspace; nothing outside the sandbox imports them.

Programs may write the workspace, and the host's processes start there: the CLI, the pre-started worker
process, the demo servers. ``python -m``/``-c`` would put that directory first on ``sys.path``, so a planted
``codemode_kernel/`` ran, unsandboxed, at the next start. Each planted module here writes a marker file
outside the workspace (where a program cannot write) when it is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

PLANTED = ("codemode_kernel", "mcp", "jsonschema", "anyio")
"""The package itself, and what the kernel side, the zygote and the servers import at start."""


def planting_program(markers: Path) -> str:
    """A program that plants each of PLANTED in its working directory (the workspace)."""
    return f"""
import os
for name in {PLANTED!r}:
    os.makedirs(name, exist_ok=True)
    with open(os.path.join(name, "__init__.py"), "w") as f:
        f.write("open({str(markers)!r} + '/' + __name__, 'w').write('ran outside the sandbox')\\n")
sorted(os.listdir("."))
"""


def codemode(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The installed ``codemode`` script, as a user runs it (not ``python -m``, which tests the test)."""
    script = Path(sys.executable).with_name("codemode")
    env = {
        k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME", "PYTHONPATH")
    }
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    return subprocess.run([str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=150)


def test_modules_a_program_plants_do_not_run_at_the_next_codemode_run(tmp_path: Path) -> None:
    workspace, home, markers = tmp_path / "workspace", tmp_path / "home", tmp_path / "markers"
    for path in (workspace, home, markers):
        path.mkdir()
    (workspace / "plant.py").write_text(planting_program(markers))
    first = codemode("run", "plant.py", cwd=workspace, home=home)
    assert first.returncode == 0, first.stderr
    assert (workspace / "codemode_kernel" / "__init__.py").is_file()  # the program could write them

    # The next run starts the CLI, the demo servers and the pre-started worker in that workspace.
    (workspace / "forecast.py").write_text('get_weather(city="Oslo", unit="celsius").temperature')
    second = codemode("run", "forecast.py", "--json", cwd=workspace, home=home)
    assert second.returncode == 0, second.stderr
    assert sorted(os.listdir(markers)) == []


def test_a_program_still_imports_its_own_modules_from_the_workspace(tmp_path: Path) -> None:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (workspace / "prog.py").write_text("import helpers\nprint(helpers.double(21))\n")
    result = codemode("run", "prog.py", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert "42" in result.stdout
