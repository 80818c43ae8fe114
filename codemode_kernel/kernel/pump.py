"""Run a coroutine on the hub's loop while this (the kernel's main) thread shows what it reports.

Executions and agent runs live on the hub's loop; their callbacks fire there. Output, prints and widget
updates must come from one thread, in order, so the callbacks only queue events and that thread hands
each to ``handle`` (and calls ``tick`` when nothing came for a moment, for clocks). For a foreground run
that thread is the kernel's main thread (``run_reporting``); an interrupt (KeyboardInterrupt there) cancels
the coroutine on the loop, which stops what it was doing. A background run (background.py) has a thread
of its own that runs ``pump`` until the run ends.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..hub.loop import LoopThread

__all__ = ["DONE", "pump", "run_reporting"]

T = TypeVar("T")
E = TypeVar("E")


class _Done:
    """The run ended (its own type, so the loop below can tell it from any event)."""


DONE = _Done()
"""Put on the events queue after the run's last event: ``pump`` returns."""
_TICK = 0.25  # seconds without an event before ``tick`` is called


def pump(events: queue.SimpleQueue[Any], handle: Callable[[Any], None], tick: Callable[[], None]) -> None:
    """Hand each event to ``handle`` on this thread, in order, until ``DONE`` comes; ``tick`` meanwhile."""
    while True:
        try:
            event = events.get(timeout=_TICK)
        except queue.Empty:
            tick()
            continue
        if isinstance(event, _Done):
            return
        handle(event)


def run_reporting(
    loop_thread: LoopThread,
    start: Callable[[Callable[[E], None]], Coroutine[Any, Any, T]],
    handle: Callable[[E], None],
    tick: Callable[[], None] = lambda: None,
) -> T:
    """``start(report)`` builds the coroutine, giving its callbacks ``report``; returns its result.

    Each event ``report`` is given reaches ``handle`` on this thread, in order.
    """
    events: queue.SimpleQueue[E | _Done] = queue.SimpleQueue()
    future = loop_thread.submit(start(events.put))
    future.add_done_callback(lambda _: events.put(DONE))
    try:
        pump(events, handle, tick)
    except BaseException:
        future.cancel()
        raise
    result: T = future.result()
    return result
