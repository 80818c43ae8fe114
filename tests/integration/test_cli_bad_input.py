"""Bad input at the command line (issue 9): each ends in a message that names the thing, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli as codemode

pytestmark = pytest.mark.integration

LISTING_SERVER = Path(__file__).resolve().parent.parent / "servers" / "listing_server.py"
MAX_DEPTH = 100


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def test_deeply_nested_config_is_a_config_error_in_every_command(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text('{"mcpServers": {"a": {"command": "x", "args": ' + deep + "}}}")
    for command in ("tools", "doctor", "run"):
        extra = ("-",) if command == "run" else ()
        result = codemode(command, "--config", "deep.json", *extra, cwd=tmp_path, stdin=b"1")
        assert_no_traceback(result)
        out = result.stdout + result.stderr
        assert "deep.json" in out and "nested too deeply" in out and f"more than {MAX_DEPTH} levels" in out
        assert result.returncode == (2 if command == "run" else 1), out


def test_deeply_nested_tools_json_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "listing.json").write_text("[" * 100_000 + "]" * 100_000)
    result = codemode("tools", "--tools-json", "listing.json", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 1
    assert "listing.json" in result.stderr and "nested too deeply" in result.stderr
    assert f"more than {MAX_DEPTH} levels" in result.stderr
    piped = codemode("tools", "--tools-json", "-", cwd=tmp_path, stdin=b'{"tools": ' + b"{" * 5000)
    assert_no_traceback(piped)
    assert piped.returncode == 1 and "nested too deeply" in piped.stderr


def test_program_that_is_not_utf8_is_a_usage_error_naming_file_encoding_and_byte(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_bytes(b'print("ok")\nprint("caf\xe9")\n')
    result = codemode("run", "prog.py", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert "prog.py" in result.stderr and "UTF-8" in result.stderr
    assert "byte 0xe9 at position 22" in result.stderr and "line 2" in result.stderr
    assert "coding" in result.stderr  # the fix: save as UTF-8 or declare the encoding
    piped = codemode("run", "-", cwd=tmp_path, stdin=b"x = '\xff'\n")
    assert_no_traceback(piped)
    assert piped.returncode == 2 and "standard input" in piped.stderr and "0xff" in piped.stderr


def test_program_that_declares_its_encoding_runs(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\nprint('café')\n".encode("latin-1")
    (tmp_path / "prog.py").write_bytes(source)
    (tmp_path / "none.json").write_text('{"mcpServers": {}}')
    result = codemode("run", "--config", "none.json", "prog.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("café\n")


def test_program_with_an_unknown_encoding_declared_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_bytes(b"# coding: klingon\nprint(1)\n")
    result = codemode("run", "prog.py", cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2 and "prog.py" in result.stderr and "klingon" in result.stderr


def test_doctor_lists_each_tool_whose_arguments_are_not_validated(tmp_path: Path) -> None:
    listing = {
        "tools": [
            {"name": "fine", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            {"name": "type_42", "inputSchema": {"type": 42}},
            {"name": "no_schema"},
            {"name": "text_schema", "inputSchema": "object"},
            {"name": "bad_required", "inputSchema": {"type": "object", "required": 5}},
        ]
    }
    (tmp_path / "listing.json").write_text(json.dumps(listing))
    server = {"command": sys.executable, "args": [str(LISTING_SERVER), "listing.json"], "cwd": "."}
    (tmp_path / "conf.json").write_text(json.dumps({"mcpServers": {"odd": server}}))
    result = codemode("doctor", "--config", "conf.json", cwd=tmp_path)
    out = result.stdout
    assert "odd [stdio]: ready, 5 tools" in out, out + result.stderr
    for name, what in [
        ("type_42", "42 is not valid"),
        ("no_schema", "no inputSchema"),
        ("text_schema", "inputSchema is not an object"),
        ("bad_required", "5 is not of type 'array'"),
    ]:
        lines = [line for line in out.splitlines() if f"tool {name}()" in line]
        assert len(lines) == 1, (name, out)
        assert what in lines[0] and "arguments are not validated" in lines[0], lines[0]
        assert "odd." not in lines[0] and "sent unchecked" not in lines[0], lines[0]  # said once, plainly
    assert "tool fine()" not in out
    assert "excludedTools" in out  # what the user can do about it
