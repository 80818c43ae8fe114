"""A session's lifecycle: a worker that keeps its program's globals from one run to the next.

Opened by the first run naming it, reused while its worker lives and was made for the tools the hub has
now, ended by ``close_session``, ``close``, a crash, a deadline its program did not give in to, or
``idle`` seconds without a run. Everything here runs on the hub's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Container
from dataclasses import dataclass, field

from ..config.models import ExecutorResources
from ..worker.protocol import ProtectionsFrame
from .pool import Pool, WorkerHandle
from .references import SessionNames

__all__ = ["Session", "Sessions"]


@dataclass
class Session:
    """A worker that keeps its program's globals from one run to the next."""

    name: str
    worker: WorkerHandle
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protections: ProtectionsFrame | None = None
    runs: int = 0
    alive: bool = True
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One run at a time per session."""
    idle: asyncio.TimerHandle | None = None
    names: SessionNames = field(default_factory=SessionNames)
    """The globals its programs bound: a later program using them need not wait for servers."""

    @property
    def filename(self) -> str:
        """The next program's file name in tracebacks: ``<code-N>``, so earlier programs' lines stay apart."""
        return f"<code-{self.runs}>"


class Sessions:
    """One Executor's named sessions: opened on a first run, kept between runs, ended once idle."""

    def __init__(self, pool: Pool, idle: float) -> None:
        self._pool = pool
        self.idle = idle
        """Seconds a session may go without a run before its worker is ended."""
        self._open: dict[str, Session] = {}

    def alive(self) -> list[str]:
        """Names of the sessions whose worker is alive."""
        return [name for name, session in self._open.items() if session.alive]

    def globals_of(self, name: str | None) -> Container[str]:
        """The names a program in session ``name`` may use from earlier runs (none for a new one)."""
        session = self._open.get(name) if name is not None else None
        return session.names if session is not None and session.alive else ()

    async def open(self, name: str, resources: ExecutorResources | None = None) -> Session:
        """The live session ``name``, its idle timer stopped; a new one (a new worker) if there is none.

        Raises:
            ZygoteError, OSError, TimeoutError: no worker could start.
        """
        current = self._open.get(name)
        if current is not None and (not current.alive or not self._pool.is_current(current.worker)):
            await self.end(name)  # dead, or made for tools that changed since
            current = None
        if current is None:
            worker = await self._pool.take(resources)
            try:
                reader, writer = await worker.connect()
            except BaseException:  # its node went away, or the run was interrupted: it serves no session
                worker.discard()
                raise
            current = self._open[name] = Session(name, worker, reader, writer)
        if current.idle is not None:
            current.idle.cancel()
        return current

    async def rest(self, session: Session) -> None:
        """After a run: a live session waits ``idle`` seconds for the next one; a dead one ends now."""
        if not session.alive:
            await self.end(session.name)
            return
        if session.idle is not None:
            session.idle.cancel()  # one timer per session: an older one must not end it during a later run
        loop = asyncio.get_running_loop()
        session.idle = loop.call_later(self.idle, lambda: asyncio.ensure_future(self.end(session.name)))

    async def end(self, name: str) -> bool:
        """End a session's worker (and every process it started); False when there was none."""
        session = self._open.pop(name, None)
        if session is None:
            return False
        if session.idle is not None:
            session.idle.cancel()
        session.alive = False
        session.writer.close()
        session.worker.discard()
        return True

    async def end_all(self) -> None:
        """End every session (the executor is closing)."""
        for name in list(self._open):
            await self.end(name)
