"""SIGINT as ``KeyboardInterrupt``, whatever the parent left it as.

A process started with ``&`` from a script inherits SIGINT as ignored (Python then installs no handler of
its own), and a parent may leave SIGINT blocked in the signal mask; both survive ``fork`` and ``exec``. An
interrupt of the kernel, or of a program in a worker, is a SIGINT: the kernel (at start) and each worker
(before its program) set it up themselves. PID 1 of a namespace needs the handler most: the kernel drops
signals that PID 1 leaves at their default action.
"""

from __future__ import annotations

import signal

__all__ = ["handle_interrupts"]


def handle_interrupts() -> None:
    """Make SIGINT raise ``KeyboardInterrupt`` in this process, and unblock it in this thread.

    Threads started afterwards inherit the unblocked mask; call it before starting any.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
