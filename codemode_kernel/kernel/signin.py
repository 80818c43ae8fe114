"""Sign-in from a notebook: the link in the cell and the sidebar, the server ready after, no restart.

A remote server that wants an OAuth sign-in settles in state ``signin`` (hub/auth.py). The kernel then
starts its sign-in on the hub's loop at once: discovery and registration, a listener on 127.0.0.1 for the
redirect, and the authorization link (hub/auth_signin.py). The kernel opens no browser of its own (the
person's browser is JupyterLab's; ``CODEMODE_OAUTH_OPEN`` is still run where set, for headless use): the
link goes into the state file, where the sidebar shows "Sign in" on the server's row, and into the output
of the next cell. Once the person has signed in, the tokens are stored and the server is connected again;
its tools are in the namespace from the next cell on. A link nobody followed within ``SIGN_IN_WAIT`` is
dropped, and ``%codemode login NAME`` (or the sidebar's Sign in button) starts another.
"""

from __future__ import annotations

import concurrent.futures
import html
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import CodeModeError
from ..hub.auth_login import login, remote_server

if TYPE_CHECKING:
    from ..toolbox import Toolbox

__all__ = ["SIGN_IN_WAIT", "NotebookSignIns", "PendingSignIn", "link_bundle"]

SIGN_IN_WAIT = 900.0
"""Seconds a sign-in link stays good in a kernel (its listener waits that long for the redirect)."""


@dataclass
class PendingSignIn:
    """One server's sign-in in this kernel: its link once known, how it ended.

    Attributes:
        server: the server's name.
        url: the authorization link (None until discovery and registration are done).
        error: why it ended without a sign-in (refused, timed out, the server unreachable).
        done: it ended, either way.
        seconds: from the link known to the server ready again (a sign-in that worked).
        shown: the link was put in a cell's output already.
    """

    server: str
    url: str | None = None
    error: str | None = None
    done: bool = False
    seconds: float | None = None
    shown: bool = False
    settled: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set once the link is known or the sign-in ended: what ``%codemode login`` waits for."""
    future: concurrent.futures.Future[None] | None = field(default=None, repr=False)


class NotebookSignIns:
    """The kernel's sign-ins, one per server at a time, run on the hub's loop.

    Args:
        toolbox: the kernel's toolbox now (None before the config is loaded).
        changed: called whenever a link appears or a sign-in ends (the state file is rewritten at once).
        wait: seconds each link stays good.
    """

    def __init__(
        self,
        toolbox: Callable[[], Toolbox | None],
        changed: Callable[[], None],
        *,
        wait: float = SIGN_IN_WAIT,
    ) -> None:
        self._toolbox = toolbox
        self._changed = changed
        self.wait = wait
        self._pending: dict[str, PendingSignIn] = {}
        self._lock = threading.Lock()

    def offer(self) -> None:
        """Start a sign-in for every server in ``signin`` that has none going (or whose link expired)."""
        toolbox = self._toolbox()
        if toolbox is None:
            return
        for status in toolbox.status():
            if status.state != "signin":
                continue
            current = self._pending.get(status.name)
            if current is None or current.done:
                if current is not None and current.error is not None:
                    continue  # ended without a sign-in: the person starts the next one (%codemode login)
                self.start(status.name)

    def start(self, server: str, *, again: bool = False) -> PendingSignIn:
        """Start ``server``'s sign-in (``again``: end one still going and start anew).

        Raises:
            ConfigError: no such server, a local one, or one that sends its own Authorization header.
        """
        toolbox = self._toolbox()
        if toolbox is None:
            raise CodeModeError("the config could not be loaded, so no server can sign in")
        config = remote_server(toolbox.config, server)
        with self._lock:
            current = self._pending.get(server)
            if current is not None and not current.done and not again:
                return current
            if current is not None and current.future is not None:
                current.future.cancel()
            pending = self._pending[server] = PendingSignIn(server)
        coroutine = self._sign_in(toolbox, config.name, pending)
        pending.future = toolbox.hub.loop_thread.submit(coroutine)
        return pending

    def links(self) -> dict[str, str]:
        """Server name to its open link, for the sidebar: only sign-ins still waiting for the person."""
        return {
            name: pending.url
            for name, pending in list(self._pending.items())
            if pending.url is not None and not pending.done
        }

    def unshown(self) -> list[PendingSignIn]:
        """Open links not yet put in a cell's output (each is shown once, in the next cell)."""
        fresh = [p for p in list(self._pending.values()) if p.url is not None and not p.done and not p.shown]
        for pending in fresh:
            pending.shown = True
        return fresh

    def close(self) -> None:
        """End every sign-in still waiting (the kernel reloads or shuts down): their listeners close."""
        with self._lock:
            for pending in self._pending.values():
                if pending.future is not None:
                    pending.future.cancel()
            self._pending.clear()

    async def _sign_in(self, toolbox: Toolbox, server: str, pending: PendingSignIn) -> None:
        config = toolbox.config.servers[server]

        def link_known(url: str) -> None:
            pending.url = url
            pending.settled.set()
            self._changed()

        try:
            await login(config, announce=_ignore, timeout=self.wait, open_browser=False, on_link=link_known)
            began = time.perf_counter()
            await toolbox.hub.areconnect(server)
            pending.seconds = time.perf_counter() - began
        except CodeModeError as exc:
            pending.error = str(exc)
        except Exception as exc:  # never lost silently: the sidebar and %codemode login show it
            pending.error = f"the sign-in failed: {type(exc).__name__}: {exc}"
        finally:
            pending.done = True
            pending.settled.set()
            self._changed()


def link_bundle(pending: PendingSignIn) -> dict[str, Any]:
    """A sign-in link as a cell shows it: a link in HTML, the URL in plain text (nbconvert, a terminal)."""
    assert pending.url is not None
    name, url = html.escape(pending.server), html.escape(pending.url, quote=True)
    minutes = round(SIGN_IN_WAIT / 60)
    return {
        "text/plain": f"codemode: sign in to {pending.server}: {pending.url}",
        "text/html": (
            f'<div class="jp-codemode-signin">codemode: <a href="{url}" target="_blank" '
            f'rel="noopener noreferrer">Sign in to {name}</a> (opens the sign-in page; its tools appear here '
            f"once you are signed in; the link is good for {minutes} minutes)</div>"
        ),
    }


def _ignore(line: str) -> None:
    """A kernel's sign-in prints nothing of its own: the link goes to the cell and the sidebar."""
