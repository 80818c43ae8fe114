"""The environment, scrubbed to an allow-list: the kernel's API keys and tokens never reach the code.

``os.environ`` is rebuilt from the allowed names, then the extra variables and the private temp dir
(``HOME``, ``TMPDIR``, ``TEMP``, ``TMP``) are set. ``/proc/self/environ`` does not show ``os.environ``
but the block the process was *started* with, which a forked worker shares with its zygote; that block
is overwritten with zeros, so whatever the zygote was started with does not show either.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["scrub_environment"]


def _allowed(name: str, allowlist: Iterable[str]) -> bool:
    """Exact names, or a prefix with a final ``*`` (``LC_*``)."""
    return any(name == p or (p.endswith("*") and name.startswith(p[:-1])) for p in allowlist)


def scrub_environment(allowlist: Iterable[str], extra: Iterable[tuple[str, str]], home: Path | None) -> None:
    """Keep only allowed variables, set ``extra``, point the home and temp variables at ``home``."""
    patterns = tuple(allowlist)
    kept = {name: value for name, value in os.environ.items() if _allowed(name, patterns)}
    os.environ.clear()
    os.environ.update(kept)
    os.environ.update(dict(extra))
    if home is not None:
        for name in ("HOME", "TMPDIR", "TEMP", "TMP"):
            os.environ[name] = str(home)
    if "tempfile" in sys.modules:  # the zygote may have cached its temp dir; make the next call read TMPDIR
        setattr(sys.modules["tempfile"], "tempdir", None)  # noqa: B010
    _wipe_initial_block()


def _wipe_initial_block() -> None:
    """Zero the start-up environment strings (fields 50 and 51 of /proc/self/stat give their bounds).

    Safe once ``os.environ.clear()`` has unset every variable: the C library's ``environ`` no longer
    points into the block, and the values set since live in memory of their own.
    """
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return
    fields = stat[stat.rindex(")") + 2 :].split()
    start, end = int(fields[50 - 3]), int(fields[51 - 3])
    if 0 < start < end:
        ctypes.memset(start, 0, end - start)
