"""Reservations change hands only where it is fair to other runs (executor/cluster/reservations.py).

``place`` and ``remove`` here stand for Ray's placement group calls: a reservation is an object the test
makes, so what is given back to Ray, and when, can be read exactly.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from codemode_kernel.executor.cluster import reservations
from codemode_kernel.executor.cluster.reservations import Reservation, Reservations

ONE = {"CPU": 1.0}
TWO = {"CPU": 2.0}


class Ray:
    """Places a reservation when the test lets it; records what was given back."""

    def __init__(self) -> None:
        self.removed: list[Any] = []
        self.asked: list[dict[str, float]] = []
        self.gate = asyncio.Event()
        self.count = 0

    async def place(self, bundle: dict[str, float]) -> Reservation:
        self.asked.append(bundle)
        await self.gate.wait()
        self.count += 1
        return Reservation(f"group-{self.count}", "node-a", tuple(sorted(bundle.items())))

    def remove(self, group: Any) -> None:
        self.removed.append(group)


def test_a_released_reservation_goes_to_a_run_waiting_for_the_same_and_its_own_request_is_dropped() -> None:
    async def scenario() -> None:
        ray = Ray()
        book = Reservations(ray.place, ray.remove)
        ray.gate.set()
        first = await book.take(ONE)
        ray.gate.clear()
        waiting = asyncio.ensure_future(book.take(ONE))
        await asyncio.sleep(0)
        book.release(first, reuse=True)
        assert await waiting is first
        ray.gate.set()
        await asyncio.sleep(0.01)
        assert ray.asked == [ONE, ONE] and ray.count == 1, "the waiting run's own request was withdrawn"
        assert ray.removed == []

    asyncio.run(scenario())


def test_a_release_goes_back_to_ray_when_the_oldest_waiting_run_needs_other_resources() -> None:
    async def scenario() -> None:
        ray = Ray()
        book = Reservations(ray.place, ray.remove)
        ray.gate.set()
        first = await book.take(ONE)
        ray.gate.clear()
        bigger = asyncio.ensure_future(book.take(TWO))  # the oldest waiting run
        same = asyncio.ensure_future(book.take(ONE))
        await asyncio.sleep(0)
        book.release(first, reuse=True)
        assert ray.removed == [first.group], "Ray decides who gets the CPU the oldest waiter needs"
        assert not same.done() and not bigger.done()
        for task in (bigger, same):
            task.cancel()

    asyncio.run(scenario())


def test_a_reservation_changes_hands_only_for_a_while_then_ray_gets_it_back() -> None:
    async def scenario() -> None:
        ray = Ray()
        book = Reservations(ray.place, ray.remove)
        old = Reservation("old", "node-a", tuple(sorted(ONE.items())), placed=time.monotonic() - 10)
        waiting = asyncio.ensure_future(book.take(ONE))
        await asyncio.sleep(0)
        book.release(old, reuse=True)
        assert ray.removed == ["old"] and not waiting.done()
        waiting.cancel()

    asyncio.run(scenario())


def test_kept_reservations_go_back_when_their_node_is_lost_or_the_executor_closes_or_in_time() -> None:
    async def scenario() -> None:
        ray = Ray()
        book = Reservations(ray.place, ray.remove)
        on_a = Reservation("a", "node-a", tuple(sorted(ONE.items())))
        on_b = Reservation("b", "node-b", tuple(sorted(ONE.items())))
        book.release(on_a, reuse=True)
        book.release(on_b, reuse=True)
        assert ray.removed == []  # kept a moment for the next run
        book.forget_node("node-a")
        assert ray.removed == ["a"]
        assert await book.take(ONE) is on_b  # the kept one, with no request to Ray
        assert ray.asked == []
        book.release(on_b, reuse=True)
        book.clear()
        assert ray.removed == ["a", "b"]
        book.release(Reservation("late", "node-b", tuple(sorted(ONE.items()))), reuse=True)
        assert ray.removed[-1] == "late", "once closed, everything goes back at once"

    asyncio.run(scenario())


def test_an_unused_kept_reservation_goes_back_to_ray_after_a_moment(monkeypatch: Any) -> None:
    monkeypatch.setattr(reservations, "IDLE_KEEP", 0.05)

    async def scenario() -> None:
        ray = Ray()
        book = Reservations(ray.place, ray.remove)
        book.release(Reservation("kept", "node-a", tuple(sorted(ONE.items()))), reuse=True)
        await asyncio.sleep(0.2)
        assert ray.removed == ["kept"]

    asyncio.run(scenario())
