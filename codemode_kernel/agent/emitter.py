"""Hand events to the caller's callback on the caller's thread, whichever thread they happen on.

A program's output and tool calls are reported on the hub's thread while the agent awaits on its own
loop; a notebook view wants them in order, on one thread, without locking. Events from another thread
are queued onto the caller's loop (``call_soon_threadsafe``), which also keeps them ahead of the
execution's end, whose wake-up is queued the same way and later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

from .events import AgentEvent, EventCallback

__all__ = ["Emitter"]

log = logging.getLogger(__name__)


class Emitter:
    """Calls ``callback(event)`` on the thread that created it; never lets the callback's errors out."""

    def __init__(self, callback: EventCallback | None) -> None:
        self._callback = callback
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def __call__(self, event: AgentEvent) -> None:
        """Deliver ``event`` now (same thread) or queue it onto the caller's loop (another thread)."""
        if self._callback is None:
            return
        if threading.get_ident() == self._thread:
            self._deliver(event)
            return
        # A closed loop (RuntimeError) means the run is over and nobody is watching.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._deliver, event)

    def _deliver(self, event: AgentEvent) -> None:
        assert self._callback is not None
        try:
            self._callback(event)
        except Exception:  # a broken live view must not break the agent
            log.exception("an agent on_event callback failed on %s", type(event).__name__)
