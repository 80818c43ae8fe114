"""``codemode run`` on a terminal: the program's output as it prints it, and a progress line below it.

On a terminal (stdout a TTY) what the program prints is shown as it prints it, as ``python prog.py``
would; off one it is kept for the end (``RunOutput``). On a terminal (stderr a TTY) one line, redrawn in
place below the output, says how long the run has taken, how many calls are done and the latest running
call, with its progress when its server reports any (``get_forecast 3/5 Oslo: day 3 of 5``). It is
redrawn when a call starts, progresses or ends (at most ten times a second), after each line the program
prints, and every second besides, so the clock moves during a silent call. It is erased when the run ends,
while a question is asked on the terminal and while the program's last line is unfinished (no newline
yet: the line's carriage return would wipe it); off a terminal nothing is drawn.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import TextIO

from .calllog import CallRecord
from .core.progress import ToolProgress

__all__ = ["ProgressLine", "RunOutput"]

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
        self._mid_line = False
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

    def print_above(self, stream: TextIO, text: str) -> None:
        """Write the program's output to ``stream`` (the same terminal) and draw the line again below it."""
        with self._lock:
            self._erase()
            stream.write(text)
            stream.flush()
            self._mid_line = not text.endswith("\n")
            self._draw(time.monotonic())

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
        if self._held or self._mid_line or self._closed.is_set():
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


@dataclass
class RunOutput:
    """The run's live view for ``codemode run``: its output (shown as it comes when ``live``), its calls.

    Off a terminal nothing is shown while the program runs, so a script reading ``codemode run``'s stdout
    gets the same text in one piece at the end. What was printed is kept either way, for the end of a run
    that was interrupted (it has no result record to print it from).
    """

    stdout: TextIO
    stderr: TextIO
    live: bool
    line: ProgressLine | None = None
    started: float = field(default_factory=time.monotonic)
    printed: dict[str, list[str]] = field(default_factory=lambda: {"stdout": [], "stderr": []})
    calls: set[str] = field(default_factory=set)
    at_line_start: bool = True
    reported: bool = False
    """The end of an interrupted run was said (a second Ctrl-C while the servers stop must not repeat it)."""

    def on_output(self, stream: str, text: str) -> None:
        """The executor's ``on_output`` watcher: the program printed ``text`` on ``stream``."""
        if not text:
            return
        self.printed["stdout" if stream == "stdout" else "stderr"].append(text)
        if not self.live:
            return
        target = self.stdout if stream == "stdout" else self.stderr
        if self.line is not None:
            self.line.print_above(target, text)
        else:
            target.write(text)
            target.flush()
        self.at_line_start = text.endswith("\n")

    def on_call(self, record: CallRecord) -> None:
        """The executor's ``on_call`` watcher: count the call, and show it on the progress line."""
        self.calls.add(record.id)
        if self.line is not None:
            self.line.on_call(record)

    def end_of_output(self) -> str:
        """What to write before the result's text: a newline if the program left its last line open."""
        return "" if not self.live or self.at_line_start else "\n"

    def interrupted_text(self) -> str:
        """What an interrupted run prints: what it printed (unless shown already), and one status line."""
        if self.live:  # shown already; the terminal's echoed ^C is wiped from a line of its own
            parts = [self.end_of_output() or _ERASE]
        else:
            parts = [_whole_lines("".join(self.printed[s])) for s in ("stdout", "stderr")]
        return "".join([*parts, f"[{self.interrupted_status()}]\n"])

    def interrupted_status(self) -> str:
        """``interrupted after 3.21 s, 2 tool calls``: how long it ran, how many calls it made."""
        calls = len(self.calls)
        took = time.monotonic() - self.started
        return f"interrupted after {took:.2f} s, {calls} tool call{'s' * (calls != 1)}"


def _whole_lines(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
