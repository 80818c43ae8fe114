"""Run a coroutine on the hub's loop while this (the kernel's main) thread shows what it reports.

Executions and agent runs live on the hub's loop; their callbacks fire there. Output, prints and widget
updates must come from the main thread, in order, so the callbacks only queue events and this thread
hands each to ``handle`` (and calls ``tick`` when nothing came for a moment, for clocks). An interrupt
(KeyboardInterrupt here) cancels the coroutine on the loop, which stops what it was doing.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_reporting"]

T = TypeVar("T")
_DONE = object()
_TICK = 0.25  # seconds without an event before ``tick`` is called


def run_reporting(
    loop_thread: Any,
    start: Callable[[Callable[[Any], None]], Coroutine[Any, Any, T]],
    handle: Callable[[Any], None],
    tick: Callable[[], None] = lambda: None,
) -> T:
    """``start(report)`` builds the coroutine, giving its callbacks ``report``; returns its result."""
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    future = loop_thread.submit(start(events.put))
    future.add_done_callback(lambda _: events.put(_DONE))
    try:
        while True:
            try:
                event = events.get(timeout=_TICK)
            except queue.Empty:
                tick()
                continue
            if event is _DONE:
                break
            handle(event)
    except BaseException:
        future.cancel()
        raise
    result: T = future.result()
    return result
