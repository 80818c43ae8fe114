"""ClusterPool: workers on the nodes of a Ray cluster, for an Executor whose ``executor.backend`` is ``ray``.

What Ray does here: placement and lifecycle. Each run reserves its resources (``executor.resources``) as a
one-bundle placement group; Ray's scheduler puts it on a node that has them free, or keeps it queued until
one does. The node's actor (``node.NodeActor``, one per node, started on first use and pinned there) hands
out a sandboxed worker it prepared, and the kernel opens a TCP connection to the actor that relays the
worker's channel. Everything else is the local executor's: the same frames, checked the same way, tool
calls and ``llm()`` answered by the hub in this process, so no credential leaves it.

A node lost while it runs a program fails the worker's ``exited`` with ``NodeLostError``; the executor
replays the run elsewhere from its recorded tool results (``Executor._run_alone``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..._version import __version__
from ...config.models import ExecutorResources, ExecutorSettings
from ...core.errors import ClusterError, NodeLostError, ZygoteError
from ...worker.protocol import ProtectionsFrame
from ..pool import LocalWorkers
from ..zygote_client import WorkerExit
from .node import NodeActor, NodeSetup
from .reservations import Reservation, Reservations

__all__ = ["ClusterPool", "RemoteWorker", "cluster_lines", "import_ray"]

_NAMESPACE = "codemode"
_ACTOR_WAIT = 120.0  # seconds a node actor may take to start (a new Python process on a loaded node)
_STATUS_WAIT = 5.0  # seconds the cluster (and each node's actor) may take to say how it is
_RELAY_CONNECT = 10.0  # seconds to reach a node's relay (a node that does not answer is as good as lost)
_GCS_PATIENCE = 10 * 365 * 24 * 3600
_INSTALL_HINT = 'the Ray executor needs Ray: pip install "codemode-kernel[ray]"'


def import_ray() -> Any:
    """The ``ray`` module, or a ClusterError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(_INSTALL_HINT) from exc
    return ray


@dataclass
class RemoteWorker:
    """A worker a node actor prepared for one run; its channel is the actor's relay."""

    pid: int
    """Its pid on the node (for messages)."""
    node: str
    version: int
    exited: asyncio.Future[WorkerExit]
    actor: Any
    worker_id: str
    token: str
    host: str
    port: int
    placement: Any
    release_placement: Callable[[Any, bool], None]
    lost: str | None = None
    _done: bool = field(default=False, repr=False)

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Open the relay to the worker's channel; a node that cannot be reached is a lost node."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, limit=1 << 20), _RELAY_CONNECT
            )
        except (OSError, TimeoutError) as exc:
            raise NodeLostError(
                self.node,
                f"its relay at {self.host}:{self.port} cannot be reached from this machine ({exc}); the "
                "kernel connects to each node directly, also with a ray:// address",
            ) from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writer.write((self.worker_id + self.token).encode("ascii"))
        return reader, writer

    def signal(self, number: int) -> None:
        """Ask the node's actor to signal the worker's process group (a lost node: nothing to signal)."""
        with contextlib.suppress(Exception):
            self.actor.signal.remote(self.worker_id, int(number))

    def discard(self) -> None:
        """End the worker on its node and give its resources back to the cluster."""
        if self._done:
            return
        self._done = True
        with contextlib.suppress(Exception):
            self.actor.release.remote(self.worker_id)
        self.release_placement(self.placement, self.lost is not None)

    def release(self) -> None:
        """After its run: the same as ``discard`` (the node removes the temp dir)."""
        self.discard()


class ClusterPool:
    """Workers on a Ray cluster's nodes, used on the hub's loop (the same interface as ``WorkerPool``)."""

    def __init__(self, source: LocalWorkers, settings: ExecutorSettings) -> None:
        self.source = source
        self.settings = settings
        self.closing = False
        self._ray: Any = None
        self._connecting: asyncio.Task[Any] | None = None
        self._actors: dict[str, asyncio.Future[Any]] = {}
        """Each node's actor, or its start."""
        self._setup: NodeSetup | None = None
        self.queued = 0
        """Runs waiting for Ray to place them (their resources are not free anywhere yet)."""
        self.running = 0
        self._warm_requested = False
        self.gcs: tuple[str, int] | None = None
        self._reservations = Reservations(self._place, self._remove_placement)
        self._listing: asyncio.Future[Any] | None = None
        self._stalled = "connecting"
        """Where the latest take() was (its error says it, when that run's time ran out there)."""
        self._suspect = False
        """A node was lost lately: the next run first checks that the cluster is still there."""

    @property
    def started(self) -> bool:
        """Whether this pool connected to the cluster (or is connecting): then there is work to stop."""
        return self._ray is not None or self._connecting is not None or self._warm_requested

    def warm(self) -> Coroutine[Any, Any, None]:
        """Connect to the cluster and start a node actor on every node, so the first run need not."""
        self._warm_requested = True
        return self._warm()

    async def _warm(self) -> None:
        with contextlib.suppress(Exception):  # a failure shows, with its reason, on the first run
            for node in await self._live_nodes():
                await self._actor(node)

    def prepare_next(self) -> None:
        """Nothing to do here: each node's actor prepares its next worker when a run ends."""

    def is_current(self, worker: Any) -> bool:
        """Whether ``worker`` was made for the tools the hub has now."""
        return bool(worker.version == self.source.version)

    async def take(self, resources: ExecutorResources | None = None) -> RemoteWorker:
        """A worker on the node Ray places this run on; waits (queued) until its resources are free.

        Raises:
            ClusterError: Ray is missing or the cluster cannot be reached.
            ZygoteError: the node could not start a worker.
            NodeLostError: the node went away before the worker was handed over.
        """
        self._stalled = "connecting"
        ray = await self._connected()

        self._stalled = "placing"
        if self._suspect:
            if reason := await self.gone():
                raise ClusterError(reason)
            self._suspect = False

        bundle = _bundle(resources or self.settings.resources)
        self.queued += 1
        try:
            reservation = await self._reservations.take(bundle)
        except ray.exceptions.RayError as exc:
            raise ClusterError(f"Ray could not place the run: {_describe(exc)}") from exc
        finally:
            self.queued -= 1
        node = reservation.node
        if self.closing:  # closed while the run waited for Ray: no actor is started for it
            self._reservations.release(reservation, reuse=False)
            raise ClusterError("the executor was closed while the run waited for a node")
        self._stalled = "starting"
        try:
            actor = await self._actor(node)
            asking = asyncio.ensure_future(_answer(actor.take.remote(self._node_setup())))
            try:
                taken = await asyncio.shield(asking)
            except asyncio.CancelledError:  # the node hands a worker over all the same: end it once it does
                asking.add_done_callback(lambda done: _release_taken(actor, done))
                raise
        except BaseException as exc:
            self._reservations.release(reservation, reuse=False)
            if isinstance(exc, ray.exceptions.RayError):
                self._lost(node)
                raise NodeLostError(node, _describe(exc)) from exc
            raise
        if "error" in taken:
            self._reservations.release(reservation, reuse=False)
            raise ZygoteError(taken["error"])
        exited = asyncio.ensure_future(self._exit_of(actor, node, taken["worker"]))
        exited.add_done_callback(_retrieved)  # read by the run; after it, nobody need hear it failed
        self.running += 1
        return RemoteWorker(
            pid=taken["pid"],
            node=node,
            version=self.source.version,
            exited=exited,
            actor=actor,
            worker_id=taken["worker"],
            token=taken["token"],
            host=taken["host"],
            port=taken["port"],
            placement=reservation,
            release_placement=self._release,
        )

    async def protections(self) -> ProtectionsFrame:
        """What a worker applies on entering its sandbox on a node (the first node with an actor)."""
        nodes = await self._live_nodes()
        if not nodes:
            raise ZygoteError("the Ray cluster has no live node")
        actor = await self._actor(nodes[0])
        report = await actor.protections.remote(self._node_setup())
        if "error" in report:
            raise ZygoteError(report["error"])
        return cast(ProtectionsFrame, report)  # checked on the node, as the frame it is (WorkerPool)

    async def status(self) -> dict[str, Any]:
        """The cluster as the kernel sees it: nodes, each one's prepared and running workers, the queue.

        Raises:
            ClusterError: the executor is closed, or the cluster does not answer within seconds.
        """
        if self.closing:
            raise ClusterError("this executor is closed; its cluster is not shown")
        try:
            async with asyncio.timeout(_STATUS_WAIT * 2):
                ray = await self._connected()
                if self._listing is None or self._listing.done():
                    # One question at a time: a cluster that does not answer holds one thread, not one a call.
                    self._listing = asyncio.ensure_future(self._blocking(ray.nodes))
                entries = await asyncio.shield(self._listing)
        except TimeoutError:
            where = self.settings.address or "auto"
            raise ClusterError(
                f"the Ray cluster at {where} did not answer within {_STATUS_WAIT * 2:g} s"
            ) from None

        async def asked(actor: Any) -> dict[str, Any]:
            with contextlib.suppress(Exception):
                return dict(await asyncio.wait_for(actor.status.remote(), _STATUS_WAIT))
            return {}

        alive = [entry["NodeID"] for entry in entries if entry.get("Alive")]
        actors = {node: actor for node in alive if (actor := self._started_actor(node)) is not None}
        answers = await asyncio.gather(*(asked(actor) for actor in actors.values()))
        said = dict(zip(actors, answers, strict=True))
        nodes = []
        for entry in entries:
            node = entry["NodeID"]
            row: dict[str, Any] = {
                "node": node,
                "alive": bool(entry.get("Alive")),
                "address": entry.get("NodeManagerAddress"),
            }
            row.update(said.get(node, {}))
            row["resources"] = dict(entry.get("Resources") or {})
            nodes.append(row)
        address = self.settings.address or "auto"
        if self.gcs is not None and address == "auto":
            address = f"{self.gcs[0]}:{self.gcs[1]} (auto)"
        return {
            "address": address,
            "nodes": nodes,
            "queued": self.queued,
            "running": self.running,
        }

    async def shut_down(self) -> None:
        """End every node actor (and so their zygotes and workers); the cluster itself stays up."""
        self.closing = True
        self._reservations.clear()
        if self._connecting is not None and not self._connecting.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._connecting), 30.0)
        actors = [a for a in map(self._started_actor, list(self._actors)) if a is not None]
        self._actors = {}
        if self._ray is None:
            return
        ends = [asyncio.ensure_future(_end_actor(self._ray, actor)) for actor in actors]
        if ends:
            await asyncio.wait(ends)
        ray, self._ray = self._ray, None
        with contextlib.suppress(TimeoutError):  # a cluster gone: ray.shutdown may wait on it for long
            await asyncio.wait_for(self._blocking(lambda: _disconnect(ray)), 10.0)

    def stall(self) -> str:
        """What the last run that found no worker in time was waiting on, for its error."""
        if self._stalled == "connecting":
            return f"still connecting to the Ray cluster at {self.settings.address or 'auto'}"
        if self._stalled == "placing":
            return (
                "no Ray node had the run's resources free (executor.resources); "
                f"{self.queued} other run{'s' * (self.queued != 1)} still waiting"
            )
        return "its node was still starting its actor or a worker"

    async def gone(self) -> str | None:
        """Why the cluster is gone (its GCS refuses connections), or None while it answers."""
        if self.gcs is None:
            return None
        host, port = self.gcs
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 5.0)
        except (OSError, TimeoutError) as exc:
            return f"the Ray cluster went away: its GCS at {host}:{port} does not answer ({exc})"
        writer.close()
        return None

    # -- inside -----------------------------------------------------------------------------------

    async def _connected(self) -> Any:
        """The ``ray`` module, connected to the cluster (once; later calls wait for the first)."""
        if self._ray is not None:
            return self._ray
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._blocking(lambda: _connect(self.settings.address)))
        try:
            ray = await asyncio.shield(self._connecting)
            self.gcs = _gcs_address(ray)
            self._ray = ray
        except BaseException:
            if self._connecting.done():
                self._connecting = None  # a failed connection is tried again by the next run
            raise
        return self._ray

    def _started_actor(self, node: str) -> Any:
        """The actor on ``node`` if it has started, else None."""
        starting = self._actors.get(node)
        if starting is None or not starting.done() or starting.cancelled() or starting.exception():
            return None
        return starting.result()

    async def _blocking(self, call: Callable[[], Any]) -> Any:
        """A blocking Ray call (placement, the node list, actor creation) on a daemon thread of its own.

        Never on the hub's loop, nor on a pool's thread: with the cluster gone such a call blocks for good,
        and the hub must still end runs on time and the process still exit (a pool's threads are joined
        at exit).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def settle(outcome: Callable[[], None]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed while the call blocked
                loop.call_soon_threadsafe(outcome)

        def work() -> None:
            try:
                value = call()
            except BaseException as exc:
                error = exc
                settle(lambda: None if future.done() else future.set_exception(error))
            else:
                settle(lambda: None if future.done() else future.set_result(value))

        threading.Thread(target=work, name="codemode-ray-call", daemon=True).start()
        return await future

    async def _live_nodes(self) -> list[str]:
        ray = await self._connected()
        return [n["NodeID"] for n in await self._blocking(ray.nodes) if n.get("Alive")]

    async def _actor(self, node: str) -> Any:
        """The actor on ``node``, started there (pinned) on first use; nodes start theirs side by side."""
        starting = self._actors.get(node)
        if starting is None:
            starting = self._actors[node] = asyncio.ensure_future(self._start_actor(node))
        try:
            return await asyncio.shield(starting)
        except BaseException:
            if starting.done() and self._actors.get(node) is starting:
                del self._actors[node]  # the next run tries again
            raise

    async def _start_actor(self, node: str) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = self._ray.remote(NodeActor).options(
            num_cpus=0,
            max_restarts=0,
            max_task_retries=0,
            max_concurrency=1000,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
        )
        actor = await self._blocking(remote.remote)
        await asyncio.wait_for(actor.status.remote(), _ACTOR_WAIT)
        return actor

    def _node_setup(self) -> NodeSetup:
        """The tools and limits the nodes' workers are made for (built again when the tools change)."""
        version = self.source.version
        if self._setup is None or self._setup["version"] != version:
            plan = self.source.zygote_plan()
            self._setup = NodeSetup(
                version=version,
                tools=plan.tools,
                preload=list(plan.preload),
                policy=self.source.policy(),
                kernel_version=__version__,
            )
        return self._setup

    async def _exit_of(self, actor: Any, node: str, worker_id: str) -> WorkerExit:
        ray = self._ray
        try:
            how = await actor.wait_exit.remote(worker_id)
        except ray.exceptions.RayError as exc:
            self._lost(node)
            raise NodeLostError(node, _describe(exc)) from exc
        if "error" in how:
            raise ZygoteError(how["error"])
        return WorkerExit(how.get("code"), how.get("signal"))

    async def _place(self, bundle: dict[str, float]) -> Reservation:
        """Ray's reservation of ``bundle`` (a one-bundle placement group) and its node, once placed.

        Cancelled, it gives back the group it made (now, or once Ray has made it).
        """
        from ray.util.placement_group import placement_group, placement_group_table

        creating = asyncio.ensure_future(self._blocking(lambda: placement_group([bundle])))
        try:
            group = await asyncio.shield(creating)
        except asyncio.CancelledError:
            creating.add_done_callback(self._remove_made)
            raise
        try:
            await group.ready()
            table = await self._blocking(lambda: placement_group_table(group))
            node = str((table.get("bundles_to_node_id") or {}).get(0) or "")
            if not node:  # removed, or being moved, as it was read
                raise ClusterError(
                    "Ray placed the run's resources but could not say on which node; try again"
                )
        except BaseException:
            self._remove_placement(group)
            raise
        return Reservation(group, node, tuple(sorted(bundle.items())))

    def _remove_made(self, made: asyncio.Future[Any]) -> None:
        """Give back a placement group made for a run that was cancelled while Ray made it."""
        if not made.cancelled() and made.exception() is None:
            self._remove_placement(made.result())

    def _lost(self, node: str) -> None:
        """A node's actor is gone: start another there if the node comes back; check the cluster first."""
        self._actors.pop(node, None)
        self._reservations.forget_node(node)
        self._suspect = True

    def _release(self, reservation: Reservation, lost: bool) -> None:
        self.running -= 1
        self._reservations.release(reservation, reuse=not lost and not self.closing)

    def _remove_placement(self, group: Any) -> None:
        """Give a run's reservation back, on a thread (it blocks while the GCS does not answer)."""
        from ray.util.placement_group import remove_placement_group

        def remove() -> None:
            with contextlib.suppress(Exception):
                remove_placement_group(group)

        threading.Thread(target=remove, name="codemode-ray-release", daemon=True).start()


async def _end_actor(ray: Any, actor: Any) -> None:
    """Ask a node's actor to end its workers and zygote, then end it (a lost node's: at once)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(actor.shut_down.remote(), 10.0)
    with contextlib.suppress(Exception):
        ray.kill(actor)


async def _answer(ref: Any) -> Any:
    """An actor call's answer (awaited once, so that a cancelled wait can still act on it)."""
    return await ref


def _release_taken(actor: Any, asked: asyncio.Future[Any]) -> None:
    """End a worker a node handed over after the run that asked for it was cancelled."""
    if asked.cancelled() or asked.exception() is not None:
        return
    taken = asked.result()
    if isinstance(taken, dict) and "worker" in taken:
        with contextlib.suppress(Exception):
            actor.release.remote(taken["worker"])


def _retrieved(done: asyncio.Future[Any]) -> None:
    """Mark a future's exception as read (asyncio logs one nobody read)."""
    if not done.cancelled():
        done.exception()


def _bundle(resources: ExecutorResources) -> dict[str, float]:
    """One program's reservation in Ray's resource names."""
    bundle: dict[str, float] = {"CPU": resources.cpus}
    if resources.gpus:
        bundle["GPU"] = resources.gpus
    if resources.memory_mb:
        bundle["memory"] = float(resources.memory_mb * 1024 * 1024)
    bundle.update(resources.custom)
    return {name: amount for name, amount in bundle.items() if amount > 0} or {"CPU": 0.01}


def _describe(exc: BaseException) -> str:
    """A Ray error's first line, without Ray's long advice."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class _Connection:
    """This process's connection to Ray, shared by its executors; ended by the last one it started for."""

    lock = threading.Lock()
    users = 0
    ours = False
    """Whether an executor connected (then the last one to close disconnects); not a user's ``ray.init``."""


def _connect(address: str | None) -> Any:
    """``ray.init`` (or the connection this process already has, if it is to the same cluster).

    Runs on a thread: connecting takes seconds (and Ray then installs no SIGTERM handler of its own, which
    it does only on the main thread).
    """
    ray = import_ray()
    with _Connection.lock:
        if not ray.is_initialized():
            _init(ray, _resolve(address))
            _Connection.ours = True
        elif address not in (None, "auto") and not address.startswith("ray://"):
            connected = _gcs_address(ray)
            wanted = _host_port(address)
            if connected is not None and wanted is not None and connected != wanted:
                raise ClusterError(
                    f"this process is connected to the Ray cluster at {connected[0]}:{connected[1]} already "
                    f"(a ray.init of its own), not to executor.address {address}; call ray.shutdown() first, "
                    "or set the address to that cluster"
                )
        _Connection.users += 1
    return ray


def _resolve(address: str | None) -> str:
    """The cluster to connect to: ``address``; for ``auto``, RAY_ADDRESS or this user's own local cluster.

    Ray's own ``auto`` would also take any GCS process it finds on this machine, whoever started it:
    programs, tool results and the answers a node sends back (which the kernel unpickles) would then be
    another user's to read and forge.
    """
    if address not in (None, "auto"):
        return address
    if env := os.environ.get("RAY_ADDRESS"):
        return env
    from ray._common.utils import get_ray_address_file

    path = Path(get_ray_address_file(None))
    try:
        info = path.stat()
    except OSError:
        raise ClusterError(
            'executor.address is "auto" and no Ray cluster was started here (`ray start --head` writes '
            f"{path}); start one, or set executor.address (or RAY_ADDRESS) to its head's HOST:PORT"
        ) from None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ClusterError(
            f'executor.address is "auto", but {path} (the address of the latest `ray start` here) belongs to '
            "another user or is writable by others; set executor.address to your cluster's HOST:PORT"
        )
    found = path.read_text().strip()
    if not found:
        raise ClusterError(f"{path} names no cluster; set executor.address to your cluster's HOST:PORT")
    return found


def _host_port(address: str) -> tuple[str, int] | None:
    host, _, port = address.rpartition(":")
    return (host, int(port)) if host and port.isdigit() else None


def _disconnect(ray: Any) -> None:
    """One executor less on the connection; the last one ends a connection an executor made."""
    with _Connection.lock:
        _Connection.users -= 1
        if _Connection.users <= 0 and _Connection.ours:
            _Connection.ours = False
            with contextlib.suppress(Exception):
                ray.shutdown()


def _init(ray: Any, address: str) -> None:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray ends a driver whose GCS has not answered for a minute (gcs_rpc_server_reconnect_timeout_s): here
    # the driver is the kernel or serve. A cluster that goes away ends its runs instead (``gone``).
    os.environ.setdefault("RAY_gcs_rpc_server_reconnect_timeout_s", str(_GCS_PATIENCE))
    quiet = _WithoutSigtermNote()
    logging.getLogger("ray._private.worker").addFilter(quiet)
    try:
        ray.init(
            address=address,
            namespace=_NAMESPACE,
            log_to_driver=False,
            configure_logging=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(
            f"could not connect to the Ray cluster at {address}: {exc}; start one with `ray start "
            "--head`, or set executor.address to its head's HOST:PORT"
        ) from exc
    finally:
        logging.getLogger("ray._private.worker").removeFilter(quiet)


class _WithoutSigtermNote(logging.Filter):
    """Leaves out Ray's warning that a connection made off the main thread set no SIGTERM handler.

    Here that is the point (the kernel's or serve's own handler stays), and the warning would reach the
    user's terminal on every connection.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def _gcs_address(ray: Any) -> tuple[str, int] | None:
    """The GCS's host and port, as this process's connection knows it."""
    with contextlib.suppress(Exception):
        host, _, port = str(ray.get_runtime_context().gcs_address).rpartition(":")
        return host, int(port)
    return None


def cluster_lines(status: dict[str, Any]) -> list[str]:
    """``ClusterPool.status()`` as a person reads it: one line for the cluster, one per node."""
    nodes = status.get("nodes", [])
    alive = [n for n in nodes if n.get("alive")]
    lines = [
        f"cluster: {status.get('address')}: {len(alive)} of {len(nodes)} nodes alive, "
        f"{status.get('running', 0)} run(s) on them, {status.get('queued', 0)} queued"
    ]
    for node in nodes:
        cpus = node.get("resources", {}).get("CPU", 0)
        if not node.get("alive"):
            lines.append(f"  node {node['node'][:12]} ({node.get('address')}): dead")
        elif "prepared" in node:
            lines.append(
                f"  node {node['node'][:12]} ({node.get('address')}, {cpus:g} CPU): "
                f"{node['prepared']} worker(s) prepared, {node['running']} running, {node['runs']} so far"
            )
        else:
            lines.append(f"  node {node['node'][:12]} ({node.get('address')}, {cpus:g} CPU): no runs yet")
    return lines
