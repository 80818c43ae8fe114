"""``%codemode jobs``, ``wait ID [--timeout S]``, ``cancel ID``: the background runs (background.py).

Each prints what happened in plain lines; a mistake is a UsageError that says what to type instead.
"""

from __future__ import annotations

import sys
from typing import Any

from IPython.core.error import UsageError

from ..core.errors import JobNotFoundError
from ..core.limits import DEFAULT_GRACE
from ..executor import ExecutionResult
from ..views.display import result_text
from .background import BackgroundRun, BackgroundRuns, jobs_table

__all__ = ["job_command"]

JOBS_USAGE = "%codemode jobs | wait ID [--timeout S] | cancel ID (ID: a job's id, or its start)"
_CANCEL_WAIT = DEFAULT_GRACE + 10.0
"""Seconds ``cancel`` waits to say how the run ended: SIGINT, the grace period, SIGKILL, the record."""


def job_command(runs: BackgroundRuns, namespace: dict[str, Any], command: str, words: list[str]) -> str:
    """Run ``%codemode jobs|wait|cancel``; returns the lines to print."""
    if command == "jobs":
        if words:
            raise UsageError(f"usage: {JOBS_USAGE}")
        return jobs_table(list(runs.values()))
    if command == "wait":
        run, timeout = _find(runs, words, with_timeout=True)
        return _wait(runs, namespace, run, timeout)
    run, _ = _find(runs, words, with_timeout=False)
    if run.result is not None:
        return f"codemode: job {run.id} already ended {run.status}; nothing to cancel"
    run.cancel(by="%codemode cancel")
    result = run.wait(_CANCEL_WAIT)
    if result is None:
        return f"codemode: job {run.id} asked to stop; still ending after {_CANCEL_WAIT:.0f} s"
    seconds = result.duration_ms / 1000
    return f"codemode: job {run.id} {result.status} after {seconds:.1f} s; its cell shows the record"


def _find(
    runs: BackgroundRuns, words: list[str], *, with_timeout: bool
) -> tuple[BackgroundRun, float | None]:
    """The run ``words`` names, and ``--timeout S`` when allowed."""
    timeout: float | None = None
    if with_timeout and len(words) == 3 and words[1] == "--timeout":
        try:
            timeout = float(words[2])
        except ValueError:
            timeout = -1.0
        if not timeout >= 0:
            raise UsageError(f"%codemode wait: --timeout takes seconds (0 or more), not {words[2]!r}")
        words = words[:1]
    if len(words) != 1:
        raise UsageError(f"usage: {JOBS_USAGE}")
    try:
        return runs.find(words[0]), timeout
    except JobNotFoundError as exc:
        raise UsageError(f"%codemode: {exc}; %codemode jobs lists them") from None


def _wait(runs: BackgroundRuns, namespace: dict[str, Any], run: BackgroundRun, timeout: float | None) -> str:
    """Block until the run ends; an interrupt stops the waiting (said), never the run."""
    try:  # the line too: an interrupt may come while it is being flushed, as soon as a frontend saw it
        if run.result is None:
            print(
                f"codemode: waiting for job {run.id} (an interrupt stops the waiting, not the job)",
                flush=True,
            )
        result = run.wait(timeout)
    except KeyboardInterrupt:
        print(
            f"codemode: stopped waiting; job {run.id} still runs ({run.status})", file=sys.stderr, flush=True
        )
        raise
    if result is None:
        return (
            f"codemode: job {run.id} still running after {timeout:g} s (%codemode cancel {run.id} stops it)"
        )
    bound = runs.bind_ended(namespace)
    return _ended(run, result, bound)


def _ended(run: BackgroundRun, result: ExecutionResult, bound: list[str]) -> str:
    """The job's summary (status, calls, value or error), and the ``--out`` name bound now."""
    lines = [f"job {run.id}: {result_text(result)}"]
    if run.out is not None and result.ok:
        lines.append(f"--out {run.out}: bound{' now' if run.out in bound else ' before this cell'}")
    return "\n".join(lines)
