"""How long one code execution may run, stated once.

The config's ``codeMode`` bounds and defaults, the executor's check of a ``timeout``, the agent's and
``codemode serve``'s ``execute_python`` parameter, the CLI's ``--timeout`` and the messages and
descriptions that quote these numbers all read them here, so a change here changes every one of them.
``check_timeout`` is the one rule for a timeout someone asks for at a front door (``codemode serve``'s and
the agent's ``execute_python``, ``codemode run --timeout``, ``%%codemode --timeout``): a value outside the
range is refused with a message naming the field, never brought into range silently. The top of the range
is the config's ``codeMode.maxTimeout`` (``MAX_TIMEOUT`` unless raised, never above ``LONGEST_TIMEOUT``):
a program started in the background may run longer than one call waits.
Standard library only: both the kernel and a worker may import it.
"""

from __future__ import annotations

import math

from .errors import TimeoutValueError

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_SESSION_IDLE",
    "DEFAULT_TIMEOUT",
    "DEFAULT_WAIT",
    "LONGEST_TIMEOUT",
    "MAX_GRACE",
    "MAX_TIMEOUT",
    "MAX_WAIT",
    "MIN_GRACE",
    "MIN_TIMEOUT",
    "TIMEOUT_RANGE",
    "TimeoutValueError",
    "check_timeout",
    "timeout_range",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds one execution may run when nobody asks for another limit: long enough for a program making
dozens of tool calls, short enough that a forgotten loop does not hold a worker for minutes."""

MIN_TIMEOUT = 1.0
"""The shortest limit one may ask for: a smaller number is more likely a slip (milliseconds written for
seconds) than a wish, and would leave a program no time beyond starting."""

MAX_TIMEOUT = 300.0
"""The longest limit one may ask for unless the config's ``codeMode.maxTimeout`` says otherwise. A
worker's CPU-time limit is set from that maximum (plus the grace period), so raising it loosens the sandbox
for every execution (docs/threat-model.md)."""

LONGEST_TIMEOUT = 3600.0
"""The most ``codeMode.maxTimeout`` may allow: an hour, for programs started in the background and
waited for over several calls. Beyond that a job belongs to a scheduler, not to a sandboxed worker."""


def timeout_range(maximum: float = MAX_TIMEOUT) -> str:
    """The allowed limits up to ``maximum`` as messages and descriptions say them ("1 to 300")."""
    return f"{MIN_TIMEOUT:g} to {maximum:g}"


TIMEOUT_RANGE = timeout_range(MAX_TIMEOUT)
"""The allowed limits by default ("1 to 300"); ``timeout_range(settings.max_timeout)`` for a config's."""

DEFAULT_GRACE = 5.0
"""Seconds between SIGINT and SIGKILL at the deadline: time for a program's ``finally`` blocks and for
the worker to send what it printed before it is killed."""

MIN_GRACE = 0.0
"""No grace at all: SIGKILL right after SIGINT."""

MAX_GRACE = 60.0
"""The longest grace the config accepts; a program ignoring SIGINT for longer is not finishing."""

DEFAULT_WAIT = 25.0
"""Seconds one ``execute_python`` call waits for its program before answering ``running`` (the program
goes on; ``wait_execution`` comes back for it): below the 60 s many MCP hosts allow a tool call."""

MAX_WAIT = 120.0
"""The longest one call may wait for a program; a longer one is waited for again with ``wait_execution``."""

DEFAULT_SESSION_IDLE = 600.0
"""Seconds a session (globals kept between runs) may go without a run before its worker is ended: a
worker per forgotten session would otherwise live as long as the kernel."""


def check_timeout(value: object, *, field: str = "timeout", maximum: float = MAX_TIMEOUT) -> float:
    """``value`` as seconds, or TimeoutValueError naming ``field``, the range and the fix.

    Refused, not brought into range: whoever asked for 600 s (a person at the CLI, a model) learns at once
    that they will not get it and can choose what to do, instead of reading afterwards that a long job was
    stopped at 300 s. One rule, so the CLI, the magic, ``codemode serve`` and the agent answer alike.

    ``maximum``: the settings' ``max_timeout`` (``MAX_TIMEOUT`` by default). A value above it that a config
    could allow (up to ``LONGEST_TIMEOUT``) is refused with the setting that would allow it.

    A string holding a number (``"60"``, as models sometimes send JSON numbers) is that number, as the
    argument validation of ``codemode serve`` took it before this rule.

    Raises:
        TimeoutValueError: ``value`` is not a finite number (booleans are not numbers here), or is
            outside ``MIN_TIMEOUT`` to ``maximum``.
    """
    allowed = timeout_range(maximum)
    fix = f"pass a number of seconds from {allowed}, or leave {field} out for the default"
    if isinstance(value, str):
        value = _number(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise TimeoutValueError(f"{field}: {shown} is not a number of seconds; {fix}")
    if maximum < value <= LONGEST_TIMEOUT:
        fix += (
            f"; or allow it: set defaults.codeMode.maxTimeout to {value:g} or more "
            f"(up to {LONGEST_TIMEOUT:g}) in codemode.json"
        )
    if not MIN_TIMEOUT <= value <= maximum:
        raise TimeoutValueError(f"{field}: {value:g} seconds is outside {allowed}; {fix}")
    return float(value)


def _number(text: str) -> float | str:
    """``text`` as a float when it holds one, else ``text`` itself (then refused, shown as given)."""
    try:
        return float(text)
    except ValueError:
        return text
