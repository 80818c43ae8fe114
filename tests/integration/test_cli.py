"""The codemode command as a user runs it: real processes, a private home, real servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli as codemode

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_every_command_has_help(project: Path, home: Path) -> None:
    top = codemode("--help", cwd=project, home=home)
    assert top.returncode == 0
    for command in ("tools", "doctor", "trust", "run", "install", "lab", "serve", "login", "logout"):
        assert command in top.stdout
        sub = codemode(command, "--help", cwd=project, home=home)
        assert sub.returncode == 0 and "usage: codemode " + command in sub.stdout


def test_tools_with_no_config_prints_the_demo_stubs_as_valid_python(project: Path, home: Path) -> None:
    result = codemode("tools", cwd=project, home=home)
    assert result.returncode == 0, result.stderr
    compile(result.stdout, "<codemode tools>", "exec")
    for name in ("get_weather", "read_file", "query", "chart"):
        assert f"def {name}(" in result.stdout


def test_tools_json_previews_a_saved_listing_without_any_server(project: Path, home: Path) -> None:
    listing = {
        "tools": [
            {
                "name": "search-issues",
                "description": "Search GitHub issues.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}, "state": {"enum": ["open", "closed"]}},
                    "required": ["query"],
                },
            },
            {"name": "class", "inputSchema": {"properties": {"x": {"type": "integer"}}}},
        ]
    }
    (project / "github.json").write_text(json.dumps(listing))
    result = codemode("tools", "--tools-json", "github.json", cwd=project, home=home)
    assert result.returncode == 0, result.stderr
    compile(result.stdout, "<stubs>", "exec")
    assert "def search_issues(query: str" in result.stdout
    assert "Literal['open', 'closed']" in result.stdout or 'Literal["open", "closed"]' in result.stdout
    assert "def class_(" in result.stdout
    assert 'inputSchema has no "type"' in result.stderr
    piped = codemode(
        "tools",
        "--tools-json",
        "-",
        "--server",
        "gh",
        cwd=project,
        home=home,
        stdin=json.dumps(listing["tools"]),
    )
    assert piped.returncode == 0 and "def search_issues(" in piped.stdout
    (project / "bad.json").write_text("{oops")
    bad = codemode("tools", "--tools-json", "bad.json", cwd=project, home=home)
    assert bad.returncode == 1 and "bad.json" in bad.stderr and "line 1" in bad.stderr


def test_untrusted_project_config_is_refused_until_trusted(project: Path, home: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER}}))
    refused = codemode("tools", cwd=project, home=home)
    assert refused.returncode == 1
    assert ".mcp.json" in refused.stderr and "codemode trust" in refused.stderr
    trusted = codemode("trust", cwd=project, home=home)
    assert trusted.returncode == 0, trusted.stderr
    assert "get_weather" not in trusted.stdout and ".mcp.json" in trusted.stdout
    assert sys.executable in trusted.stdout  # says which commands it now allows
    result = codemode("tools", cwd=project, home=home)
    assert result.returncode == 0, result.stderr
    assert "def get_weather(" in result.stdout and "def read_file(" not in result.stdout
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER, "other": WEATHER}}))
    assert codemode("tools", cwd=project, home=home).returncode == 1  # edited: asks again


def test_doctor_reports_each_server_and_the_fix(project: Path, home: Path) -> None:
    config = {"mcpServers": {"weather": WEATHER, "broken": {"command": "no-such-mcp-server-xyz"}}}
    (project / "mine.json").write_text(json.dumps(config))
    result = codemode("doctor", "--config", "mine.json", cwd=project, home=home)
    assert result.returncode == 1
    out = result.stdout
    assert "mine.json (explicit)" in out
    assert "weather [stdio]: ready" in out
    assert "broken [stdio]: failed" in out and "no-such-mcp-server-xyz" in out and "fix:" in out
    assert "1 problem(s) found" in out
    healthy = codemode("doctor", cwd=project, home=home)
    assert healthy.returncode == 0, healthy.stdout
    assert "embedded demo servers" in healthy.stdout and "no problems found" in healthy.stdout
    assert "code-mode sandbox:" in healthy.stdout and "pid_namespace" in healthy.stdout


def test_run_prints_output_and_value_and_uses_the_exit_codes(project: Path, home: Path) -> None:
    (project / "prog.py").write_text('print("hi")\nget_weather(city="Oslo", unit="celsius")["city"]\n')
    ok = codemode("run", "prog.py", cwd=project, home=home)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("hi\nOslo\n") and "[ok in" in ok.stdout and "1 tool call]" in ok.stdout
    as_json = codemode("run", "--json", "-", cwd=project, home=home, stdin="1/0")
    record = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and record["status"] == "error"
    assert record["error"]["type"] == "ZeroDivisionError" and record["error"]["line"] == 1
    slow = codemode("run", "--timeout", "1", "-", cwd=project, home=home, stdin="while True: pass")
    assert slow.returncode == 4 and "[timeout in" in slow.stdout
    crash = codemode("run", "-", cwd=project, home=home, stdin="import os\nos._exit(9)")
    assert crash.returncode == 5
    usage = codemode("run", "--timeout", "0", "-", cwd=project, home=home, stdin="1")
    assert usage.returncode == 2 and "--timeout: 0 seconds is outside 1 to 300" in usage.stderr


def test_run_takes_a_timeout_above_300_only_once_max_timeout_allows_it(project: Path, home: Path) -> None:
    refused = codemode("run", "--timeout", "1200", "-", cwd=project, home=home, stdin="1 + 1")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--timeout: 1200 seconds is outside 1 to 300; " in refused.stderr
    assert "set defaults.codeMode.maxTimeout to 1200 or more (up to 3600) in codemode.json" in refused.stderr
    (project / "long.json").write_text(json.dumps({"defaults": {"codeMode": {"maxTimeout": 1800}}}))
    args = ("run", "--config", "long.json", "--json", "--timeout", "1200", "-")
    allowed = codemode(*args, cwd=project, home=home, stdin="1 + 1")
    assert allowed.returncode == 0, allowed.stderr
    record = json.loads(allowed.stdout)
    assert (record["status"], record["value"]["data"], record["timeout_s"]) == ("ok", 2, 1200)


PENDING_PROGRAM = """
cities = ["Oslo", "Lima"]
temps = parallel([lambda c=c: get_weather(city=c, unit="celsius") for c in cities])
print("got", [t.temperature for t in temps])
try:
    here = get_city().city
except ToolError as e:
    here = f"unknown ({e})"
return {"here": here, "warmest": max(cities, key=lambda c: temps[cities.index(c)].temperature)}
"""


def test_run_pending_prints_the_calls_and_resumes_with_the_answers(project: Path, home: Path) -> None:
    (project / "prog.py").write_text(PENDING_PROGRAM)
    first = codemode("run", "prog.py", "--pending", cwd=project, home=home)
    assert first.returncode == 6, first.stderr
    state = json.loads(first.stdout)
    # The parallel batch comes back whole, in the program's order; no server was called.
    assert [(c["tool"], c["arguments"]["city"], c["seq"]) for c in state["pending_calls"]] == [
        ("get_weather", "Oslo", 1),
        ("get_weather", "Lima", 2),
    ]
    assert state["record"] == [] and "--answers" in state["how_to_answer"]
    for call, temperature in zip(state["pending_calls"], [3.5, 19.0], strict=True):
        call["result"] = {"city": call["arguments"]["city"], "temperature": temperature, "unit": "celsius"}
    (project / "answers.json").write_text(json.dumps(state))
    second = codemode("run", "prog.py", "--pending", "--answers", "answers.json", cwd=project, home=home)
    assert second.returncode == 6, second.stderr
    state = json.loads(second.stdout)
    assert state["stdout"] == "got [3.5, 19.0]\n"  # it ran past the batch, with the answers as typed values
    assert [c["tool"] for c in state["pending_calls"]] == ["get_city"] and len(state["record"]) == 2
    state["pending_calls"][0]["error"] = "location is private"
    (project / "answers.json").write_text(json.dumps(state))
    done = codemode(
        "run", "prog.py", "--pending", "--answers", "answers.json", "--json", cwd=project, home=home
    )
    assert done.returncode == 0, done.stdout
    result = json.loads(done.stdout)
    assert result["value"]["data"] == {"here": "unknown (location is private)", "warmest": "Lima"}
    assert all("no server was called" in c["warnings"][0] for c in result["tool_calls"])
    (project / "answers.json").write_text('{"pending_calls": 3}')
    bad = codemode("run", "prog.py", "--pending", "--answers", "answers.json", cwd=project, home=home)
    assert bad.returncode == 2 and 'answers.json: no "pending_calls" list' in bad.stderr
    alone = codemode("run", "prog.py", "--answers", "answers.json", cwd=project, home=home)
    assert alone.returncode == 2 and "add --pending" in alone.stderr


WRITE_PROGRAM = 'write_file(path="note.txt", content="hello")\nprint(read_file(path="note.txt"))\n'


def test_run_asks_before_a_destructive_call_or_follows_approve(project: Path, home: Path) -> None:
    # The demo workspace server's write_file says destructiveHint: true.
    (project / "prog.py").write_text(WRITE_PROGRAM)
    nobody = codemode("run", "prog.py", cwd=project, home=home)  # standard input is not a terminal
    assert nobody.returncode == 1 and not (project / "note.txt").exists()
    assert "workspace/write_file needs approval (its server marks it destructive" in nobody.stdout
    assert "--approve all" in nobody.stdout
    denied = codemode("run", "prog.py", "--approve", "none", cwd=project, home=home)
    assert denied.returncode == 1 and "was denied by --approve none; nothing was sent" in denied.stdout
    allowed = codemode("run", "prog.py", "--approve", "all", "--json", cwd=project, home=home)
    assert allowed.returncode == 0, allowed.stdout
    record = json.loads(allowed.stdout)
    assert record["stdout"] == "hello\n"
    assert record["tool_calls"][0]["approval"]["by"] == "--approve all"


def test_run_on_a_terminal_asks_and_takes_the_answer(project: Path, home: Path) -> None:
    import os
    import pty
    import select
    import subprocess

    (project / "prog.py").write_text(WRITE_PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "codemode_kernel.cli", "run", "prog.py"],
        cwd=project,
        env=env,
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    try:
        asked = b""
        assert proc.stderr is not None
        while b"(default): " not in asked:  # the question, then it waits for a line
            ready, _, _ = select.select([proc.stderr], [], [], 60)
            assert ready, f"no question on the terminal; stderr so far: {asked!r}"
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"codemode run ended without asking: {asked!r}"
            asked += chunk
        os.write(leader, b"y\n")
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(leader)
        proc.kill()
    question = asked.decode()
    assert 'workspace/write_file(path="note.txt", content="hello") needs approval' in question
    assert "y = allow this call, a = allow this tool from now on, n = deny (default)" in question
    assert proc.returncode == 0 and out.decode().startswith("hello\n")
    assert (project / "note.txt").read_text() == "hello"


def test_run_on_a_terminal_shows_a_progress_line_then_erases_it(project: Path, home: Path) -> None:
    """A slow call's progress is drawn on stderr when it is a terminal, and gone before the result."""
    import os
    import pty
    import subprocess

    (project / "codemode.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER}}))
    codemode("trust", cwd=project, home=home)
    (project / "prog.py").write_text(
        'get_weather(city="Paris", unit="celsius")\n'
        'f = get_forecast(city="Oslo", days=3, delay_seconds=0.4)\n'
        "print(len(f.days))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), COLUMNS="120")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "codemode_kernel.cli", "run", "prog.py"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    terminal = b""
    try:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            terminal += chunk
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(leader)
        proc.kill()
    shown = terminal.decode()
    assert proc.returncode == 0 and out.decode().startswith("3\n[ok in "), shown
    assert "| get_forecast 1/3 Oslo: day 1 of 3" in shown
    assert "| get_forecast 2/3 Oslo: day 2 of 3" in shown
    assert "1 call done |" in shown  # get_weather ended before the forecast started
    assert shown.endswith("\r\x1b[K")  # erased: nothing of it stays above the result


def test_run_off_a_terminal_draws_no_progress_line(project: Path, home: Path) -> None:
    (project / "codemode.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER}}))
    codemode("trust", cwd=project, home=home)
    (project / "prog.py").write_text('len(get_forecast(city="Oslo", days=2, delay_seconds=0.05).days)\n')
    done = codemode("run", "prog.py", cwd=project, home=home)
    assert done.returncode == 0 and done.stdout.startswith("2\n[ok in ")
    assert "day 1 of 2" not in done.stderr


def test_run_works_and_says_nothing_odd_when_started_with_sigchld_ignored(tmp_path: Path) -> None:
    """A service manager or a script may start us with SIGCHLD ignored: children then cannot be waited for."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    done = subprocess.run(
        [sys.executable, "-P", "-m", "codemode_kernel.cli", "run", "-"],
        cwd=tmp_path,
        env=env,
        input="print('ran')\n6 * 7",
        capture_output=True,
        text=True,
        timeout=150,
        preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ran\n42\n"), done.stdout
    assert "Unknown child process" not in done.stderr and "returncode 255" not in done.stderr, done.stderr
