"""How long one code execution may run, stated once.

The config's ``codeMode`` bounds and defaults, the executor's check of a ``timeout``, the agent's and
``codemode serve``'s ``execute_python`` parameter, the CLI's ``--timeout`` and the messages and
descriptions that quote these numbers all read them here, so a change here changes every one of them.
``check_timeout`` is the one rule for a timeout someone asks for at a front door (``codemode serve``'s and
the agent's ``execute_python``, ``codemode run --timeout``, ``%%codemode --timeout``): a value outside the
range is refused with a message naming the field, never brought into range silently.
Standard library only: both the kernel and a worker may import it.
"""

from __future__ import annotations

import math

from .errors import TimeoutValueError

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_SESSION_IDLE",
    "DEFAULT_TIMEOUT",
    "MAX_GRACE",
    "MAX_TIMEOUT",
    "MIN_GRACE",
    "MIN_TIMEOUT",
    "TIMEOUT_RANGE",
    "TimeoutValueError",
    "check_timeout",
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


def check_timeout(value: object, *, field: str = "timeout") -> float:
    """``value`` as seconds, or TimeoutValueError naming ``field``, the range and the fix.

    Refused, not brought into range: whoever asked for 600 s (a person at the CLI, a model) learns at once
    that they will not get it and can choose what to do, instead of reading afterwards that a long job was
    stopped at 300 s. One rule, so the CLI, the magic, ``codemode serve`` and the agent answer alike.

    A string holding a number (``"60"``, as models sometimes send JSON numbers) is that number, as the
    argument validation of ``codemode serve`` took it before this rule.

    Raises:
        TimeoutValueError: ``value`` is not a finite number (booleans are not numbers here), or is
            outside ``MIN_TIMEOUT`` to ``MAX_TIMEOUT``.
    """
    fix = f"pass a number of seconds from {TIMEOUT_RANGE}, or leave {field} out for the default"
    if isinstance(value, str):
        value = _number(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise TimeoutValueError(f"{field}: {shown} is not a number of seconds; {fix}")
    if not MIN_TIMEOUT <= value <= MAX_TIMEOUT:
        raise TimeoutValueError(f"{field}: {value:g} seconds is outside {TIMEOUT_RANGE}; {fix}")
    return float(value)


def _number(text: str) -> float | str:
    """``text`` as a float when it holds one, else ``text`` itself (then refused, shown as given)."""
    try:
        return float(text)
    except ValueError:
        return text
