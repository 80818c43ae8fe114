"""How long one code execution may run, stated once.

The config's ``codeMode`` bounds and defaults, the executor's check of a ``timeout``, the agent's and
``codemode serve``'s ``execute_python`` parameter, the CLI's ``--timeout`` and the messages and
descriptions that quote these numbers all read them here, so a change here changes every one of them.
Standard library only (nothing at all, in fact): both the kernel and a worker may import it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_SESSION_IDLE",
    "DEFAULT_TIMEOUT",
    "MAX_GRACE",
    "MAX_TIMEOUT",
    "MIN_GRACE",
    "MIN_TIMEOUT",
    "TIMEOUT_RANGE",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds one execution may run when nobody asks for another limit: long enough for a program making
dozens of tool calls, short enough that a forgotten loop does not hold a worker for minutes."""

MIN_TIMEOUT = 1.0
"""The shortest limit one may ask for: a smaller number is more likely a slip (milliseconds written for
seconds) than a wish, and would leave a program no time beyond starting."""

MAX_TIMEOUT = 300.0
"""The longest limit one may ask for. A worker's CPU-time limit is set from it (plus the grace period), so
raising it loosens the sandbox for every execution (docs/threat-model.md)."""

TIMEOUT_RANGE = f"{MIN_TIMEOUT:g} to {MAX_TIMEOUT:g}"
"""The allowed limits as messages and descriptions say them ("1 to 300")."""

DEFAULT_GRACE = 5.0
"""Seconds between SIGINT and SIGKILL at the deadline: time for a program's ``finally`` blocks and for
the worker to send what it printed before it is killed."""

MIN_GRACE = 0.0
"""No grace at all: SIGKILL right after SIGINT."""

MAX_GRACE = 60.0
"""The longest grace the config accepts; a program ignoring SIGINT for longer is not finishing."""

DEFAULT_SESSION_IDLE = 600.0
"""Seconds a session (globals kept between runs) may go without a run before its worker is ended: a
worker per forgotten session would otherwise live as long as the kernel."""
