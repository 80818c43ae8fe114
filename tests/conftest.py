"""Shared fixtures: where the real third-party servers live, and config builders."""

from __future__ import annotations

import functools
import os
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

if TYPE_CHECKING:
    from tests.oauth_support import OAuthServer

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
QUIRKY = ROOT / "tests" / "servers" / "quirky_server.py"


# Under pytest-xdist (scripts/test.sh runs ``-n 4 --dist loadscope --no-loadscope-reorder``) each worker
# takes whole modules, so a module's fixtures (a kernel, a JupyterLab) start once; the longest suites go
# first so none is left running alone at the end, and short unit tests fill the gaps.
_SUITE_ORDER = ("packaging", "browser", "cluster", "kernel", "integration", "server", "unit")
_ONE_UNIT = ("tests/browser/", "tests/cluster/")
"""Suites that share one expensive fixture across their modules (a JupyterLab, a Ray cluster): each runs
on one pytest-xdist worker."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow suites first (a stable sort: the order inside a suite stays as collected)."""

    def rank(item: pytest.Item) -> int:
        parts = Path(str(item.path)).relative_to(ROOT).parts
        suite = parts[1] if len(parts) > 2 and parts[0] == "tests" else ""
        return _SUITE_ORDER.index(suite) if suite in _SUITE_ORDER else len(_SUITE_ORDER)

    items.sort(key=rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """loadscope, except that each suite of ``_ONE_UNIT`` is one unit (one JupyterLab, one Ray cluster)."""
    if config.getoption("dist", None) != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            suite = next((s for s in _ONE_UNIT if nodeid.startswith(s)), None)
            return suite if suite is not None else super()._split_scope(nodeid)

    return SuiteScopes(config, log)


def run_cli(
    *args: str,
    cwd: Path,
    home: Path | None = None,
    stdin: str | bytes | None = None,
    timeout: float = 150,
    memory_mb: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``codemode ARGS`` as a user would, in ``cwd``, with a home of its own (``cwd/home`` by default).

    ``stdin`` may be bytes (a program that is not UTF-8); the output is decoded either way, bad bytes
    replaced, so a test can read what the user would see. ``memory_mb``: the address space of the CLI and
    everything it starts (RLIMIT_AS), so that a runaway fails with a MemoryError, not the machine.
    """
    if home is None:
        home = cwd / "home"
        home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    done = subprocess.run(
        # -P, as the installed ``codemode`` script: the working directory is not on the CLI's import path.
        [sys.executable, "-P", "-m", "codemode_kernel.cli", *args],
        cwd=cwd,
        env=env,
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=timeout,
        preexec_fn=None if memory_mb is None else functools.partial(_limit_memory, memory_mb),
    )
    stdout, stderr = (stream.decode(errors="replace") for stream in (done.stdout, done.stderr))
    return subprocess.CompletedProcess(done.args, done.returncode, stdout, stderr)


def _limit_memory(memory_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))


def require_executable(path: Path | str) -> str:
    """The path of a test server's executable; fails loudly (never skips) when setup did not install it."""
    found = shutil.which(str(path))
    if found is None:
        pytest.fail(f"{path} is missing: run scripts/test.sh, which installs the test servers (npm and PyPI)")
    return found


@pytest.fixture(scope="session")
def everything_bin() -> str:
    return require_executable(NODE_BIN / "mcp-server-everything")


@pytest.fixture(scope="session")
def memory_server_bin() -> str:
    """server-memory from npm: a knowledge graph whose delete_* tools say destructiveHint: true."""
    return require_executable(NODE_BIN / "mcp-server-memory")


@pytest.fixture(scope="session")
def time_server_bin() -> str:
    return require_executable(Path(sys.executable).parent / "mcp-server-time")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(read: Callable[[], T], done: Callable[[T], bool], timeout: float = 20.0) -> T:
    """Read ``read()`` until ``done`` says it is what the test waits for, or ``timeout`` passes; returns the
    last reading either way, so the test's own assertion reports it. For what another thread or process
    writes soon after the event the test saw (a log line, a state file): a loaded machine delays it."""
    deadline = time.monotonic() + timeout
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.02)
        value = read()
    return value


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listened on port {port} within {timeout} s")


@pytest.fixture
def http_server() -> Iterator[callable]:  # type: ignore[valid-type]
    """Start a server process listening on a free port; yields a starter returning the port."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], port: int, env: dict[str, str] | None = None) -> int:
        proc = subprocess.Popen(
            argv,
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        procs.append(proc)
        wait_for_port(port, proc)
        return port

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def oauth_server() -> Iterator[OAuthServer]:
    """The OAuth test server (tests/oauth_support.py: the SDK's server auth), one process per module."""
    from tests.oauth_support import OAuthServer  # it imports this module's helpers

    server = OAuthServer()
    yield server
    server.stop()
