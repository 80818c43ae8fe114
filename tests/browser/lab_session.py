"""A JupyterLab server for browser tests, on a throwaway copy of notebooks/, isolated from this machine.

The Code Mode kernelspec is installed into a temporary prefix made visible through ``JUPYTER_PATH`` (as
tests/kernel does), and every Jupyter, JupyterLab, IPython and codemode user directory points into the
test's temporary directory, so no setting, workspace or config of this machine leaks in.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import Browser, Page

from codemode_kernel.kernel.app import install_kernel_spec

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
# Settings a user would click away: the news pop-up, and cells left out of the DOM when off screen (so
# every cell's output can be found, and shows in the screenshot).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


class LabStartError(RuntimeError):
    """The server exited or did not answer in time; the message ends with its log's tail."""


@dataclass
class Lab:
    """A running JupyterLab: where it listens, its token, its notebooks and its log."""

    url: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]

    def api(self, method: str, path: str, timeout: float = 10.0) -> Any:
        """Call the server's REST API with the token; the decoded JSON answer, or None for no body."""
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def save_log(self) -> Path:
        """Copy the server log next to the screenshots, for a failure to be read after the run."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        target = ARTIFACTS / "jupyterlab.log"
        shutil.copyfile(self.log, target)
        return target


def start_lab(base: Path, timeout: float, extra_args: Sequence[str] = ()) -> Lab:
    """Start JupyterLab on 127.0.0.1 (free port, random token) and wait until its API answers."""
    root = base / "notebooks"
    copy_notebooks_without_outputs(root)
    port, token = _free_port(), secrets.token_hex(24)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        *extra_args,
    ]
    log = base / "jupyterlab.log"
    with log.open("wb") as out:  # the child keeps its own descriptor
        process = subprocess.Popen(
            command,
            env=_lab_env(base),
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    lab = Lab(f"http://127.0.0.1:{port}", token, root, log, process)
    try:
        _wait_until_answering(lab, timeout)
    except BaseException:
        stop_lab(lab)
        raise
    return lab


def stop_lab(lab: Lab) -> None:
    """Shut the kernels down, then the server, through the API; signal its process group as a fallback.

    Kernels run in sessions of their own (jupyter_client starts them so), so killing the server's group
    alone would leave them behind until they notice their parent is gone.
    """
    try:
        shut_down_kernels(lab)
        lab.api("POST", "/api/shutdown")
        lab.process.wait(30)
    except (OSError, urllib.error.URLError, subprocess.TimeoutExpired):
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if lab.process.poll() is not None:
            break
        os.killpg(lab.process.pid, sig)
        try:
            lab.process.wait(15)
        except subprocess.TimeoutExpired:
            continue


def shut_down_kernels(lab: Lab) -> None:
    """Shut down every kernel the server runs, and the notebooks' sessions that hold them."""
    for session in lab.api("GET", "/api/sessions"):
        lab.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)
    for kernel in lab.api("GET", "/api/kernels"):
        lab.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)


def copy_notebooks_without_outputs(target: Path) -> None:
    """Copy notebooks/ with every output cleared: whatever the page shows later, this run produced."""
    shutil.copytree(ROOT / "notebooks", target, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for path in target.glob("*.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        nbformat.write(notebook, path)


def _lab_env(base: Path) -> dict[str, str]:
    """The server's environment: the kernelspec from a temp prefix, every user directory under ``base``."""
    prefix = base / "prefix"
    install_kernel_spec(prefix=str(prefix))
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": base / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "lab-workspaces",
        "XDG_CONFIG_HOME": base / "xdg-config",  # no user codemode config: the embedded demo servers
        "IPYTHONDIR": base / "ipython",
    }
    for directory in dirs.values():
        directory.mkdir(parents=True)
    for name, settings in LAB_SETTINGS.items():
        path = dirs["JUPYTERLAB_SETTINGS_DIR"] / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "JUPYTER_PATH")}
    env.update({k: str(v) for k, v in dirs.items()})
    env["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_answering(lab: Lab, timeout: float) -> None:
    """Poll the REST API until the server answers; raise with its log if it exits or never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and lab.process.poll() is None:
        try:
            lab.api("GET", "/api/status", timeout=2)
            return
        except (OSError, urllib.error.URLError):
            time.sleep(0.25)
    saved = lab.save_log()
    state = f"exited with {lab.process.returncode}" if lab.process.poll() is not None else "did not answer"
    tail = lab.log.read_text(errors="replace")[-3000:]
    raise LabStartError(f"JupyterLab {state} within {timeout:.0f} s (log: {saved}):\n{tail}")


APP_LOAD_TIMEOUT = 90_000  # ms: the first page load of JupyterLab


@contextmanager
def lab_app(browser: Browser, lab: Lab, viewport: dict[str, int], workspace: str) -> Iterator[Page]:
    """A JupyterLab page, restored and ready for commands (``window.jupyterapp``: the lab must be started
    with ``--LabApp.expose_app_in_browser=True``); closed afterwards. Loading it costs 5-20 s.

    Its layout is the JupyterLab workspace ``workspace``: a name not used before starts empty, so no tab
    that another page of the same server left open is restored in it.
    """
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    try:
        page.goto(f"{lab.url}/lab/workspaces/{workspace}?token={lab.token}", timeout=APP_LOAD_TIMEOUT)
        page.wait_for_function("() => window.jupyterapp !== undefined", timeout=APP_LOAD_TIMEOUT)
        page.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")
        yield page
    finally:
        context.close()
