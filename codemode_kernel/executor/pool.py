"""WorkerPool: sandboxed workers ready for programs, forked by the zygote of the current tool set.

Entering the sandbox costs a few milliseconds per worker (namespaces, mounts, a second fork), so workers
are prepared ahead (``SPARES`` of them, so that runs that follow each other at once still find one ready),
and an execution only has to send one the program. Used ones are replaced as soon as a run ends. The
zygote is started again when the tools change (its ``tools`` module is built for one tool set).

What the zygote is started with and the policy workers are confined by come from a ``WorkerSource``: the
kernel's (``LocalWorkers``: its tools, config and sandbox settings), or, on a Ray node, what the kernel sent
(``executor/cluster/node.py``), so a node prepares its workers the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..config import CodeModeSettings, user_config_dir
from ..config.footprint import run_files
from ..config.models import ExecutorResources
from ..toolbox import Toolbox
from ..worker.protocol import ProtectionsFrame, ProtocolError, check_worker_frame, peek_frame
from ..worker.sandbox import SandboxPolicy, default_hidden_paths
from .host_paths import host_code, jupyter_secrets
from .zygote_client import WorkerExit, Zygote, ZygoteError

__all__ = [
    "PROJECT_CONFIG_NAMES",
    "LocalWorkers",
    "Pool",
    "Worker",
    "WorkerHandle",
    "WorkerPool",
    "WorkerSource",
    "ZygotePlan",
    "cpu_limit",
    "kill_group",
    "off_loop",
]

PROJECT_CONFIG_NAMES = ("codemode.json", ".mcp.json", ".vscode")
"""Project configs the kernel could read from a workspace: hidden from workers, loaded or not."""

SPARES = 2
"""Workers kept prepared: two runs in a row (a model's program, then its quick follow-up) both find one."""
_REFILL_DELAY = 0.01
"""Seconds after a run before a used worker is replaced while another is still prepared: a run that
follows at once then has the CPU to itself (preparing one takes a few milliseconds of it)."""
_WARM_WAIT = 15.0  # seconds shut_down() waits for a zygote that is still starting
_REPORT_WAIT = 30.0  # seconds a new worker may take to enter its sandbox and report its protections


@dataclass
class Worker:
    """A forked, sandboxed worker waiting for its program on ``sock``."""

    pid: int
    exited: asyncio.Future[WorkerExit]
    sock: socket.socket
    tmp_dir: Path
    version: int
    node: str | None = None
    """Where it runs: None for this machine (a Ray node's id for a ``RemoteWorker``)."""
    lost: str | None = None
    """Why its node went away while it ran (never, on this machine)."""

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The run's channel to the worker (its first frame is the protections report)."""
        return await asyncio.open_unix_connection(sock=self.sock, limit=1 << 20)

    def signal(self, number: int) -> None:
        """Send a signal to the worker's process group (SIGINT at the deadline, SIGKILL after the grace)."""
        kill_group(self.pid, number)

    def discard(self) -> None:
        """Kill it (and whatever it started) and remove its temp dir."""
        kill_group(self.pid, signal.SIGKILL)
        self.sock.close()
        shutil.rmtree(self.tmp_dir, ignore_errors=True)

    def release(self) -> None:
        """After its run (the process is killed by then): remove its temp dir, off the loop if one runs."""
        try:
            asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, self.tmp_dir, True)
        except RuntimeError:  # no loop (closing): here and now
            shutil.rmtree(self.tmp_dir, True)


class WorkerHandle(Protocol):
    """A worker prepared for one run, here (``Worker``) or on a Ray node (``cluster.pool.RemoteWorker``)."""

    lost: str | None

    @property
    def pid(self) -> int:
        """Its pid (on its node, for a remote one)."""
        ...

    @property
    def exited(self) -> asyncio.Future[WorkerExit]:
        """How it ended, once it has."""
        ...

    @property
    def version(self) -> int:
        """The tool set version it was made for."""
        ...

    @property
    def node(self) -> str | None:
        """The Ray node it runs on; None on this machine."""
        ...

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The run's channel (its first frame is the protections report)."""
        ...

    def signal(self, number: int) -> None:
        """SIGINT or SIGKILL to the worker's process group."""
        ...

    def discard(self) -> None:
        """End it now, whatever it is doing."""
        ...

    def release(self) -> None:
        """Clean up after its run, which has ended."""
        ...


class Pool(Protocol):
    """Where an Executor's workers come from: this machine's zygote, or a Ray cluster's nodes."""

    closing: bool

    @property
    def started(self) -> bool:
        """Whether there is anything to stop."""
        ...

    async def take(self, resources: ExecutorResources | None = None) -> WorkerHandle:
        """A worker prepared for one run (``resources``: what it reserves on a cluster)."""
        ...

    def prepare_next(self) -> None:
        """Prepare workers for the runs to come (after a run, when it no longer competes for the CPU)."""
        ...

    def warm(self) -> Coroutine[Any, Any, None]:
        """Start what the first run would wait for."""
        ...

    async def protections(self) -> ProtectionsFrame:
        """What a worker applies on entering its sandbox."""
        ...

    def is_current(self, worker: WorkerHandle) -> bool:
        """Whether ``worker`` was made for the tools the hub has now."""
        ...

    async def shut_down(self) -> None:
        """End every worker and whatever keeps them prepared."""
        ...

    async def status(self) -> dict[str, Any] | None:
        """A cluster's nodes, workers and queue; None on this machine."""
        ...

    async def gone(self) -> str | None:
        """Why the workers' cluster is gone; None while it answers (always, on this machine)."""
        ...

    def stall(self) -> str:
        """What the last run that found no worker in time was waiting on, for its error."""
        ...


@dataclass(frozen=True)
class ZygotePlan:
    """What a zygote is started with: the tools its ``tools`` module is built for, and where it runs."""

    tools: list[dict[str, Any]]
    preload: tuple[str, ...]
    state_dir: Path
    """Where its stderr log goes (a hidden ``.codemode`` directory)."""
    cwd: Path


class WorkerSource(Protocol):
    """What a pool's zygote runs and how its workers are confined."""

    @property
    def version(self) -> int:
        """The tool set's version now: a worker or zygote made for another one is replaced."""
        ...

    def zygote_plan(self) -> ZygotePlan:
        """The zygote to start for the current version."""
        ...

    def policy(self) -> dict[str, Any]:
        """The sandbox policy of every worker as ``SandboxPolicy.to_dict()``, less its ``tmp_dir``."""
        ...


class WorkerPool:
    """Workers from one source, all confined by the same policy; used on one event loop."""

    def __init__(self, source: WorkerSource) -> None:
        self.source = source
        self.closing = False
        self._zygote: Zygote | None = None
        self._version = -1
        self._spares: list[Worker] = []
        self._preparing: set[asyncio.Task[None]] = set()
        self._warming: asyncio.Task[Any] | None = None
        self._warm_requested = False
        self._lock: asyncio.Lock | None = None
        self._policy_base: tuple[int, dict[str, Any]] | None = None

    @property
    def started(self) -> bool:
        """Whether the zygote runs, or is starting (``warm()`` was called): then there is work to stop."""
        return self._zygote is not None or self._warm_requested

    @property
    def spares(self) -> list[Worker]:
        """The workers prepared ahead now (each waits for a program)."""
        return list(self._spares)

    @property
    def zygote_pid(self) -> int | None:
        """The pid of the pre-started process (for diagnostics and benchmarks)."""
        return self._zygote.process.pid if self._zygote is not None else None

    async def take(self, resources: ExecutorResources | None = None) -> Worker:
        """A sandboxed worker waiting for its program: the one prepared ahead if fresh, else a new one.

        ``resources`` are a cluster's concern: this machine's workers are limited by their sandbox.
        """
        self.closing = False
        zygote = await self._current_zygote()
        while self._spares:
            spare = self._spares.pop(0)  # the oldest first: it has had the most time to settle
            if spare.version == self._version and not spare.exited.done():
                return spare
            spare.discard()
        return await self._spawn(zygote)

    def prepare_next(self) -> None:
        """Start preparing workers until ``SPARES`` are ready or on their way.

        Called after a run: during one, the work would compete with it for the CPU.
        """
        while not self.closing and len(self._spares) + len(self._preparing) < SPARES:
            delay = _REFILL_DELAY if self._spares else 0.0  # none left: the next run waits for this one
            task = asyncio.ensure_future(self._prepare_spare(delay))
            self._preparing.add(task)
            task.add_done_callback(self._preparing.discard)

    def warm(self) -> Coroutine[Any, Any, None]:
        """Start the zygote and prepare a worker, so that the first run does not wait for them.

        Marks the pool as started at once, in the caller's thread: a ``close()`` that follows before the
        returned coroutine runs must still stop what it starts.
        """
        self._warm_requested = True
        return self._warm()

    async def _warm(self) -> None:
        if self.closing:
            return
        self._warming = asyncio.current_task()
        with contextlib.suppress(Exception):  # a failure shows, with its reason, on the first run
            await self._current_zygote()
            if self.closing:  # closed while it started
                await self._stop_zygote()
                return
            self.prepare_next()

    async def protections(self) -> ProtectionsFrame:
        """What a worker applied on entering its sandbox: the report of the worker prepared ahead.

        That report is the first frame on a worker's channel (the one a run's ``protections`` come from);
        it is peeked at, not read, so the worker stays prepared for the next run. One is prepared now if
        there is none. Raises ZygoteError when no worker starts or one could not enter its sandbox.
        """
        worker = await self.take()
        zygote = await self._current_zygote()
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(None, peek_frame, worker.sock, _REPORT_WAIT)
        except (OSError, ProtocolError, TimeoutError) as exc:
            worker.discard()
            raise ZygoteError(
                f"a worker did not report its protections ({exc}); see {zygote.log_path}"
            ) from exc
        except BaseException:
            worker.discard()
            raise
        try:
            frame = check_worker_frame(report) if report is not None else None
        except ProtocolError as exc:
            worker.discard()
            raise ZygoteError(f"a worker sent a report that is not one ({exc})") from exc
        if frame is None or frame["type"] != "protections":
            worker.discard()
            error = frame["error"] if frame is not None and frame["type"] == "done" else None
            reason = error["message"] if error else "it closed its channel"
            raise ZygoteError(f"a worker could not enter its sandbox: {reason}")
        if len(self._spares) < SPARES and not self.closing:
            self._spares.insert(0, worker)
        else:
            worker.discard()
        return frame

    def is_current(self, worker: WorkerHandle) -> bool:
        """Whether ``worker`` was made for the tools the hub has now (inferred shapes come with each run)."""
        return worker.version == self.source.version

    async def status(self) -> None:
        """No cluster here."""
        return None

    async def gone(self) -> None:
        """This machine does not go away under its runs."""
        return None

    def stall(self) -> str:
        """A run waits here only for the zygote to hand a worker over."""
        return "the worker process did not hand one over"

    async def shut_down(self) -> None:
        """Stop preparing, discard the spare worker, stop the zygote."""
        self.closing = True
        if self._warming is not None and not self._warming.done():
            # Closed while the zygote starts (a reload right after start): let warm() see ``closing``
            # and stop it, rather than leave a task the closing loop would destroy mid-start.
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._warming), _WARM_WAIT)
            self._warming.cancel()
        for task in list(self._preparing):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        await self._stop_zygote()

    async def _spawn(self, zygote: Zygote) -> Worker:
        tmp_dir = Path(tempfile.mkdtemp(prefix="codemode-run-"))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid, exited = await zygote.spawn(theirs, self._policy(tmp_dir))
        except BaseException:
            ours.close()
            shutil.rmtree(tmp_dir, ignore_errors=True)
            raise
        finally:
            theirs.close()
        return Worker(pid, exited, ours, tmp_dir, self._version)

    async def _prepare_spare(self, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            zygote = await self._current_zygote()
            worker = await self._spawn(zygote)
        except Exception:  # the next execution spawns its own worker and reports what went wrong
            return
        if len(self._spares) >= SPARES or self.closing or worker.version != self._version:
            worker.discard()
        else:
            self._spares.append(worker)

    def _policy(self, tmp_dir: Path) -> dict[str, Any]:
        """One worker's sandbox policy, as JSON for the zygote (built once a version; tmp_dir its own)."""
        if self._policy_base is None or self._policy_base[0] != self._version:
            self._policy_base = (self._version, self.source.policy())
        return {**self._policy_base[1], "tmp_dir": str(tmp_dir)}

    async def _current_zygote(self) -> Zygote:
        """The pre-started process for the current tool set, started (again) when the tools changed."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            version = self.source.version
            if self._zygote is not None and (self._version != version or self._zygote.dead):
                await self._stop_zygote()
            if self._zygote is None:
                plan = self.source.zygote_plan()
                self._zygote = await Zygote.start(
                    tools=plan.tools, preload=plan.preload, state_dir=plan.state_dir, cwd=plan.cwd
                )
                self._version = version
            return self._zygote

    async def _stop_zygote(self) -> None:
        spares, self._spares = self._spares, []
        for spare in spares:
            spare.discard()
        zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.stop_reading()  # here, on its loop: a task is not cancelled from another thread
            await off_loop(zygote.stop)


class LocalWorkers:
    """The kernel's own workers: its tools, confined as its config and sandbox settings say."""

    def __init__(
        self,
        toolbox: Toolbox,
        settings: CodeModeSettings,
        *,
        cpu_seconds: int,
        preload: Iterable[str],
        overrides: Mapping[str, Any],
    ) -> None:
        self.toolbox = toolbox
        self.settings = settings
        self.cpu_seconds = cpu_seconds
        self.preload = tuple(preload)
        self.overrides = dict(overrides)

    @property
    def version(self) -> int:
        """The hub's tool set version."""
        return self.toolbox.hub.tools_version

    def zygote_plan(self) -> ZygotePlan:
        """The hub's tools, run in the workspace."""
        workspace = self.toolbox.config.workspace
        return ZygotePlan(
            tools=self.toolbox.tool_descriptors(self.toolbox.models_for(self.settings)),
            preload=self.preload,
            state_dir=workspace / ".codemode",
            cwd=workspace,
        )

    def policy(self) -> dict[str, Any]:
        """The config's sandbox: its files and the secret stores hidden, the settings' limits."""
        config = self.toolbox.config
        kernel_files = [config.source, config.settings_source, user_config_dir()]
        kernel_files += [server.env_file for server in config.servers.values()]
        # Those that exist; one that does not cannot be covered, and a config a program creates there is
        # an untrusted project config the next start refuses (config/loader.py), so no warning for them.
        kernel_files += [p for name in PROJECT_CONFIG_NAMES if os.path.lexists(p := config.workspace / name)]
        chosen = self.settings.sandbox
        in_workspace = [config.workspace / os.path.expanduser(p) for p in chosen.hidden]
        hidden = (
            *default_hidden_paths(),
            *jupyter_secrets(),
            *(Path(p) for p in kernel_files if p is not None),
            *in_workspace,
        )
        settings: dict[str, Any] = {
            "workspace": config.workspace,
            "hidden": hidden,
            "writable": tuple(config.workspace / os.path.expanduser(p) for p in chosen.writable),
            "network": chosen.network,
            "memory_mb": chosen.memory_mb,
            "file_size_mb": chosen.file_size_mb,
            "open_files": chosen.open_files,
            "max_processes": chosen.max_processes,
            # A worker is prepared before its run's timeout is known: the deadline is the rule, the CPU
            # limit the backstop.
            "cpu_seconds": self.cpu_seconds,
        }
        settings.update(self.overrides)
        # What runs outside the sandbox, where programs could change it: the servers' files, and what the
        # host imports. Only what lies inside a writable path needs it (Landlock keeps the rest).
        roots = (settings["workspace"], *settings["writable"])
        settings["read_only"] = (*run_files(config), *host_code(roots), *settings.get("read_only", ()))
        return SandboxPolicy(**settings).to_dict()


async def off_loop(function: Callable[[], object]) -> None:
    """Run a blocking cleanup on a thread, or here when the interpreter is exiting.

    At exit (``atexit``, where IPython's extension closes the executor) the interpreter's thread pools
    already refuse work ("cannot schedule new futures after shutdown"); the cleanup must still happen.
    """
    try:
        done = asyncio.get_running_loop().run_in_executor(None, function)
    except RuntimeError:
        function()
        return
    await done


def cpu_limit(max_timeout: float, grace: float) -> int:
    """The CPU-seconds backstop of a worker: its longest possible run plus the grace period."""
    return math.ceil(max_timeout + grace + 2)


def kill_group(pid: int, sig: int) -> None:
    """Signal a worker's process group (a PID namespace's warden takes its namespace with it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
