"""The scripted model server: an HTTP server on 127.0.0.1 that plays turns and records requests.

It answers ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic), streaming or not,
plus ``GET /v1/models`` and ``GET /_requests`` (the recorded requests as JSON). Each model request takes
the next turn of the script. It runs on the standard library's threading HTTP server, on a daemon thread,
so tests, notebooks and the benchmark need no extra package and no paid model.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ._script import Api, Responder, ScriptedRequest, ScriptedTurn, TurnLike, count_tokens
from ._wire import SSE, anthropic_events, anthropic_message, error_body, openai_chunks, openai_completion

__all__ = ["ScriptedModelServer"]

_ROUTES: dict[str, Api] = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}


class _ClientGone(Exception):
    """The client closed the connection (or the server is stopping) before the answer was complete."""


class ScriptedModelServer:
    """A local model endpoint that plays ``turns`` in order, one per model request, and records requests.

    ``turns`` is a sequence of turns (``ScriptedTurn``, a ``str`` for a text turn, or a callable that gets
    the ``ScriptedRequest`` and returns one of those), or a single callable that answers every request.
    When the script runs out, the server answers 400 with a message that says so (not retried).

    Use it as a context manager, or call ``start()`` and ``stop()``. ``base_url`` is for OpenAI clients
    (it ends in ``/v1``), ``url`` for Anthropic clients (the SDK adds ``/v1/messages`` itself).
    """

    def __init__(
        self,
        turns: Sequence[TurnLike] | Responder = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Iterable[str] = ("scripted",),
    ) -> None:
        self._responder: Responder | None = None
        self._turns: deque[TurnLike] = deque()
        if callable(turns):
            self._responder = turns
        else:
            self._turns.extend(turns)
        self.models = list(models)
        self._address = (host, port)
        self._requests: list[ScriptedRequest] = []
        self._played = 0
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> ScriptedModelServer:
        """Bind the port and serve on a daemon thread; returns self."""
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"owner": self})
        self._httpd = ThreadingHTTPServer(self._address, handler)
        self._httpd.daemon_threads = True
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections, and release the port."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._changed:
            for conn in list(self._connections):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- what tests and demos read -----------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server's root URL (``http://127.0.0.1:PORT``): the ``baseUrl`` for Anthropic clients."""
        if self._httpd is None:
            raise RuntimeError("the scripted model server is not started: call start() first")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``http://127.0.0.1:PORT/v1``): the ``baseUrl`` for OpenAI clients."""
        return self.url + "/v1"

    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every request received so far (``GET /_requests`` excepted), oldest first."""
        with self._changed:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been played yet."""
        with self._changed:
            return len(self._turns)

    def add(self, *turns: TurnLike) -> None:
        """Append turns to the script (a notebook can script the next answer just before asking)."""
        with self._changed:
            self._turns.extend(turns)

    def wait_disconnected(self, timeout: float = 5.0) -> bool:
        """Wait until some request was abandoned by its client; True if one was within ``timeout``."""
        with self._changed:
            return self._changed.wait_for(lambda: any(r.disconnected for r in self._requests), timeout)

    # -- used by the handler -----------------------------------------------------------------------

    def _record(self, request: ScriptedRequest) -> int:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()
            return len(self._requests)

    def _next_turn(self, request: ScriptedRequest) -> ScriptedTurn | None:
        with self._changed:
            turn_like: TurnLike
            if self._responder is not None:
                turn_like = self._responder
            elif self._turns:
                turn_like = self._turns.popleft()
            else:
                return None
            self._played += 1
        # A callable runs outside the lock: it may be slow, or read self.requests.
        answer = turn_like(request) if callable(turn_like) else turn_like
        return ScriptedTurn(text=answer) if isinstance(answer, str) else answer

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()


class _Handler(BaseHTTPRequestHandler):
    """Serves one connection (HTTP/1.1 keep-alive) for the owning ScriptedModelServer."""

    owner: ScriptedModelServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        with self.owner._changed:
            self.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.owner._changed:
            self.owner._connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the client is gone; nothing left to flush
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read ``requests``, not a log on stderr."""

    # -- routing -----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/_requests":
            self._send_json(200, [r.to_json() for r in self.owner.requests])
            return
        record = ScriptedRequest("GET", path, {k.lower(): v for k, v in self.headers.items()}, None)
        self.owner._record(record)
        if path == "/v1/models":
            record.status = 200
            self._send_json(200, self._models())
        else:
            record.status = 404
            self._send_json(404, error_body("openai", 404, f"no route GET {path}"))

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        api = _ROUTES.get(path, "other")
        record = ScriptedRequest("POST", path, {k.lower(): v for k, v in self.headers.items()}, body, api)
        number = self.owner._record(record)
        try:
            if api == "other":
                self._answer_error(
                    record, 404, f"no route POST {path}: use /v1/chat/completions or /v1/messages"
                )
            elif not isinstance(body, dict):
                self._answer_error(record, 400, "the request body is not a JSON object")
            else:
                self._answer(record, number)
        except _ClientGone:
            record.disconnected = True
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            record.disconnected = True
            self.close_connection = True
        finally:
            self.owner._notify()

    def _answer(self, record: ScriptedRequest, number: int) -> None:
        try:
            turn = self.owner._next_turn(record)
        except Exception as exc:  # a bug in a test's callable: say so instead of hanging the client
            self._answer_error(record, 500, f"the scripted turn raised {exc!r}", retry=False)
            return
        if turn is None:
            message = f"the script has no turn left for request #{number} ({self.owner._played} played)"
            self._answer_error(record, 400, message)
            return
        if turn.delay:
            self._wait(turn.delay)
        if turn.status is not None:
            message = turn.error or f"scripted error {turn.status}"
            self._answer_error(record, turn.status, message, retry_after=turn.retry_after)
            return
        body = record.body
        asked = {key: body[key] for key in ("system", "messages", "tools") if key in body}
        answer_tokens = count_tokens(turn.full_text) if turn.full_text else 0
        answer_tokens += sum(count_tokens(call.name + call.arguments_json) for call in turn.tool_calls)
        usage = (count_tokens(asked), answer_tokens)
        model = str(body.get("model", "scripted"))
        record.status = 200
        if body.get("stream") is not True:
            build = openai_completion if record.api == "openai" else anthropic_message
            self._send_json(200, build(turn, model, usage, number))
            return
        if record.api == "openai":
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = openai_chunks(turn, model, usage, number, include_usage)
        else:
            events = anthropic_events(turn, model, usage, number)
        self._stream(events, turn.pause)

    def _models(self) -> Any:
        # One list that both SDKs read: OpenAI's fields and Anthropic's side by side.
        data = [
            {
                "id": m,
                "object": "model",
                "created": 0,
                "owned_by": "scripted",
                "type": "model",
                "display_name": m,
            }
            for m in self.owner.models
        ]
        data = [{**entry, "created_at": "2024-01-01T00:00:00Z"} for entry in data]
        first = data[0]["id"] if data else None
        last = data[-1]["id"] if data else None
        return {"object": "list", "data": data, "has_more": False, "first_id": first, "last_id": last}

    # -- writing -----------------------------------------------------------------------------------

    def _answer_error(
        self,
        record: ScriptedRequest,
        status: int,
        message: str,
        *,
        retry_after: float = 0.01,
        retry: bool = True,
    ) -> None:
        record.status = status
        headers = {}
        if retry and (status == 429 or status >= 500):
            headers["retry-after-ms"] = str(max(1, round(retry_after * 1000)))
        else:
            headers["x-should-retry"] = "false"
        self._send_json(status, error_body(record.api, status, message), headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _stream(self, events: list[SSE], pause: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        started = False
        for event, data in events:
            if started and pause:
                self._wait(pause)
            text = data if isinstance(data, str) else json.dumps(data)
            self._write_chunk(((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode())
            started = started or _carries_content(event, data)
        self._write_chunk(b"")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _wait(self, seconds: float) -> None:
        """Sleep, watching the socket: a client that closes it (a cancelled request) ends the answer."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.owner._stopping.is_set():
                raise _ClientGone
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if not readable:
                continue
            try:
                peeked = self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                peeked = b""
            if not peeked:
                raise _ClientGone
            time.sleep(min(left, 0.05))  # the client sent more (a pipelined request): keep waiting


def _carries_content(event: str | None, data: Any) -> bool:
    """Whether an event holds text or arguments (``pause`` starts after the first such event)."""
    if event is not None:
        return event == "content_block_delta"
    choices = data.get("choices") if isinstance(data, dict) else None
    return bool(choices and (choices[0]["delta"].get("content") or choices[0]["delta"].get("tool_calls")))
