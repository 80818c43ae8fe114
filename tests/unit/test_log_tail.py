"""The end of a server's stderr log as doctor, %codemode status and the sidebar show it (hub/log_tail.py)."""

from __future__ import annotations

from pathlib import Path

from codemode_kernel.hub.log_tail import LINE_CHARS, log_size, read_log_tail, safe_line


def test_only_what_this_start_wrote_is_shown(tmp_path: Path) -> None:
    log = tmp_path / "s.stderr.log"
    log.write_bytes(b"old start: missing TOKEN\n")
    since = log_size(log)
    with log.open("ab") as file:
        file.write(b"new start\nfatal: port 8080 in use\n")
    assert read_log_tail(log, since=since) == ("new start", "fatal: port 8080 in use")
    assert read_log_tail(log, since=log_size(log)) == ()  # this start wrote nothing: nothing to show


def test_a_rotated_log_is_read_from_its_start_and_a_missing_one_is_empty(tmp_path: Path) -> None:
    log = tmp_path / "s.stderr.log"
    log.write_bytes(b"after rotation: the reason\n")
    assert read_log_tail(log, since=10_000_000) == ("after rotation: the reason",)
    assert read_log_tail(tmp_path / "none.log") == ()
    assert log_size(tmp_path / "none.log") == 0 and log_size(None) == 0


def test_a_few_short_printable_lines_from_the_end(tmp_path: Path) -> None:
    log = tmp_path / "s.stderr.log"
    text = "".join(f"line {i}\n" for i in range(50)) + "y" * 1_000_000 + "\n" + "z" * 1000
    log.write_text(text + "\n\n" + "".join(f"{i}\n" for i in range(9)) + "\x1b[1;31mboom\x1b[0m\r\n")
    assert read_log_tail(log) == ("5", "6", "7", "8", "boom")
    log.write_text(text + "\n\nboom\n")
    (long, boom) = read_log_tail(log)  # the line of y, read from its middle, is left out
    assert boom == "boom" and len(long) == LINE_CHARS and long == "z" * (LINE_CHARS - 1) + "…"


def test_secrets_are_masked() -> None:
    secret = "opensesame42"
    assert safe_line(f"bad key {secret}!", [secret]) == "bad key ***!"
    assert safe_line("Authorization: Bearer abcdefghijkl") == "Authorization: Bearer ***"
    assert safe_line("GITHUB_TOKEN=ghp_abc123 rejected") == "GITHUB_TOKEN=*** rejected"
    assert safe_line('{"api_key": "zzzzzz"}') == '{"api_key": ***}'
    assert safe_line("connect postgres://bob:hunter2@db/x") == "connect postgres://bob:***@db/x"
    assert safe_line("using sk-4f9a8b7c6d5e4f3a2b1c0d9e8f7a") == "using ***"
    path = 'File "/usr/lib/python3.11/site-packages/mcp_server_weather/main.py", line 3'
    assert safe_line(path) == path  # paths and plain words stay readable


def test_control_characters_never_reach_the_screen() -> None:
    assert safe_line("\x1b]0;pwned\x07title\x1b[2Jcleared\x08\x00 tab\there") == "titlecleared tab here"
    assert safe_line("\u202eevil") == "evil"  # a bidi override is not printable
