"""``codemode run``'s progress line: what a slow program's tool calls are doing, on a terminal.

The program's output is printed when it ends, so while it runs the terminal would show nothing. On a
terminal (stderr a TTY) one line, redrawn in place, says how long the run has taken, how many calls are
done and the latest running call, with its progress when its server reports any
(``get_forecast 3/5 Oslo: day 3 of 5``). It is redrawn when a call starts, progresses or ends (at most ten
times a second) and every second besides, so the clock moves during a silent call. It is erased when the
run ends and while a question is asked on the terminal; off a terminal nothing is drawn.
"""

from __future__ import annotations

import re
import threading
import time
from typing import TextIO

from .calllog import CallRecord
from .typegen.progress import ToolProgress

__all__ = ["ProgressLine"]

_REDRAW_SECONDS = 0.1
"""At most ten redraws a second for progress: a chatty server must not flood the terminal."""
_TICK_SECONDS = 1.0
_ERASE = "\r\033[K"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
"""Control characters (newlines, escape sequences) in a server's message: never sent to the terminal."""


class ProgressLine:
    """A one-line status of a running program, redrawn on a terminal from the call log's updates."""

    def __init__(self, stream: TextIO, *, width: int = 100) -> None:
        self._stream = stream
        self._width = max(20, width)
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._running: dict[str, CallRecord] = {}
        self._done = 0
        self._drawn = False
        self._held = False
        self._closed = threading.Event()
        self._last_draw = 0.0
        self._ticker: threading.Thread | None = None

    def on_call(self, record: CallRecord) -> None:
        """The executor's ``on_call`` watcher: a call started, progressed or ended."""
        with self._lock:
            if record.status == "running":
                self._running[record.id] = record
            else:
                self._running.pop(record.id, None)
                self._done += 1
            if self._ticker is None and not self._closed.is_set():
                self._ticker = threading.Thread(target=self._tick, name="codemode-progress", daemon=True)
                self._ticker.start()
            now = time.monotonic()
            if record.status == "running" and record.progress and now - self._last_draw < _REDRAW_SECONDS:
                return  # the next one, or the next tick, shows it
            self._draw(now)

    def hold(self) -> None:
        """Erase the line and draw nothing until ``release``: a question is being asked on the terminal."""
        with self._lock:
            self._held = True
            self._erase()

    def release(self) -> None:
        """The question was answered: draw again."""
        with self._lock:
            self._held = False

    def close(self) -> None:
        """Erase the line for good (the run ended; its result is printed next)."""
        self._closed.set()
        with self._lock:
            self._erase()
        if self._ticker is not None:
            self._ticker.join(timeout=2)

    def _tick(self) -> None:
        while not self._closed.wait(_TICK_SECONDS):
            with self._lock:
                self._draw(time.monotonic())

    def _text(self, now: float) -> str | None:
        if not self._running:
            return None
        latest = max(self._running.values(), key=lambda r: r.started)
        progress = latest.progress
        doing = "running"
        if progress is not None:
            doing = str(ToolProgress(progress["progress"], progress["total"], progress["message"]))
        others = len(self._running) - 1
        more = f" (+{others} running)" if others > 0 else ""
        calls = f"{self._done} call{'s' if self._done != 1 else ''}"
        text = _CONTROL.sub(
            " ", f"codemode: {now - self._started:.0f} s, {calls} done | {latest.tool} {doing}{more}"
        )
        return text if len(text) <= self._width else text[: self._width - 3] + "..."

    def _draw(self, now: float) -> None:
        """Redraw (the caller holds the lock)."""
        if self._held or self._closed.is_set():
            return
        self._last_draw = now
        text = self._text(now)
        if text is None:
            self._erase()
            return
        self._stream.write(_ERASE + text)
        self._stream.flush()
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self._stream.write(_ERASE)
            self._stream.flush()
            self._drawn = False
