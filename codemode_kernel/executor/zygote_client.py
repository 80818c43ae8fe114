"""The kernel's handle on the pre-started worker process (the zygote): start it, spawn, see exits."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.errors import ProtocolError, ZygoteError
from ..worker.protocol import (
    ExitMessage,
    SpawnMessage,
    ZygoteEvent,
    ZygoteSetup,
    check_zygote_event,
    encode_control,
)

__all__ = ["WORKER_ENV_ALLOWLIST", "WorkerExit", "Zygote", "ZygoteError"]

WORKER_ENV_ALLOWLIST = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
)
"""Environment variables a worker inherits; everything else (tokens, keys, cloud settings) stays out."""

_ZYGOTE_MAIN = "from codemode_kernel.worker.zygote import main; main()"
"""How the zygote starts: ``-c`` rather than ``-m``, which would load runpy into every worker and run the
module as ``__main__`` (a second copy of it beside the one the package imports). Always with ``-P``: the
zygote imports before any sandbox, in the workspace, which programs write; ``-c`` alone would put that
directory first on ``sys.path`` and run a ``codemode_kernel/`` a program planted there."""
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 5.0  # the zygote kills and reaps its workers before it exits (about 3 s at the most)


class WorkerExit:
    """How a worker process ended: an exit code or a signal number."""

    def __init__(self, code: int | None, signal_number: int | None) -> None:
        self.code = code
        self.signal = signal_number

    def describe(self) -> str:
        """``killed by SIGKILL`` / ``exited with code 3``."""
        if self.signal is not None:
            import signal as signals

            try:
                name = signals.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"killed by {name}"
        return f"exited with code {self.code}"


def worker_environment(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The scrubbed environment the zygote (and so every worker) runs with."""
    env = os.environ if source is None else source
    kept = {name: env[name] for name in WORKER_ENV_ALLOWLIST if name in env}
    # Under the address-space cap every thread counts: one BLAS thread, and two malloc arenas instead of
    # one 64 MiB reservation per thread (read by the C library when the process starts).
    kept.update(
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        MALLOC_ARENA_MAX="2",
        PYTHONUNBUFFERED="1",
        # setuptools' .pth imports _distutils_hack into every interpreter unless told not to; a worker has
        # no use for its distutils shim (the variable is not in a program's scrubbed environment).
        SETUPTOOLS_USE_DISTUTILS="stdlib",
    )
    # Python's start-up finds the user's site directory from HOME, or else imports pwd to read the password
    # database: the same directory either way, one module fewer in every worker. A program never sees this
    # HOME: the sandbox points HOME at the run's private temp dir.
    if "HOME" in env:
        kept["HOME"] = env["HOME"]
    return kept


class Zygote:
    """A running zygote process and its control socket, used from one event loop."""

    def __init__(self, process: subprocess.Popen[bytes], control: socket.socket, log_path: Path) -> None:
        self.process = process
        self.control = control
        self.log_path = log_path
        self._ids = itertools.count(1)
        self._spawns: dict[int, asyncio.Future[int]] = {}
        self._exits: dict[int, asyncio.Future[WorkerExit]] = {}
        self._early_exits: dict[int, WorkerExit] = {}
        self._reader: asyncio.Task[None] | None = None
        self.dead: str | None = None
        self.capabilities: dict[str, Any] = {}

    @classmethod
    async def start(
        cls, *, tools: Iterable[dict[str, Any]], preload: Iterable[str], state_dir: Path, cwd: Path
    ) -> Zygote:
        """Start the process, send it its setup and wait until it is ready."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        state_dir.mkdir(parents=True, exist_ok=True)
        log_path = state_dir / "zygote.stderr.log"
        setup = json.dumps(ZygoteSetup(tools=list(tools), preload=list(preload))).encode()
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-P", "-c", _ZYGOTE_MAIN, "--control-fd", str(theirs.fileno())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=log,
                pass_fds=(theirs.fileno(),),
                env=worker_environment(),
                cwd=cwd,
                start_new_session=True,
            )
        theirs.close()
        assert process.stdin is not None
        process.stdin.write(setup)
        process.stdin.close()
        ours.setblocking(False)
        zygote = cls(process, ours, log_path)
        try:
            ready = await asyncio.wait_for(zygote._receive(), _START_TIMEOUT)
        except (TimeoutError, OSError, ValueError, ProtocolError) as exc:
            zygote.stop()
            raise ZygoteError(f"the worker process did not start ({exc}); see {log_path}") from exc
        except BaseException:  # cancelled while it starts (an interrupt, a client giving up): end it now
            zygote.kill()
            raise
        if ready is None or ready["type"] != "ready":
            zygote.stop()
            raise ZygoteError(f"the worker process failed while starting; see {log_path}")
        zygote.capabilities = dict(ready["capabilities"])
        zygote._reader = asyncio.get_running_loop().create_task(zygote._read_loop())
        return zygote

    async def spawn(
        self, channel: socket.socket, policy: dict[str, Any]
    ) -> tuple[int, asyncio.Future[WorkerExit]]:
        """Fork a worker confined by ``policy`` that talks over ``channel`` (the worker's end).

        Returns its pid (the leader of its process group) and a future of how it exited.
        """
        if self.dead is not None:
            raise ZygoteError(f"the worker process is gone ({self.dead}); see {self.log_path}")
        request_id = next(self._ids)
        spawned: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._spawns[request_id] = spawned
        packet = encode_control(SpawnMessage(type="spawn", id=request_id, policy=policy))
        socket.send_fds(self.control, [packet], [channel.fileno()])
        pid = await asyncio.wait_for(spawned, 10.0)
        exited = self._exits.setdefault(pid, asyncio.get_running_loop().create_future())
        if pid in self._early_exits and not exited.done():
            exited.set_result(self._early_exits.pop(pid))
        return pid, exited

    def kill(self) -> None:
        """End the zygote at once (SIGKILL to its process group) and close the control socket."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.control.close()
        self.process.wait()

    def stop_reading(self) -> None:
        """Stop reading the control socket; call it on the loop that reads it, before ``stop``."""
        if self._reader is not None:
            self._reader.cancel()

    def stop(self) -> None:
        """Ask the zygote to exit (it ends and reaps its workers first), make sure it does, and reap it.

        It blocks (up to a few seconds), so it may run on a thread; ``stop_reading`` comes first, on the loop.
        """
        with contextlib.suppress(OSError):
            self.control.send(encode_control(ExitMessage(type="exit")))
        self.control.close()
        try:
            self.process.wait(timeout=_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    async def _receive(self) -> ZygoteEvent | None:
        """The zygote's next control message (checked), or None when it closed the socket."""
        data = await asyncio.get_running_loop().sock_recv(self.control, 65536)
        if not data:
            return None
        return check_zygote_event(data)

    async def _read_loop(self) -> None:
        try:
            while (message := await self._receive()) is not None:
                self._dispatch(message)
            self.dead = "it closed its control socket"
        except (OSError, ValueError, ProtocolError) as exc:
            self.dead = f"its control socket failed: {exc}"
        futures: list[asyncio.Future[Any]] = [*self._spawns.values(), *self._exits.values()]
        for future in futures:
            if not future.done():
                future.set_exception(ZygoteError(f"the worker process is gone ({self.dead})"))

    def _dispatch(self, message: ZygoteEvent) -> None:
        if message["type"] == "spawned":
            future = self._spawns.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message["pid"])
        elif message["type"] == "failed":
            failed = self._spawns.pop(message["id"] or 0, None)
            if failed is not None and not failed.done():
                failed.set_exception(ZygoteError(message["error"]))
        elif message["type"] == "exited":
            pid = message["pid"]
            status = WorkerExit(message.get("code"), message.get("signal"))
            exit_future = self._exits.pop(pid, None)
            if exit_future is None:
                self._early_exits[pid] = status  # exited before spawn() saw its pid
            elif not exit_future.done():
                exit_future.set_result(status)
