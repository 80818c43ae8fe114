"""Executor: run a program in a fresh worker process, serve its tool calls, stop it at its deadline.

    with Toolbox.from_config() as tb, Executor(tb) as ex:
        result = ex.run("get_weather(city='Oslo', unit='celsius').temperature")

Everything asynchronous runs on the ToolHub's event loop, next to the MCP connections, so a tool call
from a worker costs one hop. At the deadline the worker gets SIGINT, then after a grace period SIGKILL
(its whole process group); tool calls still in flight are cancelled at their servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, TypeVar, Unpack

from ..approvals import ApprovalCheck, ApprovalPolicy, Approver
from ..artifacts import ArtifactStore
from ..calllog import ToolCallRecord, call_order
from ..config import CodeModeSettings, resolve_code_mode
from ..config.models import ExecutorSettings
from ..core.errors import ClusterError, NodeLostError
from ..core.limits import (
    DEFAULT_GRACE,
    DEFAULT_SESSION_IDLE,
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    check_timeout,
)
from ..core.records import ErrorRecord, NodeAttempt
from ..hub.loop import blocking
from ..toolbox import RESERVED_NAMES, Toolbox
from ..worker.protocol import ProtectionsFrame, RunFrame
from ..worker.sandbox import Protections
from ..worker.values import encode_inputs
from .execution import (
    CallCallback,
    Execution,
    LLMHandler,
    OutputCallback,
    ProgressWatcher,
    Watchers,
)
from .jobs import Job
from .owned import plan_calls
from .pool import LocalWorkers, Pool, WorkerHandle, WorkerPool, cpu_limit
from .references import Program, await_servers_named, note_connecting, note_sign_in, waiting_for
from .requests import WorkerRequests
from .result import ExecutionResult, ExecutionStatus, PendingCall
from .run import Run, RunOptions, reserve
from .sessions import Session, Sessions
from .zygote_client import ZygoteError

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "MIN_TIMEOUT",
    "CallCallback",
    "Executor",
    "Job",
    "LLMHandler",
    "OutputCallback",
    "ProgressWatcher",
]


log = logging.getLogger(__name__)
T = TypeVar("T")
_EXIT_WAIT = 2.0  # after "done", how long a worker may take to exit before it is killed
_NODE_EXIT_WAIT = 30.0  # the same on a Ray node: its actor answers, or Ray finds the node gone
_CLEANUP_DELAY = 0.01  # seconds after a finished run before its process group is killed
_PENDING_QUIET = 0.15  # seconds without a new pending call before a replay run stops as pending
MAX_ATTEMPTS = 3
"""Nodes a run may be tried on when the ones before were lost while it ran (a Ray cluster)."""


class Executor:
    """Runs programs against a started Toolbox's tools, each in its own limited worker process."""

    def __init__(
        self,
        toolbox: Toolbox,
        *,
        settings: CodeModeSettings | None = None,
        timeout: float | None = None,
        grace: float | None = None,
        max_output_bytes: int = 1_000_000,
        preload: Iterable[str] | None = None,
        sandbox: Mapping[str, Any] | None = None,
        session_idle: float = DEFAULT_SESSION_IDLE,
        llm: LLMHandler | None = None,
        approver: Approver | None = None,
        executor: ExecutorSettings | None = None,
    ) -> None:
        """Set up; the worker process starts with the first run.

        Args:
            toolbox: a started Toolbox whose tools the programs call.
            settings: code-mode settings; by default the config's ``defaults.codeMode``. The arguments
                below override them.
            timeout: default seconds per execution, within the bounds of ``codemode_kernel.core.limits`` (its
                ``DEFAULT_TIMEOUT`` unless the settings say otherwise).
            grace: seconds between SIGINT and SIGKILL at the deadline (``limits.DEFAULT_GRACE``).
            max_output_bytes: stdout and stderr kept per execution; the rest is cut (and said so).
            preload: modules the pre-started process imports once (e.g. ``["pandas"]``).
            sandbox: ``SandboxPolicy`` fields that relax or tighten the settings, e.g.
                ``{"network": True, "memory_mb": 4096}`` (docs/threat-model.md).
            session_idle: seconds a session may go without a run before its worker is ended.
            llm: answers a program's ``llm()`` / ``llm_json()``: called with the request (``prompt``,
                ``system``, ``max_tokens``) on the hub's loop, returns the answer's text. Without it those
                calls raise ``LLMError`` in the program, saying that no model is configured.
            approver: asked to decide a program's call that needs approval (a destructive tool, or one
                the settings' ``approve`` lists; ``approvals.py``), unless a run names its own. Without
                one such calls are denied, saying so.
            executor: where programs run: this machine, or a Ray cluster's nodes (docs/scale-out.md);
                by default the config's ``executor``.

        The artifact store is the toolbox's (``.codemode/artifacts.db`` of the workspace); tool results over
        the config's ``codeMode.artifactThresholdBytes`` are stored there by the hub's call log.
        """
        self.toolbox = toolbox
        self.settings = settings if settings is not None else resolve_code_mode(toolbox.config, None)
        self.artifacts: ArtifactStore = toolbox.artifacts
        """The workspace's artifacts: what programs stored, and tool results too large for a record."""
        self._hub = toolbox.hub
        self._loop_thread = toolbox.hub.loop_thread
        self._requests = WorkerRequests(self._hub, self.artifacts, self.settings, llm)
        self.approver = approver
        self.approvals = ApprovalPolicy(self.settings.approve, self.settings.auto_approve)
        """Which calls need a decision: from the settings' ``approve`` and ``autoApprove``."""
        self.max_timeout = self.settings.max_timeout
        """The longest timeout a run may ask for (``codeMode.maxTimeout``); the workers' CPU limit follows."""
        self.timeout = check_timeout(
            timeout if timeout is not None else self.settings.timeout, maximum=self.max_timeout
        )
        self.grace = grace if grace is not None else self.settings.grace
        self.max_output_bytes = max_output_bytes
        self._shapes: tuple[int, dict[str, dict[str, Any]]] = (-1, {})
        self._later = _Later(_CLEANUP_DELAY)
        self.backend = executor if executor is not None else toolbox.config.executor
        """Where programs run (``backend``: ``local`` or ``ray``), and what one reserves on a cluster."""
        source = LocalWorkers(
            toolbox,
            self.settings,
            cpu_seconds=cpu_limit(self.max_timeout, self.grace),
            preload=preload if preload is not None else self.settings.preload,
            overrides=sandbox or {},
        )
        self._pool: Pool
        if self.backend.backend == "ray":
            from .cluster.pool import ClusterPool

            self._pool = ClusterPool(source, self.backend)
        else:
            self._pool = WorkerPool(source)
        self._sessions = Sessions(self._pool, session_idle)
        self._jobs: set[Job] = set()

    def _shapes_frame(self) -> dict[str, dict[str, Any]]:
        """The inferred result shapes for ``RunFrame.shapes``, recomputed only when they changed.

        A worker's tools are built when the servers' tools change; shapes learned since come with each run.
        """
        version = self.toolbox.tools_version
        if self._shapes[0] != version:
            shapes = {
                m.function_name: {"calls": m.inferred_calls, "schema": m.spec.inferred_output}
                for m in self.toolbox.models_for(self.settings)
                if m.inferred_calls
            }
            self._shapes = (version, shapes)
        return self._shapes[1]

    @property
    def session_idle(self) -> float:
        """Seconds a session may go without a run before its worker is ended."""
        return self._sessions.idle

    @session_idle.setter
    def session_idle(self, seconds: float) -> None:
        self._sessions.idle = seconds

    @property
    def llm(self) -> LLMHandler | None:
        """What answers a program's ``llm()`` (None: no model, and ``llm()`` raises LLMError)."""
        return self._requests.llm

    @llm.setter
    def llm(self, handler: LLMHandler | None) -> None:
        self._requests.llm = handler

    # -- lifecycle --------------------------------------------------------------------------------

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Executor:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def close(self) -> None:
        """End every session, the worker prepared ahead and the pre-started process."""
        if self._pool.started:
            self._loop_thread.run(self._shut_down())

    async def aclose(self) -> None:
        """Async twin of ``close``."""
        if self._pool.started:
            await self._loop_thread.run_async(self._shut_down())

    def warm(self) -> None:
        """Start the worker process and prepare a worker in the background; returns at once.

        A kernel calls it once its tools are connected, so the first run does not pay the start.
        """
        self._loop_thread.submit(self._pool.warm())

    def protections(self) -> Protections:
        """The isolation layers this executor's workers apply, as a worker reported them on entering.

        The same report each run's ``result.protections`` is made from; ``codemode doctor`` and
        ``%codemode status`` show it. Starts the worker process if it is not running yet; the worker that
        reported is the one prepared for the next run.

        Raises:
            ZygoteError: no worker could start, or one could not enter its sandbox.
        """
        return Protections.from_dict(self._loop_thread.run(self._pool.protections()))

    def cluster_status(self) -> dict[str, Any] | None:
        """The Ray cluster as this executor uses it: nodes, prepared and running workers, queued runs.

        None for the local backend. Connects to the cluster if it has not yet.
        """
        return self._loop_thread.run(self._pool.status())

    async def _shut_down(self) -> None:
        await self._cancel_jobs()
        self._later.flush()
        await self._sessions.end_all()
        await self._pool.shut_down()
        self.artifacts.close()  # only the connection: the next use opens it again

    async def _cancel_jobs(self) -> None:
        """Stop every background run (as at a deadline) and wait for their results: nothing is lost."""
        jobs = list(self._jobs)
        for job in jobs:
            job.run.stop.set("the executor closing")
        if jobs:
            await asyncio.wait([asyncio.wrap_future(job.future) for job in jobs], timeout=self.grace + 5.0)

    # -- running ----------------------------------------------------------------------------------

    async def arun(self, code: str, **options: Unpack[RunOptions]) -> ExecutionResult:
        """Run ``code`` and return its ExecutionResult; awaitable from any event loop.

        ``run`` is the blocking twin, with the same arguments (an interrupt while it waits stops the worker).

        Args:
            code: the program, as written (Markdown fences and a ``%%codemode`` line are tolerated).
            timeout: seconds, from ``limits.MIN_TIMEOUT`` to the settings' ``max_timeout`` (``MAX_TIMEOUT``
                unless ``codeMode.maxTimeout`` raises it; default: the executor's).
            inputs: globals for the program, sent as data (JSON, bytes, DataFrames, arrays).
            session: run in the named session: its worker keeps the globals of earlier runs until
                ``close_session(name)``, ``close()``, a crash, or ``session_idle`` seconds without a run.
            replay: tool calls recorded by an earlier run (``result.tool_calls``): they are answered
                from this record and no server is called. Without ``pending`` or a caller's tool, a call
                the record lacks fails ("replay diverged").
            pending: with ``replay``, the caller owns every tool: a call missing from the record stops
                the run with status ``pending`` (listing every call the program waits on).
            tools: the caller's own tools (``OwnedTool``), functions in this run's program beside the
                servers'. Those with an ``answer`` are answered by it; the others are the caller's to
                answer: their calls stop the run as ``pending``, and a run with the answers appended to
                ``replay`` goes on (``executor/owned.py``, docs/pending.md).
            approver: who decides this run's calls that need approval (default: the executor's).
            on_output: called with ``("stdout" | "stderr", text)`` as the program prints, on the hub's
                thread (keep it short): for live views.
            on_call: called with the CallRecord of each of this execution's tool calls when it starts
                and when it ends, on the hub's thread (keep it short).
            on_progress: called with ``(tool, seq, progress, total, message)`` when a server reports
                progress on one of this execution's calls, on the hub's thread (keep it short).
            resources: on a Ray cluster, what this run reserves (CPUs, memory, custom resources); by
                default the executor's ``executor.resources``. Ignored by the local backend.
            on_node: on a Ray cluster, called with the run's attempts so far (``[{"node", "outcome"}]``,
                the last one ``running``) when an attempt begins on a node, on the hub's thread.
            on_note: called with each note the program sends (``notify(message, **data)``: a
                ``NoteRecord``), on the hub's thread.
            execution_id: the run's id (its result's and its calls' ``execution_id``); by default a new
                random one. For a caller that names a run before it starts.
        """
        run = self._prepare(code, options)
        return await self._loop_thread.run_async(self._run(run))

    run = blocking(arun, loop=lambda executor: executor._loop_thread)

    def start(self, code: str, **options: Unpack[RunOptions]) -> Job:
        """Start ``code`` in the background and return its Job at once (``executor/jobs.py``).

        The arguments are ``arun``'s. The job keeps what the program prints, calls and notes, for a caller
        that comes back (``job.updates``, ``job.wait``, ``job.wait_async``) or stops it (``job.cancel``);
        its result is the one ``arun`` would return. ``close()`` cancels the jobs still running.

        Raises:
            TimeoutValueError: ``timeout`` is outside the allowed range.
            ToolNameCollisionError: one of ``tools`` is named like a server's tool.
        """
        run = self._prepare(code, options)
        loop = self._loop_thread.loop
        job = Job(run, cancel_on=lambda stop: loop.call_soon_threadsafe(stop))
        job_run = replace(run, watchers=job.watching(run.watchers))
        self._jobs.add(job)
        job.future.add_done_callback(lambda _: self._jobs.discard(job))
        self._loop_thread.submit(self._run_job(job_run, job))
        return job

    @property
    def jobs(self) -> list[Job]:
        """The background runs still running, oldest first."""
        return sorted(self._jobs, key=lambda job: job.run.started)

    async def _run_job(self, run: Run, job: Job) -> None:
        try:
            result = await self._run(run)
        except BaseException as exc:  # never lost: a waiter gets a result whatever happened
            log.exception("background execution %s failed", run.execution_id)
            result = _internal(run, f"the background run failed: {exc!r}")
            job.finish(result)
            if not isinstance(exc, Exception):
                raise
        else:
            job.finish(result)

    def _prepare(self, code: str, options: RunOptions) -> Run:
        """One run as one value, its arguments checked (``run.py``)."""
        tools = options.get("tools", ())
        timeout = options.get("timeout")
        inputs = options.get("inputs") or {}
        plan = plan_calls(
            tools,
            # Only a run with tools of its own needs the servers' names (each run would rebuild-check).
            taken=[m.function_name for m in self.toolbox.models_for(self.settings)] if tools else (),
            replay=options.get("replay"),
            pending=options.get("pending", False),
            reserved=RESERVED_NAMES,
            approval=ApprovalCheck(self.approvals, options.get("approver") or self.approver),
        )
        run = Run(
            program=Program.parse(code),
            limit=self.timeout if timeout is None else check_timeout(timeout, maximum=self.max_timeout),
            inputs=inputs,
            encoded_inputs=encode_inputs(inputs),
            plan=plan,
            watchers=Watchers(
                options.get("on_output"),
                options.get("on_call"),
                options.get("on_progress"),
                options.get("on_node"),
                options.get("on_note"),
            ),
            session=options.get("session"),
            resources=options.get("resources"),
        )
        named = options.get("execution_id")
        return replace(run, execution_id=named) if named else run

    @property
    def sessions(self) -> list[str]:
        """Names of the sessions whose worker is alive."""
        return self._sessions.alive()

    def close_session(self, name: str) -> bool:
        """End a session (its worker and every process it started); False when there was none."""
        return self._loop_thread.run(self._sessions.end(name))

    async def _run(self, run: Run) -> ExecutionResult:
        waited = await _unless_stopped(self._await_servers(run), run)
        if waited is None:
            return _cancelled_early(run, [])
        run = waited
        if run.session is not None:
            result = await self._run_in_session(run, run.session)
        else:
            result = await self._run_alone(run)
        note_connecting(result.error, run.connecting)
        note_sign_in(result.error, [s.name for s in self.toolbox.status() if s.state == "signin"])
        return result

    async def _await_servers(self, run: Run) -> Run:
        """Wait for servers still connecting while the program names what nothing defines yet.

        The wait counts in the run's timeout, but leaves the program a moment to run (``reserve``): a name
        still unknown then ends as its NameError, not as a timeout. Returns the run as it is after the wait.
        """
        defined = _Either(run.inputs, self._sessions.globals_of(run.session))
        if not waiting_for(self.toolbox, run.program, defined):
            return run
        connecting = await await_servers_named(
            self.toolbox, run.program, defined, timeout=run.limit - reserve(run.limit)
        )
        return run.after_wait(connecting)

    async def _run_alone(self, run: Run) -> ExecutionResult:
        """Run on a worker of its own; on a Ray cluster, again elsewhere while its node was lost."""
        nodes: list[NodeAttempt] = []
        while True:
            try:
                taken = await _unless_stopped(self._take(run), run)
            except NodeLostError as exc:  # its node went away as it was handed over: another one
                nodes.append(NodeAttempt(node=exc.node, outcome=f"lost: {exc.reason}"))
                if len(nodes) >= MAX_ATTEMPTS:
                    return await self._no_worker(run, exc, nodes)
                continue
            except (TimeoutError, ZygoteError, OSError, ClusterError) as exc:
                return await self._no_worker(run, exc, nodes)
            if taken is None:
                return _cancelled_early(run, nodes)
            worker = taken
            try:
                if worker.node is not None:
                    run = run.begun()
                    _tell_node(run, [*nodes, NodeAttempt(node=worker.node, outcome="running")])
                result = await self._execute(run, worker)
            finally:
                # Later and off the loop: the caller need not wait for a temp dir to be removed (a thread
                # doing it now would hold the interpreter lock just as the caller's thread wakes up with it).
                self._later.add(worker.release)
                self._pool.prepare_next()
            if worker.node is None:
                return result
            nodes.append(
                NodeAttempt(node=worker.node, outcome=f"lost: {worker.lost}" if worker.lost else "finished")
            )
            result.nodes = list(nodes)
            if (
                worker.lost is None
                or run.stop.requested
                or len(nodes) >= MAX_ATTEMPTS
                or run.remaining() <= reserve(run.limit)
            ):
                return result
            if any(call["status"] == "running" for call in result.tool_calls):
                # Its answer never came: a replay would make it again (the server may be doing it still).
                result.error = ErrorRecord(
                    type="NodeLost",
                    message=f"node {worker.node[:12]} was lost ({worker.lost}) while a tool call was still "
                    "running; the run was not replayed elsewhere, so that no call is made twice",
                )
                return result
            if gone := await self._pool.gone():
                result.error = ErrorRecord(type="ClusterGone", message=f"{gone}; the run was stopped")
                return result
            log.warning(
                "execution %s: node %s was lost (%s); replaying it elsewhere",
                run.execution_id,
                worker.node,
                worker.lost,
            )
            run = run.moved(result.tool_calls, {"stdout": len(result.stdout), "stderr": len(result.stderr)})

    async def _take(self, run: Run) -> WorkerHandle:
        """A worker for ``run``: on a cluster, within what is left of its limit (Ray may queue it).

        Here, however long it takes: a zygote's first start must not be cut short by one run's timeout.
        """
        if self.backend.backend != "ray":
            return await self._pool.take(run.resources)
        async with asyncio.timeout(run.remaining()):  # not wait_for, which can swallow a cancel (3.11)
            return await self._pool.take(run.resources)

    async def _no_worker(self, run: Run, exc: BaseException, nodes: list[NodeAttempt]) -> ExecutionResult:
        """The result of a run no worker was found for: the cluster gone, a full queue, a failed start."""
        if gone := await self._pool.gone():
            return _internal(run, gone, status="crashed", error_type="ClusterGone", nodes=nodes or None)
        if isinstance(exc, TimeoutError):
            message = f"no worker was free within the run's {run.limit:g} s ({self._pool.stall()})"
            return _internal(run, message, status="timeout", nodes=nodes or None)
        if isinstance(exc, ClusterError) and not isinstance(exc, NodeLostError):
            return _internal(run, str(exc), nodes=nodes or None)
        return _internal(run, f"could not start a worker: {exc}", nodes=nodes or None)

    async def _run_in_session(self, run: Run, name: str) -> ExecutionResult:
        try:
            remote = self.backend.backend == "ray"
            async with asyncio.timeout(run.remaining() if remote else None):
                session = await self._sessions.open(name, run.resources)
        except (TimeoutError, ZygoteError, OSError, ClusterError) as exc:
            return await self._no_worker(run, exc, [])
        if not await _unless_stopped(session.lock.acquire(), run):  # stopped while an earlier run held it
            if not session.lock.locked():  # else the run holding it rests it when it ends, not now
                await self._sessions.rest(session)
            return _cancelled_early(run, [])
        if session.idle is not None:
            session.idle.cancel()  # set by the run that held the lock, after this run opened the session
        try:
            if session.worker.node is not None:
                _tell_node(run, [NodeAttempt(node=session.worker.node, outcome="running")])
            result = await self._execute(run, session.worker, session)
            session.names.add(run.program, run.encoded_inputs)  # its globals now, for the next run's wait
        finally:
            session.lock.release()
        worker = session.worker
        if worker.node is not None:
            ended = f"lost: {worker.lost}" if worker.lost else "finished"
            result.nodes = [NodeAttempt(node=worker.node, outcome=ended)]
        if worker.lost and result.error is not None:
            # Not replayed: its globals were made by every earlier run of the session, on that node.
            result.error["message"] += (
                f"; session {name!r} kept its globals on that node, and they are gone: its next run starts "
                "a new session"
            )
        self._pool.prepare_next()
        await self._sessions.rest(session)
        return result

    async def _execute(
        self, run: Run, worker: WorkerHandle, session: Session | None = None
    ) -> ExecutionResult:
        if session is None:
            try:
                reader, writer = await worker.connect()
            except NodeLostError as exc:
                worker.lost = exc.reason
                return _internal(run, str(exc), status="crashed", error_type="NodeLost")
        else:
            reader, writer = session.reader, session.writer
        state = Execution(
            run.execution_id,
            writer,
            self.max_output_bytes,
            plan=run.plan,
            watchers=run.watchers,
            fresh=session is None or session.runs == 0,
            started=run.started,
        )
        unsubscribe = self._hub.call_log.subscribe(state.collect)
        status: ExecutionStatus
        serve: asyncio.Future[None] | None = None
        error: ErrorRecord | None = None
        keep = False
        try:
            frame = RunFrame(
                type="run",
                code=run.code,
                filename=session.filename if session else "<code>",
                inputs=run.encoded_inputs,
                execution_id=run.execution_id,
                session=session is not None,
                tools=run.plan.descriptors(),
            )
            if shapes := self._shapes_frame():
                frame["shapes"] = shapes
            state.reply(frame)
            serve = asyncio.ensure_future(self._requests.serve(reader, state))
            try:
                stopped_pending = await self._wait(serve, state, run, worker)
            except (TimeoutError, _Cancelled) as stopped:
                answered = await self._stop(worker, serve, wait_for_answer=session is not None)
                if isinstance(stopped, _Cancelled):
                    status, error = "cancelled", run.cancelled_error()
                else:
                    status, error = "timeout", run.timeout_error()
                keep = answered  # a session survives a deadline (or a cancel) its program gave in to
            else:
                if stopped_pending:
                    serve.cancel()
                    status, error = "pending", None
                else:
                    status, error = await self._classify(state, worker)
                    keep = status in ("ok", "error")
        except asyncio.CancelledError:
            # Interrupted (a kernel interrupt, or the caller gave up): the worker goes the same way.
            with contextlib.suppress(BaseException):
                await asyncio.shield(self._stop(worker, serve, wait_for_answer=False))
            keep = False
            unsubscribe()
            raise
        finally:
            if worker.lost is None or session is not None:
                for task in state.calls:
                    task.cancel()  # in-flight tool calls are cancelled at their servers
            # else its node was lost, not the program: its calls finish and their results go in the record
            # the next attempt is answered from (so none is made twice)
            if session is None or not keep:
                if state.done is not None:
                    # The program reported back; its worker waits for its channel to close. Closing it and
                    # killing what is left a moment later lets the caller have its result (and the next
                    # run its start) before a process exits and its namespaces are torn down.
                    self._later.add(lambda: _close_and_kill(writer, worker))
                else:
                    writer.close()
                    worker.signal(signal.SIGKILL)
        if state.calls:  # let the cancelled calls record how they ended (or a lost node's calls finish)
            await asyncio.wait(set(state.calls), timeout=run.remaining() if worker.lost else 1.0)
        unsubscribe()
        if session is not None:
            session.runs += 1
            session.protections = state.protections or session.protections
            session.alive = keep
        value = state.done.get("value") if state.done and status == "ok" else None
        artifacts = await self._requests.artifacts_of(state)
        return ExecutionResult(
            status=status,
            execution_id=run.execution_id,
            value=value,
            error=error,
            stdout="".join(state.stdout),
            stderr="".join(state.stderr),
            output_truncated=state.truncated,
            tool_calls=self._calls_of(state),
            artifacts=artifacts,
            duration_ms=run.duration_ms(),
            timeout_s=run.limit,
            protections=_protection_list(state.protections or (session.protections if session else None)),
            pending_calls=[
                PendingCall(server=c["server"], tool=c["tool"], arguments=c["arguments"], seq=c["seq"])
                for c in sorted(state.pending, key=lambda c: (c["seq"] is None, c["seq"] or 0))
            ],
            completed=bool(state.done and status == "ok" and state.done.get("completed")),
            notes=state.notes,
            notes_dropped=state.notes_dropped,
        )

    async def _wait(
        self, serve: asyncio.Future[None], state: Execution, run: Run, worker: WorkerHandle
    ) -> bool:
        """Wait for the channel to end; True when the program is blocked on pending (unrecorded) calls.

        A parallel batch sends all its calls before it blocks, so pending calls are collected until none
        has arrived for a moment, and the run then stops with every one of them.

        Raises:
            TimeoutError: the run's time is up.
            _Cancelled: someone stopped the run (``run.stop``).
        """
        if run.stop.requested:
            raise _Cancelled
        loop = asyncio.get_running_loop()
        deadline = loop.time() + run.seconds
        stop = asyncio.ensure_future(run.stop.event.wait())
        try:
            return await self._wait_until(serve, state, deadline, worker, stop)
        finally:
            stop.cancel()

    async def _wait_until(
        self,
        serve: asyncio.Future[None],
        state: Execution,
        deadline: float,
        worker: WorkerHandle,
        stop: asyncio.Future[Any],
    ) -> bool:
        loop = asyncio.get_running_loop()
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError
            if stop.done():
                raise _Cancelled
            if state.pending:
                # Stop once no new pending call came for a moment and no other call was being answered
                # (its result belongs in the record the caller resumes with). Stopping too early costs
                # only a round: the resumed run replays what happened and goes on.
                seen, busy = len(state.pending), bool(state.calls)
                await asyncio.wait({serve, *state.calls}, timeout=min(_PENDING_QUIET, remaining))
                if serve.done():
                    return False
                if len(state.pending) == seen and not busy and not state.calls:
                    return True
                continue
            state.pending_changed.clear()
            changed = asyncio.ensure_future(state.pending_changed.wait())
            waiters: set[asyncio.Future[Any]] = {serve, changed, stop}
            if worker.node is not None and not worker.exited.done():
                waiters.add(worker.exited)  # a node found lost while its relay still seems open
            try:
                done, _ = await asyncio.wait(waiters, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()  # also when the run is cancelled: no task is left pending
            if serve in done:
                return False
            if stop in done:
                raise _Cancelled
            if worker.exited in done and isinstance(worker.exited.exception(), NodeLostError):
                serve.cancel()
                return False
            if not done:
                raise TimeoutError

    async def _classify(
        self, state: Execution, worker: WorkerHandle
    ) -> tuple[ExecutionStatus, ErrorRecord | None]:
        """Status and error once the channel has ended (done, closed, or broken)."""
        if state.done is not None:
            # The worker's report is final; it is killed (with anything it left) right after this.
            done_status, error = state.done["status"], state.done["error"]
            if done_status == "ok":
                return "ok", None
            if done_status == "internal" and not state.protections:  # the sandbox could not be entered
                return "internal", error or ErrorRecord(
                    type="InternalError", message="the worker failed to start"
                )
            return "error", error or ErrorRecord(type="Error", message="the program failed")
        if state.broken is not None:
            worker.signal(signal.SIGKILL)
            return "crashed", ErrorRecord(
                type="ProtocolError", message=f"the program broke the channel: {state.broken}"
            )
        try:
            how = await asyncio.wait_for(
                asyncio.shield(worker.exited), _EXIT_WAIT if worker.node is None else _NODE_EXIT_WAIT
            )
            description = how.describe()
        except NodeLostError as exc:
            worker.lost = exc.reason
            return "crashed", ErrorRecord(type="NodeLost", message=f"{exc}; the run was stopped there")
        except TimeoutError:
            worker.signal(signal.SIGKILL)
            description = "closed its channel and was killed"
        except ZygoteError as exc:  # the process that started it died too: its exit is not known
            worker.signal(signal.SIGKILL)
            description = f"ended with its worker process ({exc})"
        return "crashed", ErrorRecord(
            type="WorkerCrashed", message=f"the worker {description} before finishing"
        )

    async def _stop(
        self, worker: WorkerHandle, serve: asyncio.Future[None] | None, *, wait_for_answer: bool
    ) -> bool:
        """SIGINT, a grace period, then SIGKILL of the worker's process group.

        With ``wait_for_answer`` (a session), a program that gives in to the SIGINT and reports back within
        the grace period keeps its worker: returns True and kills nothing.
        """
        worker.signal(signal.SIGINT)
        if wait_for_answer and serve is not None:
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(serve), self.grace)
            if serve.done() and not serve.cancelled():
                return True
        else:
            # Until it exits, or reports back: a worker that has reported waits for its channel to close.
            ended: set[asyncio.Future[Any]] = {worker.exited, *([serve] if serve is not None else [])}
            await asyncio.wait(ended, timeout=self.grace, return_when=asyncio.FIRST_COMPLETED)
        worker.signal(signal.SIGKILL)
        if serve is not None:
            serve.cancel()
        return False

    def _calls_of(self, state: Execution) -> list[ToolCallRecord]:
        """The execution's calls in the order the program issued them, by the worker's numbers (``seq``).

        Not the order they started: the threads of a parallel batch reach the kernel in any order. The
        numbers are those the live view showed; a gap is a number the program used without a recorded
        call (a ``parallel`` slot that called no tool, a call refused before it was made).
        """
        return [record.to_json() for record in sorted(state.records.values(), key=call_order)]


def _protection_list(report: ProtectionsFrame | None) -> list[str]:
    """``["pid_namespace", ..., "missing:seccomp: reason"]``: what isolated this run, and what did not."""
    if report is None:
        return ["missing:sandbox: the worker reported no protections"]
    missing = [f"missing:{layer}: {reason}" for layer, reason in report["not_in_force"].items()]
    return [*report["in_force"], *missing]


def _internal(
    run: Run,
    message: str,
    *,
    status: ExecutionStatus = "internal",
    error_type: str = "InternalError",
    nodes: list[NodeAttempt] | None = None,
) -> ExecutionResult:
    """The result of a run that could not start (or reach its worker): the fault is not the program's."""
    return ExecutionResult(
        status=status,
        execution_id=run.execution_id,
        error=ErrorRecord(type=error_type, message=message),
        duration_ms=run.duration_ms(),
        timeout_s=run.limit,
        nodes=nodes,
    )


def _cancelled_early(run: Run, nodes: list[NodeAttempt]) -> ExecutionResult:
    """The result of a run stopped before it reached a worker (waiting for servers, a Ray node, a session)."""
    result = _internal(run, "", status="cancelled", error_type="Cancelled", nodes=nodes or None)
    result.error = run.cancelled_error()
    return result


class _Cancelled(Exception):
    """The run's ``stop`` was set: it ends as at its deadline, with status ``cancelled``."""


async def _unless_stopped(step: Awaitable[T], run: Run) -> T | None:
    """``step``'s result, or None when the run is stopped first (``step`` is then cancelled)."""
    if run.stop.requested:
        if asyncio.iscoroutine(step):
            step.close()
        return None
    task = asyncio.ensure_future(step)
    stop = asyncio.ensure_future(run.stop.event.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not task.done():
            task.cancel()
    if not task.done() or task.cancelled():
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    return task.result()


def _tell_node(run: Run, attempts: list[NodeAttempt]) -> None:
    """Tell the caller's live view where the run is now; a view that fails is logged, not the run's end."""
    if run.watchers.on_node is None:
        return
    try:
        run.watchers.on_node(attempts)
    except Exception:
        log.exception("execution %s: the on_node watcher failed", run.execution_id)


def _close_and_kill(writer: asyncio.StreamWriter, worker: WorkerHandle) -> None:
    writer.close()
    worker.signal(signal.SIGKILL)


class _Later:
    """Clean-ups a finished run leaves for a moment later, run at once by ``flush`` (when closing).

    Killing a process group or removing a temp dir just as a run returns costs the caller: the work holds
    the interpreter lock, or the CPU, while the caller's thread wakes up with its result. Without a running
    loop (a run's coroutine closed as its loop shuts down) a clean-up runs at once.
    """

    def __init__(self, delay: float) -> None:
        self._delay = delay
        self._pending: dict[int, tuple[asyncio.TimerHandle, Callable[[], None]]] = {}
        self._ids = itertools.count()

    def add(self, action: Callable[[], None]) -> None:
        """Run ``action`` after the delay, on this loop (now, if there is no running loop)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._run(action)
            return
        key = next(self._ids)
        self._pending[key] = (loop.call_later(self._delay, self._due, key), action)

    def flush(self) -> None:
        """Run every pending clean-up now."""
        pending, self._pending = self._pending, {}
        for handle, action in pending.values():
            handle.cancel()
            self._run(action)

    def _due(self, key: int) -> None:
        entry = self._pending.pop(key, None)
        if entry is not None:
            self._run(entry[1])

    @staticmethod
    def _run(action: Callable[[], None]) -> None:
        try:
            action()
        except Exception:  # a clean-up that fails must not take the loop with it
            log.exception("a clean-up after a run failed")


class _Either:
    """Names in either of two containers."""

    def __init__(self, first: Container[str], second: Container[str]) -> None:
        self._first, self._second = first, second

    def __contains__(self, name: object) -> bool:
        return name in self._first or name in self._second
