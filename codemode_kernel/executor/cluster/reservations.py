"""Reservations: Ray placement groups handed from a run that ended to the next run that needs the same.

Ray places a run's one-bundle placement group at once when a node has room; one that does not fit is
looked at again on the GCS's one-second tick, not when another run gives its resources back. So on a full
cluster every run would wait up to a second for the reservation the last one just released. A finished
run's reservation therefore goes straight to this executor's oldest waiting run when that run needs the
same resources (which gives up its own pending request), or, when no run waits at all, is kept a moment for
the next one. Fairness stays Ray's: a reservation goes back to Ray when the oldest waiting run needs other
resources, and at the latest ``HANDOVER_SPAN`` after Ray placed it, so that another executor's (another
kernel's, another client's) queued request gets its turn on the next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HANDOVER_SPAN", "IDLE_KEEP", "Reservation", "Reservations"]

IDLE_KEEP = 1.0
"""Seconds a released reservation waits for a run that needs the same before Ray gets it back."""
HANDOVER_SPAN = 2.0
"""Seconds after Ray placed a reservation during which it may go from run to run; then back to Ray."""

Bundle = tuple[tuple[str, float], ...]


@dataclass
class Reservation:
    """One run's resources, reserved by Ray on one node."""

    group: Any
    node: str
    bundle: Bundle
    placed: float = field(default_factory=time.monotonic)
    """When Ray placed it (``time.monotonic()``)."""


class Reservations:
    """Reservations by the resources they hold: waiting runs, and released ones kept for a moment."""

    def __init__(
        self, place: Callable[[dict[str, float]], Awaitable[Reservation]], remove: Callable[[Any], None]
    ) -> None:
        """Keep reservations made by ``place`` and given back by ``remove``.

        ``place(bundle)`` asks Ray for a reservation and gives back what it made if it is cancelled;
        ``remove(group)`` gives one back to Ray (from any thread, with or without a loop).
        """
        self._place = place
        self._remove = remove
        self._idle: list[tuple[Reservation, asyncio.TimerHandle]] = []
        self._waiting: deque[tuple[Bundle, asyncio.Future[Reservation]]] = deque()
        """Runs waiting for Ray to place them, oldest first, whatever they need."""
        self.closed = False

    async def take(self, bundle: dict[str, float]) -> Reservation:
        """A reservation of ``bundle``: one just released, else Ray's, or one released while Ray's waits."""
        key: Bundle = tuple(sorted(bundle.items()))
        for index, (reservation, expiry) in enumerate(self._idle):
            if reservation.bundle == key:
                del self._idle[index]
                expiry.cancel()
                return reservation
        handed: asyncio.Future[Reservation] = asyncio.get_running_loop().create_future()
        self._waiting.append((key, handed))
        placing = asyncio.ensure_future(self._place(bundle))
        try:
            await asyncio.wait({placing, handed}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            self._forget(handed)
            if handed.done() and not handed.cancelled():  # handed over just as the run gave up
                self.release(handed.result(), reuse=True)
            self._drop(placing)
            raise
        self._forget(handed)
        if handed.done() and not handed.cancelled():
            self._drop(placing)  # Ray's is not needed: the place() under way gives it back
            return handed.result()
        return placing.result()

    def release(self, reservation: Reservation, *, reuse: bool) -> None:
        """A run's reservation back: to the oldest waiting run if it needs the same, kept, or to Ray.

        ``reuse`` False gives it to Ray at once: its node was lost (Ray moves such reservations itself), or
        the run never started on it. So does a reservation older than ``HANDOVER_SPAN``, one the oldest
        waiting run cannot use, and any once closed or with no event loop to keep it on.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        fresh = time.monotonic() - reservation.placed < HANDOVER_SPAN
        if not reuse or self.closed or loop is None or not fresh:
            self._remove(reservation.group)
            return
        while self._waiting:
            key, handed = self._waiting[0]
            if handed.done():
                self._waiting.popleft()
                continue
            if key != reservation.bundle:
                break  # the oldest waiting run needs something else: Ray decides who gets these resources
            self._waiting.popleft()
            handed.set_result(reservation)
            return
        if self._waiting:
            self._remove(reservation.group)
            return
        expiry = loop.call_later(IDLE_KEEP, self._expire, reservation)
        self._idle.append((reservation, expiry))

    def forget_node(self, node: str) -> None:
        """A node was lost: the reservations kept on it go back to Ray (which moves them elsewhere)."""
        for reservation, expiry in [kept for kept in self._idle if kept[0].node == node]:
            self._idle.remove((reservation, expiry))
            expiry.cancel()
            self._remove(reservation.group)

    def clear(self) -> None:
        """Give every kept reservation back to Ray, and every later one (the executor is closing)."""
        self.closed = True
        idle, self._idle = self._idle, []
        for reservation, expiry in idle:
            expiry.cancel()
            self._remove(reservation.group)

    def _expire(self, reservation: Reservation) -> None:
        for index, (held, _) in enumerate(self._idle):
            if held is reservation:
                del self._idle[index]
                self._remove(reservation.group)
                return

    def _forget(self, handed: asyncio.Future[Reservation]) -> None:
        for entry in list(self._waiting):
            if entry[1] is handed:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(entry)
        if not handed.done():
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
