"""hub.loop.blocking: a sync twin made from one coroutine, run on its owner's loop thread."""

from __future__ import annotations

import gc
import inspect
import threading
import warnings

import pytest

from codemode_kernel.hub.loop import LoopThread, blocking


class Owner:
    """Stands for ToolHub: a loop thread once started, and one coroutine with its twin."""

    def __init__(self) -> None:
        self.thread: LoopThread | None = None

    def require(self) -> LoopThread:
        if self.thread is None:
            raise RuntimeError("not started")
        return self.thread

    async def aadd(self, a: int, b: int = 1, *, times: int = 1) -> tuple[int, str]:
        """Add, and say which thread did it."""
        return (a + b) * times, threading.current_thread().name

    add = blocking(aadd, loop=lambda owner: owner.require())


def test_the_twin_has_the_coroutine_s_face_without_the_a() -> None:
    assert (Owner.add.__name__, Owner.add.__qualname__) == ("add", "Owner.add")
    assert Owner.add.__doc__ == Owner.aadd.__doc__
    assert inspect.signature(Owner().add) == inspect.signature(Owner().aadd)
    assert not inspect.iscoroutinefunction(Owner.add)


def test_the_twin_runs_the_coroutine_on_the_loop_thread() -> None:
    owner = Owner()
    owner.thread = LoopThread(name="owner-loop")
    try:
        assert owner.add(2, 3, times=2) == (10, "owner-loop")
    finally:
        owner.thread.stop()


def test_a_refused_loop_makes_no_coroutine() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="not started"):
            Owner().add(1)
        gc.collect()  # a coroutine made and dropped would say "never awaited" now
    assert not [w for w in caught if "never awaited" in str(w.message)]
