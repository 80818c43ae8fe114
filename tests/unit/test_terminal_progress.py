"""codemode run's progress line, drawn into a text buffer from real call records."""

from __future__ import annotations

import io
import time
from dataclasses import replace

from codemode_kernel.calllog import CallLog, CallRecord
from codemode_kernel.terminal_progress import ProgressLine


def running(log: CallLog, tool: str) -> CallRecord:
    return log.start("srv", tool, {})


def test_a_silent_call_shows_with_a_moving_clock() -> None:
    out = io.StringIO()
    line = ProgressLine(out)
    line.on_call(running(CallLog(), "slow_query"))
    time.sleep(1.3)  # the tick redraws while the call says nothing
    line.close()
    drawn = out.getvalue()
    assert "codemode: 0 s, 0 calls done | slow_query running" in drawn
    assert "codemode: 1 s, 0 calls done | slow_query running" in drawn
    assert drawn.endswith("\r\x1b[K")


def test_a_servers_control_characters_never_reach_the_terminal() -> None:
    out = io.StringIO()
    log = CallLog()
    record = running(log, "fetch")
    line = ProgressLine(out)
    line.on_call(log.progress(record, 1, 2, "half\nway\x1b]0;pwned\x07 there"))
    line.close()
    drawn = out.getvalue().replace("\r\x1b[K", "")
    assert "| fetch 1/2 half way ]0;pwned  there" in drawn
    assert "\n" not in drawn and "\x07" not in drawn and "\x1b]" not in drawn


def test_nothing_is_drawn_while_a_question_is_asked() -> None:
    out = io.StringIO()
    log = CallLog()
    line = ProgressLine(out)
    line.on_call(running(log, "first"))
    line.hold()
    held_at = len(out.getvalue())
    line.on_call(running(log, "second"))
    assert out.getvalue()[held_at:] == ""
    line.release()
    line.on_call(replace(running(log, "third"), progress=None))
    line.close()
    assert "third running (+2 running)" in out.getvalue()[held_at:]


def test_output_goes_above_the_line_and_an_unfinished_line_is_not_wiped() -> None:
    terminal = io.StringIO()  # stdout and stderr on one terminal
    log = CallLog()
    line = ProgressLine(terminal)
    line.on_call(running(log, "slow"))
    line.print_above(terminal, "first\n")
    assert terminal.getvalue().endswith("\r\x1b[Kfirst\n\r\x1b[Kcodemode: 0 s, 0 calls done | slow running")
    line.print_above(terminal, "Loading...")
    unfinished = len(terminal.getvalue())
    line.on_call(running(log, "other"))  # drawing now would return the cursor over "Loading..."
    line.print_above(terminal, " done\n")
    assert terminal.getvalue()[unfinished:].startswith(" done\n")  # nothing came between
    line.close()
