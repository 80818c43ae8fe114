"""The person's side of a sign-in in a terminal: the link shown and opened, the redirect on 127.0.0.1.

``codemode login`` starts a ``LoopbackSignIn``: a one-route HTTP listener on ``127.0.0.1`` at a random port
(or the config's ``oauth.callbackPort``), whose ``/callback`` URL is the redirect URI. The authorization
URL is printed and opened: by the command ``CODEMODE_OAUTH_OPEN`` names (the URL as its last argument; tests
and CI follow the redirects with an HTTP client), else by a browser where there is one. Only a redirect
that carries the state of this authorization ends the wait; anything else on the port is answered 400
and ignored. What comes back is hostile input: it is checked, shortened, and never echoed into a page.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import socket
import time
import webbrowser
from collections.abc import Callable
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from ..core.errors import SignInFailed

__all__ = ["OPEN_ENV", "LoopbackSignIn"]

OPEN_ENV = "CODEMODE_OAUTH_OPEN"
"""The environment variable naming a command run with the authorization URL instead of a browser."""

_MAX_REQUEST = 16 * 1024
_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>codemode</title>"
    b"<p>Signed in. You can close this tab and go back to where you started (JupyterLab, the terminal).</p>"
)


class LoopbackSignIn:
    """The person's side of a sign-in: open the link, wait for its redirect on a loopback port.

    The port is taken at once (its redirect URI goes into the client's registration); it listens only
    while an authorization waits for its redirect. ``close()`` gives the port back (also ``async with``).

    Args:
        server: the server's name, for messages.
        announce: shows a line to the person (the terminal's stderr).
        port: the listener's port; None: a free one.
        timeout: seconds to wait for the redirect once the link is open.
        fresh: sign in anew even where stored tokens would do (``codemode login``).
        open_browser: open the link in a browser of this machine (a terminal's); False: only show it
            (a kernel: the person's browser is JupyterLab's). ``CODEMODE_OAUTH_OPEN`` is run either way.
        on_link: told the authorization link once it is known (the kernel puts it in the sidebar).
    """

    def __init__(
        self,
        server: str,
        *,
        announce: Callable[[str], None],
        port: int | None = None,
        timeout: float = 300.0,
        fresh: bool = False,
        open_browser: bool = True,
        on_link: Callable[[str], None] | None = None,
    ) -> None:
        self.server = server
        self.fresh = fresh
        self.open_browser = open_browser
        self.on_link = on_link
        self.announce = announce
        self.timeout = timeout
        try:
            self._socket: socket.socket | None = socket.create_server(("127.0.0.1", port or 0))
        except OSError as exc:
            raise SignInFailed(
                f"cannot listen for the sign-in redirect on 127.0.0.1:{port} ({exc.strerror}); "
                'free that port, or change "oauth.callbackPort"',
                server=server,
            ) from exc
        self._socket.setblocking(False)
        self._listener: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._state: str | None = None
        self._opener: asyncio.subprocess.Process | None = None
        self.redirect_uri = f"http://127.0.0.1:{self._socket.getsockname()[1]}/callback"
        self.opened_at: float | None = None
        """``time.perf_counter()`` when the link was opened (for the sign-in-to-ready measure)."""

    async def __aenter__(self) -> LoopbackSignIn:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop listening, give the port back, end an opener command still running."""
        await self._stop_listening()
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._opener is not None and self._opener.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._opener.kill()
            await self._opener.wait()

    async def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(listener.wait_closed(), 2)

    async def open(self, authorization_url: str) -> None:
        """Show the link and open it (the SDK's ``redirect_handler``)."""
        parts = urlsplit(authorization_url)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            # The endpoint comes from the server's metadata: never hand a browser file: or javascript:.
            raise SignInFailed(
                f"the authorization server's sign-in page is not a web address: {_shown(authorization_url)}",
                server=self.server,
            )
        state = parse_qs(parts.query).get("state", [""])[0]
        if not state:
            raise SignInFailed("the authorization request has no state", server=self.server)
        if self._socket is None:
            raise SignInFailed("this sign-in is over; start another", server=self.server)
        self._state = state
        self._result = asyncio.get_running_loop().create_future()
        if self._listener is None:  # a duplicate: the server closes its socket, the port stays ours
            self._listener = await asyncio.start_server(self._serve, sock=self._socket.dup())
        self.announce(f"Sign in to {self.server}: {_shown(authorization_url, limit=8000)}")
        self.opened_at = time.perf_counter()
        if self.on_link is not None:
            self.on_link(authorization_url)
        command = os.environ.get(OPEN_ENV, "").strip()
        if command:
            argv = [*shlex.split(command), authorization_url]
            try:
                self._opener = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL)
            except OSError as exc:
                raise SignInFailed(
                    f"cannot run {OPEN_ENV}={command!r} ({exc.strerror or exc}); fix or unset it",
                    server=self.server,
                ) from exc
            return
        if not self.open_browser:
            return
        opened = await asyncio.to_thread(_open_browser, authorization_url)
        self.announce(
            "Waiting for the browser..." if opened else "No browser here: open the link above where you can."
        )

    async def wait(self) -> AuthorizationCodeResult:
        """The redirect's code and state (the SDK's ``callback_handler``; it checks the state again)."""
        assert self._result is not None, "open() first"
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), self.timeout)
        except TimeoutError:
            raise SignInFailed(
                f"no sign-in came back within {self.timeout:g} s; run `codemode login {self.server}` again",
                server=self.server,
            ) from None
        finally:
            await self._stop_listening()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        status, body = self._answer(head[:_MAX_REQUEST].decode("latin-1"))
        with contextlib.suppress(ConnectionError):
            head_lines = (
                f"HTTP/1.1 {status}",
                "Content-Type: text/html; charset=utf-8",
                f"Content-Length: {len(body)}",
                "Cache-Control: no-store",
                "Connection: close",
            )
            writer.write(("\r\n".join(head_lines) + "\r\n\r\n").encode() + body)
            await writer.drain()
        writer.close()

    def _answer(self, head: str) -> tuple[str, bytes]:
        """Judge one request to the listener; only the awaited redirect settles the sign-in."""
        parts = head.split("\r\n", 1)[0].split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", b"GET only"
        target = urlsplit(parts[1])
        query = parse_qs(target.query)
        state = query.get("state", [""])[0]
        if target.path != "/callback" or self._result is None or self._result.done() or state != self._state:
            return "400 Bad Request", b"Not the sign-in this listener waits for."
        if "error" in query:
            error = _shown(query["error"][0])
            detail = _shown(query.get("error_description", [""])[0])
            message = f"the authorization server refused the sign-in: {error}" + (
                f" ({detail})" if detail else ""
            )
            self._result.set_exception(SignInFailed(message, server=self.server))
            return "200 OK", b"<!doctype html><p>The sign-in was refused; where you started says why.</p>"
        code = query.get("code", [""])[0]
        if not code:
            return "400 Bad Request", b"No authorization code."
        iss = query.get("iss", [None])[0]
        self._result.set_result(AuthorizationCodeResult(code=code, state=state, iss=iss))
        return "200 OK", _DONE_PAGE


def _shown(text: str, *, limit: int = 200) -> str:
    """A server's words, safe to print on a terminal: printable ASCII, at most ``limit`` characters."""
    return re.sub(r"[^ -~]", "?", text)[:limit]


_CONSOLE_BROWSERS = ("www-browser", "lynx", "w3m", "links", "elinks")


def _open_browser(url: str) -> bool:
    """Open ``url`` in a browser where there is one (never a console browser that would take the terminal)."""
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if type(browser).__name__ in ("GenericBrowser",) and getattr(browser, "name", "") in (
        "www-browser",
        "lynx",
        "w3m",
        "links",
        "elinks",
    ):
        return False
    try:
        return bool(browser.open(url))
    except Exception:
        return False
