"""Background cells: ``%%codemode --background`` starts the program and the cell ends at once.

The program runs as an executor Job (executor/jobs.py). Its live view stays in the cell that started it:
a thread of its own (``codemode-bg-<id>``) pumps the job's events into the view, as the main thread does
for a foreground cell (pump.py), with ipykernel told that this thread's output belongs to that cell
(``set_thread_parent`` on the display publisher and the output streams): displays, display updates and
prints go to the cell that started the run, whatever cell runs now. At the end the view becomes the same
record a foreground run leaves.

The value: ``jobs[ID].value`` as soon as the run ends (``jobs`` in the namespace, ``codemode.jobs`` too).
``--out NAME`` binds it in the namespace at the next cell boundary (``pre_execute``, on the main thread),
or at once in ``%codemode wait``; never from the pump thread: a cell running at that moment would see a
name change under it mid-line (``x`` read twice giving two values), and IPython's namespace is not meant
to be written by another thread while code runs in it. A cell that starts after the run ended always sees
the name bound.

A kernel interrupt does not reach a background run (it raises in the main thread only, and workers run in
sessions of their own); ``%codemode cancel ID`` stops it, and so does a kernel restart or shutdown, which
waits (a few seconds at most) for each run's record to reach its cell before the kernel goes.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..approvals import ApprovalRequest, PromptApprover
from ..core.errors import JobNotFoundError
from ..core.records import JobEntry
from ..executor import ExecutionResult
from ..executor.jobs import Job, first_line
from ..views.live import LiveView
from ..worker.values import decode_value
from .pump import DONE, pump

__all__ = ["BackgroundApprover", "BackgroundRun", "BackgroundRuns"]

log = logging.getLogger(__name__)

KEPT_ENDED = 200
"""Ended runs ``jobs`` keeps (the oldest go first); each holds its output and record until dropped."""
SHUTDOWN_WAIT = 4.0
"""Seconds a shutdown waits for the cancelled runs' records to reach their cells. jupyter_client kills a
kernel that has not exited 5 s after a shutdown request; a program stops within a moment of SIGINT unless
it ignores it (then the grace period and SIGKILL follow, and the kernel may be gone first)."""
_WAIT_STEP = 0.2  # a blocking wait on the main thread waits in steps, so an interrupt ends it at once


class BackgroundApprover(PromptApprover):
    """Approvals in a background run: what the kernel allows ahead holds; nobody is asked.

    The cell has ended, so a question would go to whatever cell runs now (or none), and the program would
    wait for an answer nobody sees. A call that needs one is denied, saying how to allow it.
    """

    def __init__(self, kernel_approver: PromptApprover) -> None:
        super().__init__(_nobody, who=kernel_approver.who)
        self.allowed = kernel_approver.allowed  # the same set: %codemode approve, even later, counts

    def cannot_ask(self, request: ApprovalRequest) -> str:
        """The denial: a background run cannot ask; allow the tool ahead, or run it in the foreground."""
        name = request.qualified_name
        return (
            f"{name} needs approval ({request.reason}), and a background run cannot ask (its cell has "
            f"ended), so it was denied; nothing was sent. Fix: run `%codemode approve {name}` first "
            "(for this kernel), or run the cell without --background"
        )


async def _nobody(question: str) -> str:
    raise EOFError("a background run cannot ask")


@dataclass(eq=False)
class BackgroundRun:
    """One background cell's run, as ``jobs[ID]`` shows it: status, value, result, wait(), cancel()."""

    job: Job
    out: str | None
    """The name ``--out`` binds the value to, at the next cell boundary after the end."""
    first_line: str
    _shown: threading.Event = field(default_factory=threading.Event)
    """Set once the cell's output shows the record (the pump thread has ended)."""

    @property
    def id(self) -> str:
        """The execution id (the run's records carry it)."""
        return self.job.execution_id

    @property
    def status(self) -> str:
        """``running`` (``cancelling`` once asked to stop), then the result's status."""
        result = self.job.result
        if result is not None:
            return result.status
        return "cancelling" if self.job.cancelling else "running"

    @property
    def result(self) -> ExecutionResult | None:
        """The ExecutionResult once the run ended, else None."""
        return self.job.result

    @property
    def value(self) -> Any:
        """The program's value once it ended ok.

        Raises:
            RuntimeError: it is still running, or it ended without a value (the error says how).
        """
        result = self.job.result
        if result is None:
            raise RuntimeError(
                f"job {self.id} is still running; %codemode wait {self.id} (or jobs[{self.id!r}].wait()) "
                "waits for it"
            )
        if not result.ok:
            message = result.error["message"] if result.error else ""
            raise RuntimeError(f"job {self.id} ended {result.status}: {message}")
        return decode_value(result.value) if result.value is not None else None

    def wait(self, timeout: float | None = None) -> ExecutionResult | None:
        """Block until the run ends (its result) or ``timeout`` seconds pass (None).

        An interrupt stops the waiting, not the run.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _WAIT_STEP if deadline is None else min(_WAIT_STEP, deadline - time.monotonic())
            result = self.job.wait(max(left, 0.0))
            if result is not None or (deadline is not None and time.monotonic() >= deadline):
                if result is not None:
                    self._shown.wait(1.0)  # the cell's record first, then whatever the waiter prints
                return result

    def cancel(self, by: str | None = None) -> None:
        """Stop the run (SIGINT, grace period, SIGKILL); its record then says ``cancelled`` by ``by``."""
        self.job.cancel(by=by or f"jobs[{self.id!r}].cancel()")

    def __repr__(self) -> str:
        return f"<codemode job {self.id} {self.status}, {self.job.elapsed():.1f} s: {self.first_line}>"


class BackgroundRuns(Mapping[str, BackgroundRun]):
    """The kernel's background runs by execution id, oldest first (the namespace's ``jobs``)."""

    def __init__(self) -> None:
        self._runs: dict[str, BackgroundRun] = {}
        self._lock = threading.Lock()
        self._to_bind: list[BackgroundRun] = []
        self._threads: list[threading.Thread] = []
        self.on_change: list[Callable[[], None]] = []
        """Called when a run starts or ends (any thread): the kernel's state file lists them."""

    def __getitem__(self, key: str) -> BackgroundRun:
        return self.find(key)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._runs))

    def __len__(self) -> int:
        return len(self._runs)

    def __repr__(self) -> str:
        return jobs_table(list(self._runs.values()))

    def find(self, key: str) -> BackgroundRun:
        """The run with this id, or the one whose id starts with ``key``.

        Raises:
            JobNotFoundError: none does, or several do; the message lists the ids there are.
        """
        if key in self._runs:
            return self._runs[key]
        fits = [run for run_id, run in self._runs.items() if key and run_id.startswith(key)]
        if len(fits) == 1:
            return fits[0]
        known = ", ".join(self._runs) or "none yet"
        if fits:
            raise JobNotFoundError(f"several jobs start with {key!r}: {', '.join(r.id for r in fits)}")
        raise JobNotFoundError(f"no job of this kernel has the id {key!r} (ids: {known})")

    def start(
        self,
        start_job: Callable[[Callable[[Any], None]], Job],
        *,
        live: LiveView | None,
        handle: Callable[[Any], None],
        out: str | None,
        code: str,
        parent: Mapping[str, Any] | None,
        on_end: Callable[[BackgroundRun], None],
    ) -> BackgroundRun:
        """Start the job (``start_job(report)``, its watchers queueing on ``report``) and its pump thread.

        ``handle`` shows each event (pump.py); ``on_end`` runs on the pump thread once the job ended, and
        shows its record in the cell (``parent``: the cell's request, which the thread's output belongs to).
        """
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        job = start_job(events.put)
        job.future.add_done_callback(lambda _: events.put(DONE))
        job.future.add_done_callback(lambda _: self._changed())
        run = BackgroundRun(job, out, first_line(code, limit=10_000))
        with self._lock:
            self._runs[run.id] = run
            ended = [key for key, kept in self._runs.items() if kept.job.done]
            for key in ended[: max(0, len(ended) - KEPT_ENDED)]:
                del self._runs[key]
        tick = live.tick if live is not None else (lambda: None)

        def follow() -> None:
            with _output_of(parent):
                try:
                    _follow(run, events, handle, tick, on_end)
                finally:
                    if out is not None:
                        with self._lock:
                            self._to_bind.append(run)
                    run._shown.set()

        thread = threading.Thread(target=follow, name=f"codemode-bg-{run.id}", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        self._changed()
        return run

    def _changed(self) -> None:
        for listener in self.on_change:
            listener()

    def entries(self, limit: int) -> list[JobEntry]:
        """The last ``limit`` runs, newest first, as the kernel's state file lists them."""
        with self._lock:
            runs = list(self._runs.values())[-limit:]
        return [_entry(run) for run in reversed(runs)]

    def bind_ended(self, namespace: dict[str, Any]) -> list[str]:
        """Bind the ``--out`` names of the runs that ended ok since the last call; returns the names bound.

        Called on the main thread only (before each execution, and by ``%codemode wait``).
        """
        with self._lock:
            ended, self._to_bind = self._to_bind, []
        bound = []
        for run in ended:
            result = run.result
            if run.out is not None and result is not None and result.ok:
                namespace[run.out] = run.value
                bound.append(run.out)
        return bound

    def shutdown(self, by: str) -> None:
        """Cancel every running job (``by`` says who); wait for each cell to show its record.

        At most ``SHUTDOWN_WAIT`` seconds in all.
        """
        with self._lock:
            running = [run for run in self._runs.values() if not run.job.done]
        for run in running:
            run.job.cancel(by=by)
        deadline = time.monotonic() + SHUTDOWN_WAIT
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for stream in (sys.stdout, sys.stderr):
            stream.flush()


def _follow(
    run: BackgroundRun,
    events: queue.SimpleQueue[Any],
    handle: Callable[[Any], None],
    tick: Callable[[], None],
    on_end: Callable[[BackgroundRun], None],
) -> None:
    """Show the run's events until it ends, then its record; a view that fails says so in the cell.

    The run goes on whatever the view does (its record is in ``jobs[ID].result`` at the end).
    """
    try:
        pump(events, handle, tick)
    except Exception as exc:
        log.exception("codemode: the live view of background job %s failed", run.id)
        print(
            f"codemode: the live view of job {run.id} failed ({exc!r}); the record follows at the end",
            file=sys.stderr,
            flush=True,
        )
        run.job.wait()
    try:
        on_end(run)
    except Exception as exc:
        log.exception("codemode: the record of background job %s could not be shown", run.id)
        print(
            f"codemode: the record of job {run.id} could not be shown ({exc!r}); "
            f"jobs[{run.id!r}].result has it",
            file=sys.stderr,
            flush=True,
        )


def _entry(run: BackgroundRun) -> JobEntry:
    result = run.result
    return JobEntry(
        id=run.id,
        status=run.status,
        first_line=run.first_line,
        started=datetime.fromtimestamp(run.job.started_at, UTC).isoformat(timespec="milliseconds"),
        seconds=round(result.duration_ms / 1000, 1) if result is not None else None,
    )


def jobs_table(runs: list[BackgroundRun]) -> str:
    """``%codemode jobs``: id, status, seconds, the program's first line; one run a line."""
    if not runs:
        return "codemode: no background runs in this kernel (%%codemode --background starts one)"
    lines = [f"{'id':<12}  {'status':<10}  {'seconds':>7}  first line"]
    for run in runs:
        first = run.first_line if len(run.first_line) <= 60 else run.first_line[:59] + "…"
        lines.append(f"{run.id:<12}  {run.status:<10}  {run.job.elapsed():>7.1f}  {first}")
    return "\n".join(lines)


@contextmanager
def _output_of(parent: Mapping[str, Any] | None) -> Iterator[None]:
    """This thread's displays and prints go to the cell of ``parent`` (ipykernel's per-thread parent)."""
    from IPython.core.getipython import get_ipython

    shell = get_ipython()  # type: ignore[no-untyped-call]
    targets: list[Any] = [getattr(shell, "display_pub", None), sys.stdout, sys.stderr] if parent else []
    tokens = [(t, t.set_thread_parent(parent)) for t in targets if hasattr(t, "set_thread_parent")]
    try:
        yield
    finally:
        for target, token in reversed(tokens):
            target.reset_thread_parent(token)
