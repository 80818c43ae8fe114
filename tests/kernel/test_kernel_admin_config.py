"""A Jupyter admin's kernel options: ``c.CodeModeKernel.*`` in ``codemode_kernel_config.py``, for real.

The kernel is started through jupyter_client from the installed kernelspec, with an IPython profile holding
the admin's config file (IPython reads ``<app name>_config.py`` from the profile, as for any IPython app);
the user's ``codemode.json`` must still win over what the admin set (kernel/admin.py states the order).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_session import Kernel, kernel_in

from codemode_kernel.views.display import TRACE_MIME

pytestmark = pytest.mark.integration


def admin_profile(tmp_path: Path, *lines: str) -> Path:
    """An IPython directory whose default profile holds ``codemode_kernel_config.py`` with ``lines``."""
    ipython_dir = tmp_path / "ipython"
    profile = ipython_dir / "profile_default"
    profile.mkdir(parents=True)
    (profile / "codemode_kernel_config.py").write_text("c = get_config()  # noqa\n" + "\n".join(lines) + "\n")
    return ipython_dir


def site_config(tmp_path: Path) -> Path:
    """The admin's Code Mode config: one demo server under a name of its own, so the status shows it."""
    path = tmp_path / "etc" / "codemode.json"
    path.parent.mkdir()
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    path.write_text(json.dumps({"mcpServers": {"site_weather": weather}}))
    return path


def environment(tmp_path: Path, ipython_dir: Path) -> dict[str, str | None]:
    """The kernel's environment: the admin's profile, no CODEMODE_CONFIG, no user config of this machine."""
    return {
        "IPYTHONDIR": str(ipython_dir),
        "CODEMODE_CONFIG": None,
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }


def timeout_of(kernel: Kernel, cell: str) -> tuple[str, float]:
    """The status and ``timeout_s`` of a ``%%codemode`` cell's record."""
    reply = kernel.run(cell, timeout=60)
    trace = reply.data(TRACE_MIME)[0]
    return trace["status"], trace["timeout_s"]


def test_the_admins_config_and_timeout_apply_when_the_user_has_none(
    jupyter_path: Path, tmp_path: Path
) -> None:
    config = site_config(tmp_path)
    ipython_dir = admin_profile(
        tmp_path, "c.CodeModeKernel.default_timeout = 2", f"c.CodeModeKernel.config_path = {str(config)!r}"
    )
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    with kernel_in(jupyter_path, notebooks, environment(tmp_path, ipython_dir)) as kernel:
        status = kernel.run("%codemode status", timeout=60).stream()
        assert f"config: {config} (c.CodeModeKernel.config_path" in status, status
        assert "site_weather [stdio]: ready" in status, status
        assert "timeout: 2 s per execution (c.CodeModeKernel.default_timeout)" in status, status

        assert timeout_of(kernel, "%%codemode\nget_weather(city='Oslo', unit='celsius')") == ("ok", 2.0)
        slow = kernel.run("%%codemode\nimport time\ntime.sleep(30)", timeout=60)
        assert slow.data(TRACE_MIME)[0]["status"] == "timeout"
        assert slow.elapsed < 15, f"a 2 s timeout took {slow.elapsed:.1f} s"
        assert timeout_of(kernel, "%%codemode --timeout 5\n1") == ("ok", 5.0)  # the cell's own wins


def test_the_users_codemode_json_wins_over_the_admin(jupyter_path: Path, tmp_path: Path) -> None:
    config = site_config(tmp_path)
    ipython_dir = admin_profile(
        tmp_path, "c.CodeModeKernel.default_timeout = 2", f"c.CodeModeKernel.config_path = {str(config)!r}"
    )
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    own = notebooks / "codemode.json"
    own.write_text(json.dumps({"mcpServers": {}, "defaults": {"codeMode": {"timeout": 7}}}))
    with kernel_in(jupyter_path, notebooks, environment(tmp_path, ipython_dir)) as kernel:
        status = kernel.run("%codemode status", timeout=60).stream()
        assert f"config: {own}\n" in status, status
        assert "site_weather" not in status, status
        assert "timeout: 7 s per execution (codeMode.timeout in the config)" in status, status
        assert timeout_of(kernel, "%%codemode\n1") == ("ok", 7.0)

        # A config that names no timeout: the admin's default fills it in.
        other = tmp_path / "no-timeout.json"
        other.write_text(json.dumps({"mcpServers": {}, "defaults": {"codeMode": {"grace": 1}}}))
        reloaded = kernel.run(f"%codemode reload --config {other}", timeout=60).stream()
        assert "timeout: 2 s per execution (c.CodeModeKernel.default_timeout)" in reloaded, reloaded
        assert timeout_of(kernel, "%%codemode\n1") == ("ok", 2.0)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "c.CodeModeKernel.default_timeout = 500",
            "CodeModeKernel.default_timeout: 500 seconds is outside 1 to 300",
        ),
        (
            "c.CodeModeKernel.config_path = 'codemode.json'",
            "CodeModeKernel.config_path must be an absolute path",
        ),
    ],
    ids=["timeout out of bounds", "relative config path"],
)
def test_a_bad_admin_option_stops_the_kernel_naming_the_option(
    tmp_path: Path, line: str, message: str
) -> None:
    """traitlets' validation: the kernel exits at start with the option and its bound in the log."""
    ipython_dir = admin_profile(tmp_path, line)
    env = {k: v for k, v in os.environ.items() if k != "CODEMODE_CONFIG"}
    env.update({k: v for k, v in environment(tmp_path, ipython_dir).items() if v is not None})
    done = subprocess.run(
        [sys.executable, "-m", "codemode_kernel", "-f", str(tmp_path / "kernel.json")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert message in done.stderr, done.stderr


def test_an_admin_config_path_that_is_not_a_file_is_said_not_replaced_by_the_demo(
    jupyter_path: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "etc" / "codemode.json"
    ipython_dir = admin_profile(tmp_path, f"c.CodeModeKernel.config_path = {str(missing)!r}")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    with kernel_in(jupyter_path, notebooks, environment(tmp_path, ipython_dir)) as kernel:
        first = kernel.run("1", timeout=60)
        assert first.status == "ok", first.content
        problem = first.stream("stderr")
        assert f"c.CodeModeKernel.config_path names {missing}, which is not a file" in problem, problem
        assert "fix: correct config_path in the kernel's config" in problem, problem
        assert kernel.run("print('get_weather' in dir())").stream() == "False\n"  # no demo servers
