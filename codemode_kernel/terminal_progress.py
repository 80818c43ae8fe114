"""``codemode run``'s progress line: what a slow program's tool calls are doing, on a terminal.

The program's output is printed when it ends, so while it runs the terminal would show nothing. On a
terminal (stderr a TTY) one line, redrawn in place, says how long the run has taken, how many calls are
done and the latest running call's progress (``get_forecast 3/5 Oslo: day 3 of 5``). It is erased when
the run ends, so what stays on the screen is the result alone; off a terminal nothing is drawn.
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from .calllog import CallRecord

__all__ = ["ProgressLine"]

_REDRAW_SECONDS = 0.1
"""At most ten redraws a second: a chatty server must not flood the terminal."""
_ERASE = "\r\033[K"


class ProgressLine:
    """A one-line status of a running program, redrawn on a terminal from the call log's updates."""

    def __init__(self, stream: TextIO, *, width: int = 100) -> None:
        self._stream = stream
        self._width = width
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._running: dict[str, CallRecord] = {}
        self._done = 0
        self._drawn = False
        self._last_draw = 0.0

    def on_call(self, record: CallRecord) -> None:
        """The executor's ``on_call`` watcher: a call started, progressed or ended."""
        with self._lock:
            if record.status == "running":
                self._running[record.id] = record
            else:
                self._running.pop(record.id, None)
                self._done += 1
            now = time.monotonic()
            if record.status == "running" and now - self._last_draw < _REDRAW_SECONDS:
                return
            self._last_draw = now
            self._draw(self._text(now))

    def close(self) -> None:
        """Erase the line (the run ended, or a question is about to be asked on the terminal)."""
        with self._lock:
            if self._drawn:
                self._stream.write(_ERASE)
                self._stream.flush()
                self._drawn = False

    def _text(self, now: float) -> str | None:
        watched = [r for r in self._running.values() if r.progress is not None]
        if not watched:
            return None
        latest = max(watched, key=lambda r: r.started)
        progress = latest.progress
        assert progress is not None
        amount = (
            f"{progress['progress']:g}/{progress['total']:g}"
            if progress["total"]
            else f"{progress['progress']:g}"
        )
        message = f" {progress['message']}" if progress["message"] else ""
        others = len(self._running) - 1
        more = f" (+{others} running)" if others > 0 else ""
        head = (
            f"codemode: {now - self._started:.1f} s, {self._done} call{'s' if self._done != 1 else ''} done"
        )
        text = f"{head} | {latest.tool} {amount}{message}{more}"
        return text if len(text) <= self._width else text[: self._width - 3] + "..."

    def _draw(self, text: str | None) -> None:
        if text is None:
            if self._drawn:
                self._stream.write(_ERASE)
                self._drawn = False
            else:
                return
        else:
            self._stream.write(_ERASE + text)
            self._drawn = True
        self._stream.flush()
