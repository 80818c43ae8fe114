"""Inferred result shapes in the kernel: a cell's calls type the next cell's functions, and a new kernel in
the same workspace finds them in .codemode/ (PyPI mcp-server-git, which publishes no outputSchema)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernel_session import configured_kernel

from tests.conftest import require_executable

SIGNATURE = """\
import inspect
print(inspect.signature(git_status).return_annotation)
print(git_status.__doc__)
"""


def make_workspace(path: Path) -> Path:
    repo = path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "todo.txt").write_text("untracked\n")
    git_bin = require_executable(Path(sys.executable).parent / "mcp-server-git")
    config = {
        "mcpServers": {"git": {"command": git_bin, "args": ["--repository", str(repo)]}},
        "workspace": str(path),
    }
    (path / "codemode.json").write_text(json.dumps(config))
    return path / "codemode.json"


def test_a_cells_calls_type_the_next_cells_functions_and_programs(jupyter_path: Path, tmp_path: Path) -> None:
    """One kernel: a call in one cell, the result type in the next cell's function and in a program's
    tool_schema(); the shape is in the workspace's .codemode/ for the next kernel (a new Toolbox starting
    with it is tests/integration/test_inferred_shapes.py)."""
    config = make_workspace(tmp_path)
    with configured_kernel(jupyter_path, tmp_path, config) as kernel:
        before = kernel.run(SIGNATURE)
        assert before.status == "ok", before.content
        assert before.stream().startswith("typing.Any\n")
        called = kernel.run(f"print(git_status(repo_path={str(tmp_path / 'repo')!r}))")
        assert "todo.txt" in called.stream()
        after = kernel.run(SIGNATURE)  # the next cell: its functions carry the shape
        assert after.stream().startswith("<class 'str'>\n"), after.stream()
        assert "str, inferred from 1 call (no outputSchema)" in after.stream()
        program = kernel.run('%%codemode\nprint(tool_schema("git_status")["inferred_output"])')
        assert "{'calls': 1, 'schema': {'type': 'string'}}" in program.stream(), program.messages
    stored = json.loads((tmp_path / ".codemode" / "shapes.json").read_text())
    assert [(e["server"], e["tool"], e["calls"]) for e in stored["tools"]] == [("git", "git_status", 1)]
