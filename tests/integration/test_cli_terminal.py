"""``codemode run`` in a real terminal (a pty that is the process's controlling terminal, as in a shell).

A program's printed lines appear as it prints them, as with ``python prog.py``, and the progress line is
drawn again below them; Ctrl-C stops the program (SIGINT, the grace period, SIGKILL), keeps what it
printed and ends with one status line and exit status 130, never a Python traceback. With stdout a pipe,
the output is what it always was: everything at the end, in one piece, for the scripts that parse it.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import run_cli as codemode

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}

PROGRESSING = """
for i in range(4):
    print(f"line {i}")
    get_forecast(city="Oslo", days=1, delay_seconds=1.0)
print("done")
"""

GIVES_IN = """
import time
get_weather(city="Oslo", unit="celsius")
try:
    for i in range(100):
        print(f"line {i}")
        time.sleep(1)
except KeyboardInterrupt:
    print("stopping")
    raise
"""

IGNORES_SIGINT = """
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
for i in range(100):
    print(f"line {i}")
    time.sleep(0.5)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    config = {
        "mcpServers": {"weather": WEATHER},
        "workspace": str(tmp_path),
        "defaults": {"codeMode": {"grace": 1}},
    }
    (tmp_path / "weather.json").write_text(json.dumps(config))
    asking = {
        "command": sys.executable,
        "args": [str(Path(__file__).parents[1] / "servers" / "asking_server.py")],
    }
    (tmp_path / "asking.json").write_text(
        json.dumps({"mcpServers": {"asking": asking}, "workspace": str(tmp_path)})
    )
    return tmp_path


@dataclass
class Terminal:
    """What a terminal received from ``codemode run``, each piece with the time it arrived."""

    pieces: list[tuple[float, str]]
    returncode: int

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.pieces)

    def arrival(self, needle: str) -> float:
        """When ``needle`` had wholly arrived."""
        seen = ""
        for at, text in self.pieces:
            seen += text
            if needle in seen:
                return at
        raise AssertionError(f"{needle!r} never reached the terminal: {seen!r}")


def _as_in_a_shell() -> None:
    """In the child: the pty becomes its controlling terminal (Ctrl-C typed on it sends SIGINT to it), and
    SIGINT is handled as in an interactive shell's command, whatever this test process inherited (started
    with ``&`` from a script, it ignores SIGINT, and so would its children)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


class Pty:
    """``codemode run`` with a pty as its controlling terminal (stdin, stderr and, unless piped, stdout)."""

    def __init__(
        self, project: Path, program: str, config: str = "weather.json", *, stdout_pipe: bool = False
    ) -> None:
        (project / "prog.py").write_text(program)
        env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
        home = project / "home"
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), TERM="xterm")
        self.leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "codemode_kernel.cli", "run", "--config", config, "prog.py"],
            cwd=project,
            env=env,
            stdin=follower,
            stdout=subprocess.PIPE if stdout_pipe else follower,
            stderr=follower,
            start_new_session=True,
            preexec_fn=_as_in_a_shell,
        )
        os.close(follower)
        self.pieces: list[tuple[float, str]] = []

    def read_until(self, needle: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while needle not in "".join(text for _, text in self.pieces):
            assert time.monotonic() < deadline, f"no {needle!r}: {self.pieces!r}"
            assert self._read_some(deadline - time.monotonic()), f"ended before {needle!r}: {self.pieces!r}"

    def type(self, keys: bytes) -> float:
        os.write(self.leader, keys)
        return time.monotonic()

    def finish(self, timeout: float = 60) -> Terminal:
        """Read until the process closed the terminal, then wait for its exit status."""
        deadline = time.monotonic() + timeout
        while self._read_some(deadline - time.monotonic()):
            assert time.monotonic() < deadline, f"still running: {self.pieces!r}"
        return Terminal(self.pieces, self.proc.wait(timeout=max(1.0, deadline - time.monotonic())))

    def close(self) -> None:
        os.close(self.leader)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _read_some(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.leader], [], [], max(0.0, timeout))
        if not ready:
            return True  # nothing yet; the caller checks its deadline
        try:
            chunk = os.read(self.leader, 4096)
        except OSError:  # EIO: every end of the terminal's other side is closed
            return False
        self.pieces.append((time.monotonic(), chunk.decode(errors="replace")))
        return bool(chunk)


def screen(text: str) -> list[str]:
    """The rows a terminal shows for ``text`` (carriage return, line feed, erase to end of line)."""
    rows, column = [""], 0
    for token in re.findall(r"\x1b\[K|.", text, flags=re.DOTALL):
        if token == "\x1b[K":
            rows[-1] = rows[-1][:column]
        elif token == "\r":
            column = 0
        elif token == "\n":
            rows.append("")
            column = 0
        else:
            row = rows[-1].ljust(column)
            rows[-1] = row[:column] + token + row[column + 1 :]
            column += 1
    return rows if rows[-1] else rows[:-1]


def typed_out(rows: list[str]) -> list[str]:
    """The rows without the terminal's own echo of Ctrl-C (``^C``, where the cursor was, as for any
    program) and without empty rows."""
    return [row.removeprefix("^C") for row in rows if row.removeprefix("^C").strip()]


@pytest.fixture
def terminal(project: Path):
    opened: list[Pty] = []

    def start(program: str, config: str = "weather.json", *, stdout_pipe: bool = False) -> Pty:
        opened.append(Pty(project, program, config, stdout_pipe=stdout_pipe))
        return opened[-1]

    yield start
    for each in opened:
        each.close()


def test_lines_appear_as_printed_with_the_progress_line_below(terminal) -> None:
    run = terminal(PROGRESSING)
    shown = run.finish(timeout=90)
    assert shown.returncode == 0, shown.text
    # Each line arrives while the program runs: a second of forecast separates one from the next.
    first, last, end = shown.arrival("line 0"), shown.arrival("line 3"), shown.arrival("[ok in")
    assert last - first >= 2.5, shown.pieces
    assert end - first >= 3.0, shown.pieces
    text = shown.text
    for i in range(4):
        # Right after line i, the progress line is drawn again under it, the lines above it intact.
        after = text.index(f"line {i}\r\n")
        drawn = text.index("get_forecast running", after)
        rows = screen(text[:drawn] + "get_forecast running")
        assert rows[:-1] == [f"line {n}" for n in range(i + 1)], rows
        assert re.fullmatch(rf"codemode: \d+ s, {i} calls? done \| get_forecast running", rows[-1]), rows
    final = screen(text)
    assert final[:5] == ["line 0", "line 1", "line 2", "line 3", "done"], final
    assert len(final) == 6 and re.fullmatch(r"\[ok in \d+\.\d\d s, 4 tool calls\]", final[5]), final


def test_ctrl_c_stops_the_program_keeps_its_output_and_exits_130(terminal) -> None:
    run = terminal(GIVES_IN)
    run.read_until("line 1\r\n")
    pressed = run.type(b"\x03")
    shown = run.finish()
    assert shown.returncode == 130, shown.text
    assert "Traceback" not in shown.text and "KeyboardInterrupt" not in shown.text
    rows = typed_out(screen(shown.text))
    assert rows[:2] == ["line 0", "line 1"], rows
    # The program got SIGINT and gave in: what it printed while stopping is kept, then one status line.
    assert rows[-2:-1] == ["stopping"], rows
    assert re.fullmatch(r"\[interrupted after \d+\.\d\d s, 1 tool call\]", rows[-1]), rows
    assert shown.arrival("[interrupted after") - pressed < 1 + 5  # the grace period (1 s) and the exit


def test_ctrl_c_kills_a_program_that_ignores_sigint_after_the_grace_period(terminal) -> None:
    run = terminal(IGNORES_SIGINT)
    run.read_until("line 1\r\n")
    pressed = run.type(b"\x03")
    shown = run.finish()
    assert shown.returncode == 130, shown.text
    assert "Traceback" not in shown.text
    rows = typed_out(screen(shown.text))
    assert rows[:2] == ["line 0", "line 1"], rows
    assert re.fullmatch(r"\[interrupted after \d+\.\d\d s, 0 tool calls\]", rows[-1]), rows
    # It printed on through the grace period (1 s), then it was killed: SIGKILL, not the 100 lines.
    stopped = shown.arrival("[interrupted after") - pressed
    assert 1.0 <= stopped < 1 + 5, stopped
    assert all(re.fullmatch(r"line \d+", row) for row in rows[:-1]) and len(rows) < 20, rows


def test_ctrl_c_at_a_servers_question_ends_the_run_at_once(terminal) -> None:
    run = terminal('print("booking")\nbook_table(restaurant="Chez Nous")\n', config="asking.json")
    run.read_until("the day: ")
    pressed = run.type(b"\x03")
    shown = run.finish(timeout=30)
    assert shown.returncode == 130, shown.text
    assert "Traceback" not in shown.text
    rows = typed_out(screen(shown.text))
    assert rows[0] == "booking" and re.fullmatch(r"\[interrupted after \d+\.\d\d s, 1 tool call\]", rows[-1])
    # Nobody answers the question: the run does not wait for a line typed on the terminal to end.
    assert shown.arrival("[interrupted after") - pressed < 5


def test_interrupted_with_stdout_a_pipe_prints_the_output_kept_then_the_status(terminal) -> None:
    program = 'print("one")\nget_forecast(city="Oslo", days=5, delay_seconds=10)\nprint("never")\n'
    run = terminal(program, stdout_pipe=True)
    run.read_until("get_forecast running")  # the progress line, on stderr (the terminal)
    run.proc.send_signal(signal.SIGINT)
    shown = run.finish()
    assert run.proc.stdout is not None
    out = run.proc.stdout.read().decode()
    assert shown.returncode == 130, (out, shown.text)
    assert re.fullmatch(r"one\n\[interrupted after \d+\.\d\d s, 1 tool call\]\n", out), out
    assert "Traceback" not in shown.text


def test_off_a_terminal_the_output_comes_at_the_end_as_before(project: Path) -> None:
    program = 'import sys\nprint("one")\nprint("err", file=sys.stderr)\nprint("two")\n"value"\n'
    (project / "prog.py").write_text(program)
    done = codemode("run", "--config", "weather.json", "prog.py", cwd=project)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"one\ntwo\nerr\nvalue\n\[ok in \d+\.\d\d s, 0 tool calls\]\n", done.stdout)
    assert done.stderr == ""


def test_what_was_cut_says_so_and_how_much(project: Path) -> None:
    """Output past the executor's limit and a value past the worker's say how much came through."""
    program = 'print("x" * 1_200_000)\n"y" * 1_500_000\n'
    (project / "prog.py").write_text(program)
    done = codemode("run", "--config", "weather.json", "prog.py", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "x" * 1_000_000  # the executor keeps a million characters of output
    assert lines[1] == (
        "[output cut: only the first 1,000,000 characters of what the program printed were kept; "
        "store_artifact(data) in the program keeps large data whole]"
    )
    assert lines[2] == "y" * 1_000_000  # and the worker sends a million bytes of a value
    assert lines[3] == (
        "[the value was cut before it left the worker: 1,000,000 of its 1,500,000 bytes came through; "
        "store_artifact(value) in the program keeps all of it, or return a summary]"
    )
