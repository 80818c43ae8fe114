"""File descriptors: the worker keeps only the ones the runner names.

Anything else a forked process holds was opened by the zygote or the kernel for their own use, and an
open descriptor is a capability no later layer takes away: a directory opened before the mounts still
reaches what they cover, a socket opened before the network namespace still talks to the host.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

__all__ = ["close_fds_except"]

_FALLBACK_LIMIT = 65536


def close_fds_except(keep: Iterable[int]) -> None:
    """Close every descriptor above 2 that is not in ``keep`` (0, 1 and 2 always stay)."""
    kept = {fd for fd in keep if fd >= 0} | {0, 1, 2}
    try:
        candidates = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc here: walk the range instead
        candidates = list(range(3, _FALLBACK_LIMIT))
    for fd in candidates:
        if fd not in kept:
            with contextlib.suppress(OSError):  # the descriptor listdir itself used is already gone
                os.close(fd)
