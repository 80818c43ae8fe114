"""Reservations: Ray placement groups handed from a run that ended to the next run that needs the same.

Ray places a run's one-bundle placement group at once when a node has room; one that does not fit is
looked at again on the GCS's one-second tick, not when another run gives its resources back. So on a full
cluster every run would wait up to a second for the reservation the last one just released. A finished
run's reservation therefore goes straight to a run waiting for the same resources (which gives up its own
pending request), or waits a moment for the next one, and only then goes back to Ray. Ray still decides
where every reservation is: this only keeps one from changing hands through the GCS's queue.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["IDLE_KEEP", "Reservation", "Reservations"]

IDLE_KEEP = 1.0
"""Seconds a released reservation waits for a run that needs the same before Ray gets it back."""

Bundle = tuple[tuple[str, float], ...]


@dataclass
class Reservation:
    """One run's resources, reserved by Ray on one node."""

    group: Any
    node: str
    bundle: Bundle


class Reservations:
    """Reservations by the resources they hold: waiting runs, and released ones kept for a moment."""

    def __init__(
        self, place: Callable[[dict[str, float]], Awaitable[Reservation]], remove: Callable[[Any], None]
    ) -> None:
        """Keep reservations made by ``place`` and given back by ``remove``.

        ``place(bundle)`` asks Ray for a reservation and gives back what it made if it is cancelled;
        ``remove(group)`` gives one back to Ray.
        """
        self._place = place
        self._remove = remove
        self._idle: dict[Bundle, list[tuple[Reservation, asyncio.TimerHandle]]] = defaultdict(list)
        self._waiting: dict[Bundle, deque[asyncio.Future[Reservation]]] = defaultdict(deque)

    async def take(self, bundle: dict[str, float]) -> Reservation:
        """A reservation of ``bundle``: one just released, else Ray's, or one released while Ray's waits."""
        key: Bundle = tuple(sorted(bundle.items()))
        if self._idle[key]:
            reservation, expiry = self._idle[key].pop()
            expiry.cancel()
            return reservation
        handed: asyncio.Future[Reservation] = asyncio.get_running_loop().create_future()
        self._waiting[key].append(handed)
        placing = asyncio.ensure_future(self._place(bundle))
        try:
            await asyncio.wait({placing, handed}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            self._forget(key, handed)
            if handed.done() and not handed.cancelled():  # handed over just as the run gave up
                self.release(handed.result(), reuse=True)
            self._drop(placing)
            raise
        self._forget(key, handed)
        if handed.done() and not handed.cancelled():
            self._drop(placing)  # Ray's is not needed: the place() under way gives it back
            return handed.result()
        return placing.result()

    def release(self, reservation: Reservation, *, reuse: bool) -> None:
        """A run's reservation back: to a run waiting for the same, kept a moment, or to Ray.

        ``reuse`` False gives it to Ray at once: its node was lost (Ray moves such reservations itself),
        or the run never started on it.
        """
        if not reuse:
            self._remove(reservation.group)
            return
        waiting = self._waiting[reservation.bundle]
        while waiting:
            handed = waiting.popleft()
            if not handed.done():
                handed.set_result(reservation)
                return
        loop = asyncio.get_running_loop()
        expiry = loop.call_later(IDLE_KEEP, self._expire, reservation)
        self._idle[reservation.bundle].append((reservation, expiry))

    def clear(self) -> None:
        """Give every kept reservation back to Ray (the executor is closing)."""
        idle, self._idle = self._idle, defaultdict(list)
        for kept in idle.values():
            for reservation, expiry in kept:
                expiry.cancel()
                self._remove(reservation.group)

    def _expire(self, reservation: Reservation) -> None:
        kept = self._idle.get(reservation.bundle, [])
        for index, (held, _) in enumerate(kept):
            if held is reservation:
                del kept[index]
                self._remove(reservation.group)
                return

    def _forget(self, key: Bundle, handed: asyncio.Future[Reservation]) -> None:
        with contextlib.suppress(ValueError):
            self._waiting[key].remove(handed)
        if handed.done() and not handed.cancelled():
            return
        handed.cancel()

    def _drop(self, placing: asyncio.Future[Reservation]) -> None:
        """Ray's reservation for a run that got another one (or gave up): back to Ray, now or once made.

        ``place`` gives back what it made when it is cancelled; one it finished is given back here.
        """
        placing.add_done_callback(self._give_back)
        placing.cancel()

    def _give_back(self, placing: asyncio.Future[Reservation]) -> None:
        if not placing.cancelled() and placing.exception() is None:
            self._remove(placing.result().group)
