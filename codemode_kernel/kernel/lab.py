"""``codemode lab``: register the kernel in this environment and start JupyterLab on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import os
import secrets
import socket
import sys
from pathlib import Path

from .app import KERNEL_NAME, install_kernel_spec, kernel_json

__all__ = ["LAB_MISSING", "ensure_kernel_spec", "lab_command", "run_lab"]

LAB_MISSING = 'JupyterLab is not installed here: pip install "codemode-kernel[lab]"'


def ensure_kernel_spec() -> str:
    """The ``codemode`` kernelspec's directory, installed into ``sys.prefix`` unless it is this one.

    "This one" is the whole command line: an older spec that starts the kernel without ``-P`` (with the
    notebook's folder first on its import path) is replaced.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
        if spec.argv == kernel_json(sys.executable)["argv"]:
            return str(spec.resource_dir)
    except NoSuchKernel:
        pass
    return install_kernel_spec(prefix=sys.prefix)


def lab_command(port: int, token: str, root: Path, *, browser: bool) -> list[str]:
    """The JupyterLab command line: local only, on ``root``, with the given port and token."""
    command = [
        sys.executable,
        "-P",  # the working directory (notebooks programs may write) stays off the server's import path
        "-m",
        "jupyterlab",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    if not browser:
        command.append("--no-browser")
    if os.geteuid() == 0:  # containers run as root; the server still listens on 127.0.0.1 only
        command.append("--allow-root")
    return command


def run_lab(port: int | None, *, browser: bool, root: Path | None = None) -> int:
    """Install the kernelspec if needed, print the URL, and replace this process with JupyterLab."""
    if importlib.util.find_spec("jupyterlab") is None:
        print(f"codemode: {LAB_MISSING}", file=sys.stderr)
        return 1
    if root is None:
        root = Path("notebooks") if Path("notebooks").is_dir() else Path.cwd()
    root = root.resolve()
    path = ensure_kernel_spec()
    port = port or _free_port()
    token = secrets.token_hex(24)
    print(f"kernel: {KERNEL_NAME} ({path})")
    print(f"notebooks: {root}")
    print(f"JupyterLab: http://127.0.0.1:{port}/lab?token={token}", flush=True)
    command = lab_command(port, token, root, browser=browser)
    os.execv(command[0], command)
    return 0  # not reached


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
