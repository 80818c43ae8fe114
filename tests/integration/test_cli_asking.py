"""``codemode run`` when a server asks back: on a terminal (a pty) the question is asked there, one line per
field, Enter taking the default; with stdin not a terminal the question is declined, naming the server."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli as codemode

pytestmark = pytest.mark.integration

SERVER = str(Path(__file__).parents[1] / "servers" / "asking_server.py")
PROGRAM = 'r = book_table(restaurant="Chez Nous")\nprint(r["action"], r["content"])\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    config = {
        "mcpServers": {"asking": {"command": sys.executable, "args": [SERVER]}},
        "workspace": str(tmp_path),
    }
    (tmp_path / "asking.json").write_text(json.dumps(config))
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path


def _read_until(fd: int, marker: bytes, seen: bytes) -> bytes:
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, f"no {marker!r} on the terminal; so far: {seen!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"codemode run ended before {marker!r}: {seen!r}"
        seen += chunk
    return seen


def test_run_on_a_terminal_asks_each_field_and_enter_takes_the_default(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
    env.update(HOME=str(project / "home"), XDG_CONFIG_HOME=str(project / "home" / ".config"))
    leader, follower = pty.openpty()
    command = [sys.executable, "-P", "-m", "codemode_kernel.cli", "run", "--config", "asking.json", "prog.py"]
    proc = subprocess.Popen(
        command, cwd=project, env=env, stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    os.close(follower)
    try:
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        asked = _read_until(fd, b"[date: string, required, Enter = 2026-12-24]\n    the day: ", b"")
        os.write(leader, b"\n")  # Enter: the date's default
        for marker, answer in ((b"[guests:", b"6\n"), (b"[vegetarian:", b"y\n"), (b"[seating:", b"\n")):
            asked = _read_until(fd, marker, asked)
            os.write(leader, answer)
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(leader)
        proc.kill()
    question = asked.decode()
    assert (
        "codemode: server asking/book_table asks: Booking at Chez Nous: when, and for how many?" in question
    )
    content = {"date": "2026-12-24", "guests": 6, "vegetarian": True, "seating": "inside"}
    assert proc.returncode == 0, out
    assert out.decode().startswith(f"accept {content}\n")


def test_run_off_a_terminal_declines_naming_the_server(project: Path) -> None:
    done = codemode("run", "--config", "asking.json", "--json", "prog.py", cwd=project, home=project / "home")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["stdout"] == "decline None\n"
    (asked,) = record["tool_calls"][0]["asked"]
    assert asked["answer"]["by"] == "nobody"
    assert "server 'asking' asked a question" in asked["answer"]["note"]
