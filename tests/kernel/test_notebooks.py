"""Every notebook in notebooks/ runs on the Code Mode kernel under nbval and matches its stored outputs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_notebook_matches_its_stored_outputs(notebook: Path, jupyter_path: Path, tmp_path: Path) -> None:
    copy = tmp_path / notebook.name  # the notebook writes files next to itself: not into the repository
    shutil.copy(notebook, copy)
    env = {**os.environ, "JUPYTER_PATH": str(jupyter_path)}
    command = [sys.executable, "-m", "pytest", "--nbval", str(copy), "-q", "-p", "no:cacheprovider"]
    command += ["--nbval-sanitize-with", str(Path(__file__).with_name("nbval_sanitize.cfg"))]
    command += ["--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
