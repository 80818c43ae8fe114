"""A Ray node's side of the cluster backend: one actor per node prepares sandboxed workers and relays them.

The actor runs this package's ``WorkerPool`` with a ``NodeWorkers`` source: the same zygote and the same
sandbox as on the kernel's machine, entered on the node, with the tools and the limits the kernel sent
(``NodeSetup``). It never reads a program's frames: a worker's channel is relayed byte for byte over a TCP
connection the kernel opens to the actor (authenticated by a token only that run's kernel was given), and
the kernel checks every frame as it does locally. What the actor returns through Ray is plain data (str,
int, lists and dicts of them) and its methods catch their own errors: nothing a program wrote is pickled.

The actor ends with its raylet: Ray leaves it (and the zygote, and a worker still running) alive when its
raylet is killed, which would let a program the kernel has moved elsewhere run on; a thread watching the
parent process ends it within a fraction of a second, and the zygote ends its workers when its control
socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets
import shutil
import signal
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..._version import __version__
from ...core.errors import ProtocolError, ZygoteError
from ...worker.sandbox import ALWAYS_HIDDEN_IN_WORKSPACE, default_hidden_paths
from ..host_paths import host_code
from ..pool import Worker, WorkerPool, ZygotePlan

__all__ = ["HELLO_SIZE", "NodeService", "NodeSetup", "TakenWorker"]

WORKER_ID_SIZE = 16
TOKEN_SIZE = 64
HELLO_SIZE = WORKER_ID_SIZE + TOKEN_SIZE
"""The kernel's first bytes on a relay connection: the worker's id and its token (hex)."""
_HELLO_WAIT = 10.0  # seconds a connection may take to say which worker it is for
_UNCLAIMED_MAX = 64  # connections at once that have not said yet which worker they are for
_PARENT_POLL = 0.2  # seconds between looks at the parent process (the raylet)
_CHUNK = 1 << 16


class NodeSetup(TypedDict):
    """What the kernel sends with each request: the tool set its workers are built for, and its limits."""

    version: int
    tools: list[dict[str, Any]]
    preload: list[str]
    policy: dict[str, Any]
    """The kernel's ``SandboxPolicy.to_dict()`` (less ``tmp_dir``); the node sets its own workspace."""
    kernel_version: str
    """The kernel's codemode-kernel: a node with another speaks another frame protocol, so it refuses."""


class TakenWorker(TypedDict):
    """A worker prepared on the node for one run, and how the kernel reaches its channel."""

    worker: str
    token: str
    host: str
    port: int
    node: str
    pid: int


class NodeWorkers:
    """The WorkerSource of a node: the kernel's tools and limits, the node's own directories."""

    def __init__(self, root: Path, hidden: tuple[Path, ...]) -> None:
        self.root = root
        self.workspace = root / "workspace"
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.hidden = hidden
        self.setup: NodeSetup | None = None

    @property
    def version(self) -> int:
        """The kernel's tool set version of the latest request."""
        return self.setup["version"] if self.setup is not None else -1

    def zygote_plan(self) -> ZygotePlan:
        """The kernel's tools, run in the node's scratch workspace."""
        setup = self._setup()
        return ZygotePlan(
            tools=setup["tools"],
            preload=tuple(setup["preload"]),
            state_dir=self.workspace / ".codemode",
            cwd=self.workspace,
        )

    def policy(self) -> dict[str, Any]:
        """The kernel's limits and hidden paths, plus this node's secrets; the workspace is the node's.

        The kernel's paths are hidden here too: on a shared file system they are the same files.
        """
        policy = dict(self._setup()["policy"])
        policy.pop("tmp_dir", None)
        # On a file system the node shares with the kernel, the kernel's workspace is there too: what is
        # hidden in it (its .codemode state, .env) stays hidden, named by its full path.
        kernel_workspace = Path(policy["workspace"])
        names = (*ALWAYS_HIDDEN_IN_WORKSPACE, *policy.get("hidden_in_workspace", ()))
        in_kernel_workspace = [str(kernel_workspace / name) for name in names]
        policy["workspace"] = str(self.workspace)
        policy["hidden_in_workspace"] = []  # a scratch directory: nothing of the project's is in it
        policy["writable"] = []
        hidden = [*policy.get("hidden", []), *in_kernel_workspace, *(str(p) for p in self.hidden)]
        policy["hidden"] = list(dict.fromkeys(hidden))
        policy["read_only"] = [str(p) for p in host_code([self.workspace])]
        return policy

    def _setup(self) -> NodeSetup:
        if self.setup is None:
            raise ZygoteError("the node was asked for a worker before the kernel sent its setup")
        return self.setup


@dataclass
class _Lease:
    worker: Worker
    token: str
    connected: bool = False


class NodeService:
    """The body of the node actor (``cluster/actor.py`` makes it a Ray actor): workers, relay, exits."""

    def __init__(self, node: str, host: str, ray_dirs: tuple[str, ...]) -> None:
        self.node = node
        self.host = host
        self.root = Path(tempfile.mkdtemp(prefix="codemode-node-"))
        hidden = (*default_hidden_paths(), *(Path(p) for p in ray_dirs))
        self.source = NodeWorkers(self.root, hidden)
        self.pool = WorkerPool(self.source)
        self._leases: dict[str, _Lease] = {}
        self._server: asyncio.Server | None = None
        self._relays: set[asyncio.Task[None]] = set()
        self._unclaimed = 0
        self.started_runs = 0

    # -- requests from the kernel ---------------------------------------------------------------

    async def take(self, setup: NodeSetup) -> TakenWorker | dict[str, str]:
        """A worker for one run; ``{"error": message}`` when none could start."""
        if setup.get("kernel_version") != __version__:
            return {
                "error": f"node {self.node[:12]} runs codemode-kernel {__version__}, the kernel "
                f"{setup.get('kernel_version')}: install one version on every node and the kernel's machine"
            }
        self.source.setup = setup
        try:
            server = await self._listening()
            worker = await self.pool.take()
        except (ZygoteError, OSError, TimeoutError) as exc:
            return {"error": f"could not start a worker on node {self.node[:12]}: {exc}"}
        worker_id = secrets.token_hex(WORKER_ID_SIZE // 2)
        token = secrets.token_hex(TOKEN_SIZE // 2)
        self._leases[worker_id] = _Lease(worker, token)
        self.started_runs += 1
        port = server.sockets[0].getsockname()[1]
        return TakenWorker(
            worker=worker_id, token=token, host=self.host, port=port, node=self.node, pid=worker.pid
        )

    async def wait_exit(self, worker_id: str) -> dict[str, Any]:
        """How the worker ended: ``{"code": int | None, "signal": int | None}``, or ``{"error": ...}``."""
        lease = self._leases.get(worker_id)
        if lease is None:
            return {"error": "no such worker on this node"}
        try:
            how = await asyncio.shield(lease.worker.exited)
        except ZygoteError as exc:
            return {"error": str(exc)}
        return {"code": how.code, "signal": how.signal}

    def signal(self, worker_id: str, number: int) -> bool:
        """Signal the worker's process group (SIGINT or SIGKILL only); False when it is not here."""
        lease = self._leases.get(worker_id)
        if lease is None or number not in (signal.SIGINT, signal.SIGKILL):
            return False
        lease.worker.signal(number)
        return True

    def release(self, worker_id: str) -> None:
        """The run is over: end the worker, remove its temp dir, prepare the next."""
        lease = self._leases.pop(worker_id, None)
        if lease is not None:
            lease.worker.discard()
        self.pool.prepare_next()

    async def protections(self, setup: NodeSetup) -> dict[str, Any]:
        """What a worker on this node applies on entering its sandbox (``ProtectionsFrame``)."""
        self.source.setup = setup
        try:
            return dict(await self.pool.protections())
        except ZygoteError as exc:
            return {"error": str(exc)}

    def status(self) -> dict[str, Any]:
        """Prepared workers, running ones, runs started since the actor began."""
        return {
            "node": self.node,
            "host": self.host,
            "prepared": len(self.pool.spares),
            "running": len(self._leases),
            "runs": self.started_runs,
        }

    async def shut_down(self) -> None:
        """End every worker and the zygote, remove the node's scratch directory."""
        for worker_id in list(self._leases):
            self.release(worker_id)
        if self._server is not None:
            self._server.close()
        for relay in list(self._relays):
            relay.cancel()
        await self.pool.shut_down()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- the relay --------------------------------------------------------------------------------

    async def _listening(self) -> asyncio.Server:
        if self._server is None:
            self._server = await asyncio.start_server(self._accept, host=self.host, port=0)
        return self._server

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._relays.add(task)
        try:
            if self._unclaimed >= _UNCLAIMED_MAX:
                return  # more connections saying nothing than runs could need: someone is flooding it
            self._unclaimed += 1
            try:
                lease = await self._claim(reader)
            finally:
                self._unclaimed -= 1
            if lease is None:
                return
            worker_reader, worker_writer = await lease.worker.connect()
            await _relay(reader, writer, worker_reader, worker_writer)
        except (OSError, ProtocolError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._relays.discard(task)

    async def _claim(self, reader: asyncio.StreamReader) -> _Lease | None:
        """The lease a connection's hello names, once: a wrong token or a second connection gets nothing."""
        hello = await asyncio.wait_for(reader.readexactly(HELLO_SIZE), _HELLO_WAIT)
        worker_id = hello[:WORKER_ID_SIZE].decode("ascii", "replace")
        lease = self._leases.get(worker_id)
        if lease is None or lease.connected:
            return None
        if not hmac.compare_digest(lease.token.encode("ascii"), hello[WORKER_ID_SIZE:]):
            return None
        lease.connected = True
        return lease


async def _relay(
    kernel_reader: asyncio.StreamReader,
    kernel_writer: asyncio.StreamWriter,
    worker_reader: asyncio.StreamReader,
    worker_writer: asyncio.StreamWriter,
) -> None:
    """Copy bytes both ways until either side closes; then close both (the other side sees its end)."""
    pumps = {
        asyncio.ensure_future(_pump(kernel_reader, worker_writer)),
        asyncio.ensure_future(_pump(worker_reader, kernel_writer)),
    }
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pump in pumps:
            pump.cancel()
        worker_writer.close()
        kernel_writer.close()


async def _pump(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await source.read(_CHUNK):
            target.write(data)
            await target.drain()


def end_with_parent() -> None:
    """End this process when its parent (the raylet that started it) dies: a thread looks every 0.2 s.

    ``os._exit``: the zygote sees its control socket close and ends its workers.
    """
    parent = os.getppid()

    def watch() -> None:
        while True:
            threading.Event().wait(_PARENT_POLL)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="codemode-node-parent", daemon=True).start()


class NodeActor:
    """The Ray actor on one node (created by ``ClusterPool`` with ``ray.remote``, pinned to its node).

    Every method answers with plain data and catches its own errors (``{"error": message}``): what comes
    back to the kernel is never a pickled exception carrying a program's text.
    """

    def __init__(self) -> None:
        import ray

        context = ray.get_runtime_context()
        ray_dirs = (context.get_temp_dir(), "/tmp/ray", os.path.expanduser("~/.ray"))
        self._service = NodeService(context.get_node_id(), ray.util.get_node_ip_address(), ray_dirs)  # type: ignore[no-untyped-call]
        end_with_parent()

    async def take(self, setup: NodeSetup) -> dict[str, Any]:
        """``NodeService.take``."""
        try:
            return dict(await self._service.take(setup))
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    async def wait_exit(self, worker_id: str) -> dict[str, Any]:
        """``NodeService.wait_exit``."""
        try:
            return await self._service.wait_exit(worker_id)
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    async def signal(self, worker_id: str, number: int) -> bool:
        """``NodeService.signal``."""
        try:
            return self._service.signal(worker_id, number)
        except Exception:
            return False

    async def release(self, worker_id: str) -> None:
        """``NodeService.release``."""
        with contextlib.suppress(Exception):
            self._service.release(worker_id)

    async def protections(self, setup: NodeSetup) -> dict[str, Any]:
        """``NodeService.protections``."""
        try:
            return await self._service.protections(setup)
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    async def status(self) -> dict[str, Any]:
        """``NodeService.status``."""
        return self._service.status()

    async def shut_down(self) -> None:
        """``NodeService.shut_down``."""
        with contextlib.suppress(Exception):
            await self._service.shut_down()
