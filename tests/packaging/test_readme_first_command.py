"""The README's first command makes an environment in which every shipped notebook runs.

The command is read from the README itself (its first ``bash`` block) and its install steps are run as
written, in a copy of this tree and with nothing of this machine's Python environment: a fresh venv gets
only what ``pip install -e ".[lab]"`` brings. Its last step, ``codemode lab``, would start a server that
waits for a person; instead every notebook in notebooks/ is executed on the Code Mode kernel of that venv
with ``jupyter nbconvert --execute``, as that server's kernels would run it (cells tagged
``raises-exception`` may fail; nothing else may).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
INSTALL = ["python3 -m venv .venv", '.venv/bin/pip install -e ".[lab]"']


def readme_first_command() -> list[str]:
    """The steps of the README's first ``bash`` block, split at ``&&``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```bash\n(.*?)\n```", text, re.S)
    assert match is not None, "the README has no ```bash block"
    return [step.strip() for step in match.group(1).split("&&")]


def copy_tree(target: Path) -> None:
    """This tree as a clone would have it (tracked and new files), plus the extension already built."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    # Built by the test command's install; the project's build hook skips a build that exists, so the
    # copy needs no Node (tests/packaging/test_extension_install.py builds it from source).
    shutil.copytree(ROOT / "codemode_kernel" / "labextension", target / "codemode_kernel" / "labextension")


def isolated_env(home: Path) -> dict[str, str]:
    """No venv, Jupyter or codemode setting of this machine: every user directory under ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER", "VIRTUAL_ENV", "PYTHON", "CODEMODE", "IPYTHON", "XDG_"))
    }
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if "/.venv/" not in p + "/")
    env["HOME"] = str(home)
    return env


@pytest.mark.timeout(1200)
def test_every_notebook_runs_in_the_environment_of_the_readme_s_first_command(tmp_path: Path) -> None:
    steps = readme_first_command()
    assert steps[:2] == INSTALL and steps[2].startswith(".venv/bin/codemode lab"), steps
    tree = tmp_path / "codemode-kernel"
    copy_tree(tree)
    env = isolated_env(tmp_path / "home")
    installed = subprocess.run(
        " && ".join(steps[:2]), shell=True, cwd=tree, env=env, capture_output=True, text=True, timeout=900
    )
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-3000:]

    out = tmp_path / "executed"
    execute = [".venv/bin/jupyter", "nbconvert", "--to", "notebook", "--execute", "--output-dir", str(out)]
    failed = {}
    for name in NOTEBOOKS:
        ran = subprocess.run(
            [*execute, "--ExecutePreprocessor.timeout=300", f"notebooks/{name}"],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if ran.returncode != 0:
            failed[name] = ran.stderr[-1500:]
    assert not failed, "\n\n".join(f"{name}:\n{tail}" for name, tail in failed.items())
    assert sorted(path.name for path in out.glob("*.ipynb")) == NOTEBOOKS
