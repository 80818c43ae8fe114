"""A tool call's progress in a program: ``on_progress=`` callbacks and ``stream(...)`` iterators.

A server reports progress on a long call (MCP ``notifications/progress``). The hub receives it on its own
thread and a worker's channel on the thread that reads; a program wants it on its own thread, between its own
statements, so a callback that prints or appends needs no lock. ``wait_reporting`` does that for a
blocking call: the caller's thread waits on a queue of updates and runs the callback for each until the
answer comes. ``ToolStream`` is the iterator form (the UTCP design's ``CallToolStream``): the call runs
on a thread of its own and the program iterates over its updates, then reads ``result``.

Standard library only: a worker imports it.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # a worker loads these (and logging, heapq) only for a program that uses them
    from concurrent.futures import Future
    from queue import SimpleQueue

__all__ = [
    "ProgressHandler",
    "ToolProgress",
    "ToolStream",
    "check_handler",
    "loop_reporter",
    "wait_reporting",
]


class ToolProgress(NamedTuple):
    """One progress notification from the server running a call."""

    progress: float
    """How far it is, in the server's units (it only ever grows)."""
    total: float | None
    """Where it will end, when the server knows."""
    message: str | None
    """What the server says it is doing."""

    @property
    def fraction(self) -> float | None:
        """``progress / total`` between 0 and 1, when the server gave a total."""
        if not self.total:
            return None
        return max(0.0, min(1.0, self.progress / self.total))

    def __str__(self) -> str:
        amount = f"{self.progress:g}/{self.total:g}" if self.total else f"{self.progress:g}"
        return f"{amount} {self.message}" if self.message else amount


ProgressHandler = Callable[[ToolProgress], Any]
"""A program's ``on_progress``: called with each ``ToolProgress`` of one call, on the caller's thread."""

_DONE = object()


def check_handler(function: str, handler: object) -> ProgressHandler | None:
    """The ``on_progress`` argument, checked: a function of one argument, or None.

    Raises:
        TypeError: anything else, naming the function and the fix.
    """
    if handler is None or callable(handler):
        return handler  # type: ignore[return-value]
    raise TypeError(
        f"{function}(): on_progress must be a function of one argument (a ToolProgress), not a "
        f"{type(handler).__name__}; write on_progress=lambda p: print(p.message)"
    )


def notify(function: str, handler: ProgressHandler, update: ToolProgress) -> None:
    """Run the program's callback; a callback that fails is reported on stderr and the call goes on."""
    try:
        handler(update)
    except Exception:
        import traceback  # loaded only when a callback failed

        print(f"{function}(): the on_progress callback failed (the call goes on):", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)


def loop_reporter(loop: Any, function: str, handler: ProgressHandler) -> Callable[[ToolProgress], None]:
    """A thread-safe ``report`` that runs ``handler`` on the asyncio ``loop`` awaiting the call.

    An update that arrives after that loop closed (the program gave up on the call) is dropped.
    """

    def report(update: ToolProgress) -> None:
        if loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # closed between the check and the call
            loop.call_soon_threadsafe(notify, function, handler, update)

    return report


def wait_reporting(
    function: str,
    start: Callable[[Callable[[ToolProgress], None]], Future[Any]],
    handler: ProgressHandler,
) -> Any:
    """Start a call with ``start(report)`` and wait for it, running ``handler`` here for each update.

    ``report`` may be called from any thread; the updates reach ``handler`` in order, all before the
    answer. Interrupting the wait cancels the call's future.
    """
    from queue import SimpleQueue

    updates: SimpleQueue[Any] = SimpleQueue()
    future = start(updates.put)
    future.add_done_callback(lambda _: updates.put(_DONE))
    try:
        while (update := updates.get()) is not _DONE:
            notify(function, handler, update)
    except BaseException:
        future.cancel()
        raise
    return future.result()


class ToolStream:
    """A tool call whose progress a program iterates over; ``result`` is its answer afterwards.

    ``for update in stream(get_forecast, city="Oslo"): print(update.message)`` runs the call on a thread
    of its own and yields each ``ToolProgress`` as the server sends it; when the loop ends, ``result`` is
    what the call returned (reading it first waits for the call). A call that fails raises its error from
    the loop (or from ``result``). ``async for`` works with an ``atools`` function.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        wrap: Callable[[Callable[[], Any]], Callable[[], Any]] | None = None,
    ) -> None:
        if not callable(function):
            raise TypeError(
                f"stream(): the first argument is a {type(function).__name__}, not a tool function; "
                "write stream(get_forecast, city='Oslo')"
            )
        if "on_progress" in kwargs:
            raise TypeError("stream(): the stream is the progress; pass no on_progress")
        self._function, self._args, self._kwargs = function, args, kwargs
        self._wrap = wrap
        from queue import SimpleQueue

        self._updates: SimpleQueue[Any] = SimpleQueue()
        self._outcome: tuple[bool, Any] | None = None
        self._thread: threading.Thread | None = None
        self._name = getattr(function, "__name__", "tool")

    def __repr__(self) -> str:
        state = "done" if self._outcome is not None else "running" if self._thread else "not started"
        return f"<ToolStream {self._name}() {state}>"

    # -- the blocking form ------------------------------------------------------------------------

    def __iter__(self) -> Iterator[ToolProgress]:
        self._start()
        while (update := self._updates.get()) is not _DONE:
            yield update
        self._updates.put(_DONE)  # a second iteration (or ``result``) ends at once
        self._raise_failure()

    def _start(self) -> None:
        if self._thread is not None:
            return

        def call() -> Any:
            result = self._function(*self._args, on_progress=self._updates.put, **self._kwargs)
            if inspect.isawaitable(result):
                getattr(result, "close", lambda: None)()  # never awaited: no warning about it
                raise TypeError(
                    f"stream(): {self._name} is an async function; write async for p in "
                    f"stream(atools.{self._name}, ...), or a plain for loop with the function from tools"
                )
            return result

        body = self._wrap(call) if self._wrap is not None else call

        def run() -> None:
            try:
                self._outcome = (True, body())
            except BaseException as exc:  # handed to the program's thread, which raises it
                self._outcome = (False, exc)
            finally:
                self._updates.put(_DONE)

        self._thread = threading.Thread(target=run, name=f"stream-{self._name}", daemon=True)
        self._thread.start()

    @property
    def result(self) -> Any:
        """The call's answer (waits for the call, skipping the updates not iterated over)."""
        if self._thread is None and self._outcome is None:
            self._start()
        if self._thread is not None:
            self._thread.join()
        self._raise_failure()
        assert self._outcome is not None
        return self._outcome[1]

    def _raise_failure(self) -> None:
        if self._outcome is not None and not self._outcome[0]:
            raise self._outcome[1]

    # -- the async form ---------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[ToolProgress]:
        return self._aiterate()

    async def _aiterate(self) -> AsyncIterator[ToolProgress]:
        import asyncio  # only a program that awaits loads it

        if self._outcome is not None:
            self._raise_failure()
            return
        updates: asyncio.Queue[Any] = asyncio.Queue()
        coroutine = self._function(*self._args, on_progress=updates.put_nowait, **self._kwargs)
        if not isinstance(coroutine, Awaitable):
            raise TypeError(
                f"stream(): async for needs an atools function; write async for p in "
                f"stream(atools.{self._name}, ...), or a plain for loop with {self._name}"
            )

        async def call() -> None:
            try:
                self._outcome = (True, await coroutine)
            except BaseException as exc:
                self._outcome = (False, exc)
            finally:
                updates.put_nowait(_DONE)

        task = asyncio.ensure_future(call())
        try:
            while (update := await updates.get()) is not _DONE:
                yield update
        finally:
            if not task.done():
                task.cancel()
        self._raise_failure()
