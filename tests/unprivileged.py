"""Run a test module again as uid/gid 65534, as a kernel started by an ordinary user would run.

The hostile suites run as root in CI; the sandbox takes other paths for an unprivileged user (a user
namespace instead of root's rights), so each suite re-runs itself under uid 65534 with
``CODEMODE_HOSTILE_CHILD=1`` set (the re-running test skips itself there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

CHILD = os.environ.get("CODEMODE_HOSTILE_CHILD") == "1"
"""True inside the unprivileged re-run."""


def interpreter_for_others() -> tuple[str, list[str]]:
    """A Python that uid 65534 can run, and the path entries that give it this project's packages.

    A venv made from an interpreter under /root (pyenv) cannot be executed by another user; the system's
    python3.11 of the same version can, with the venv's site-packages and the checkout on PYTHONPATH.
    """
    real = Path(os.path.realpath(sys.executable))
    others_can_run = all(os.stat(p).st_mode & 0o001 for p in [real, *real.parents])
    repo = str(Path(__file__).resolve().parents[1])
    site_packages = [p for p in sys.path if p.endswith("site-packages")]
    if others_can_run:
        return sys.executable, [repo]
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.exists():
        pytest.fail(f"no interpreter uid 65534 may run: {real} is not readable and {system} does not exist")
    return str(system), [repo, *site_packages]


def rerun_unprivileged(test_file: str) -> subprocess.CompletedProcess[str]:
    """Run pytest on ``test_file`` as uid/gid 65534 in a home of its own; the caller checks the outcome."""
    if os.getuid() != 0:
        pytest.fail("this test drops to uid 65534 and must start as root (CI runs as root)")
    home = Path(tempfile.mkdtemp(prefix="codemode-unprivileged-"))
    os.chown(home, 65534, 65534)
    python, paths = interpreter_for_others()

    def drop() -> None:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    env = {
        k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME", "VIRTUAL_ENV")
    }
    env.update(
        HOME=str(home),
        CODEMODE_HOSTILE_CHILD="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(paths),
    )
    command = [
        python,
        "-m",
        "pytest",
        test_file,
        "-q",
        "-p",
        "no:cacheprovider",
        f"--basetemp={home / 'pytest'}",
    ]
    try:
        return subprocess.run(
            command, cwd=home, env=env, preexec_fn=drop, capture_output=True, text=True, timeout=600
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
