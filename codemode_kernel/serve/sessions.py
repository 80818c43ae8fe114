"""Which executor session a client's ``session`` argument names, so globals never cross clients.

A session's globals live in one worker of the Executor (``Executor.run(session=...)``). Clients name
sessions, but two clients may pick the same name, so the executor's name is the client's scope plus its
name. Where the transport gives no scope (the 2026-07-28 HTTP protocol sends each request on its own, with no
session id), a new session gets a name with a random part, returned to the client: only the client that
received it can name that session again.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import SessionLimitError

__all__ = ["SessionRef", "SessionTable"]


@dataclass(frozen=True)
class SessionRef:
    """One run's session: the executor's name for it, the client's, and whether it starts empty."""

    key: str
    name: str
    new: bool


class SessionTable:
    """Maps (client scope, session name) to the executor's session name, within a limit on live sessions."""

    def __init__(self, max_sessions: int, alive: Callable[[], list[str]]) -> None:
        """``alive`` lists the executor's live sessions (``Executor.sessions``), so expired ones free room."""
        self.max_sessions = max_sessions
        self._alive = alive

    def resolve(self, scope: str | None, name: str) -> SessionRef:
        """The session ``name`` means for a client in ``scope`` (None: a transport without sessions).

        Raises:
            SessionLimitError: the session is new and ``max_sessions`` are alive.
        """
        alive = set(self._alive())
        if scope is not None:
            key = f"{scope}\x00{name}"
            new = key not in alive
            if new:
                self._check_room(alive)
            return SessionRef(key, name, new)
        if name in alive and _is_minted(name):
            return SessionRef(name, name, False)
        self._check_room(alive)
        minted = f"{name}~{secrets.token_urlsafe(12)}"
        return SessionRef(minted, minted, True)

    def _check_room(self, alive: set[str]) -> None:
        if len(alive) >= self.max_sessions:
            raise SessionLimitError(
                f"{len(alive)} sessions are alive, the limit (defaults.serve.maxSessions is "
                f"{self.max_sessions}); run without session, wait for an idle one to expire "
                "(defaults.serve.sessionIdle), or raise the limit in the config"
            )


def _is_minted(name: str) -> bool:
    """Whether ``name`` is one this table made for a client without scope (never a scoped key)."""
    return "~" in name and "\x00" not in name
