"""Starting ``codemode serve`` the way a user does, for the tests that drive it through clients.

The process gets a private home (so no user config leaks in), a config naming its servers and a
``workspace`` (so its ``.codemode/`` lands in the test's folder whatever its working directory), and over
HTTP it is stopped with Ctrl-C (SIGINT) and must exit 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from tests.conftest import free_port, wait_for_port

__all__ = ["demo_server", "serve_argv", "serve_env", "served_http", "stdio_params", "write_serve_config"]


CODE_MODE_TOOLS = ["execute_python", "wait_execution", "cancel_execution", "list_executions"]
"""What codemode serve offers besides excluded tools: a program, and the calls following one left running."""


def demo_server(name: str, *extra: str) -> dict[str, Any]:
    """A config entry running one of codemode-kernel's demo servers with this interpreter."""
    return {"command": sys.executable, "args": ["-m", f"codemode_kernel.servers.{name}", *extra]}


def write_serve_config(folder: Path, servers: dict[str, dict[str, Any]], **keys: Any) -> Path:
    """``folder/serve.json`` naming ``servers``, with ``folder`` as the workspace; makes ``folder/home``.

    ``keys`` are more top-level keys of codemode's format (``defaults``, ``models``).
    """
    (folder / "home").mkdir(exist_ok=True)
    path = folder / "serve.json"
    path.write_text(json.dumps({"mcpServers": servers, "workspace": str(folder), **keys}))
    return path


def serve_env(folder: Path) -> dict[str, str]:
    """This environment with ``folder/home`` as HOME and no config chosen by variables."""
    home = folder / "home"
    unset = ("CODEMODE_CONFIG", "XDG_CONFIG_HOME", "CODEMODE_SERVE_TOKEN")  # a token would be asked for
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    return env


def serve_argv(config: Path, *extra: str) -> list[str]:
    """The command line of ``codemode serve --config CONFIG EXTRA``."""
    return [sys.executable, "-m", "codemode_kernel.cli", "serve", "--config", str(config), *extra]


def stdio_params(folder: Path, config: Path, *extra: str) -> StdioServerParameters:
    """What an MCP client needs to start ``codemode serve`` over stdio in ``folder``, as a host does."""
    argv = serve_argv(config, *extra)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=serve_env(folder), cwd=folder)


@contextmanager
def served_http(
    folder: Path, config: Path, *extra: str, log: str = "serve.stderr.log", env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``codemode serve --transport http EXTRA`` on a free loopback port: the process and its /mcp URL.

    Its stderr goes to ``folder/LOG``, so a failure can be read after the test; ``env`` replaces
    ``serve_env(folder)``.
    """
    port = free_port()
    with (folder / log).open("wb") as errlog:
        proc = subprocess.Popen(
            serve_argv(config, "--transport", "http", "--port", str(port), *extra),
            cwd=folder,
            env=env if env is not None else serve_env(folder),
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            start_new_session=True,
        )
    try:
        wait_for_port(port, proc, timeout=60)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError("codemode serve did not stop within 15 s of SIGINT") from None
        assert code == 0, f"codemode serve exited with {code}; see {folder / log}"
