"""Which programs wait for servers still connecting: those naming what nothing defines, or listing tools."""

from __future__ import annotations

import pytest

from codemode_kernel.executor.references import SessionNames, note_connecting, wants_unknown_tools

CONNECTED = {"echo", "get-weather"}.__contains__  # the tools of the servers already connected


@pytest.mark.parametrize(
    "program",
    [
        'echo(text="x")',
        'tools.echo(text="x")',
        'tools["echo"](text="x")',
        'r = await atools.echo(text="x")',
        "from tools import echo\necho(text='x')",
        "from tools import echo as e\ne(text='x')",
        "x = 1\nprint(x)",
        "def f(a, *rest, k=1, **more):\n    return a, rest, k, more\nf(1)",
        "import json, os.path\njson.dumps(os.path.sep)",
        "try:\n    pass\nexcept ToolError as e:\n    print(e)",
        "[y for y in range(3)]",
        "match 1:\n    case [a, *others]:\n        print(a, others)\n"
        "    case {'k': v, **rest}:\n        print(v, rest)",
        "parallel(lambda: echo(text='x'))",
        "print(given)",  # an input
        "%%codemode\necho(text='x')",
        "```python\necho(text='x')\n```",
        "from json import *\nprint(dumps(1))",  # what it binds is unknowable: no point waiting
        "def (",  # does not compile: the worker reports it, nothing to wait for
    ],
)
def test_programs_using_connected_tools_run_at_once(program: str) -> None:
    assert not wants_unknown_tools(program, CONNECTED, {"given"})


@pytest.mark.parametrize(
    "program",
    [
        'slow_echo(text="x")',  # a tool of a server still connecting (or a typo)
        'tools.slow_echo(text="x")',
        'tools["slow-echo"](text="x")',
        "await atools.slow_echo(text='x')",
        "from tools import slow_echo",
        "from tools import slow_echo as s",
        'print(search_tools("weather"))',  # the whole list
        'tool_schema("echo")',
        "print(dir(tools))",
        "name = 'echo'\ntools[name]()",
        "from tools import *",
        "from json import *\ntools.slow_echo(text='x')",  # named through tools: still a tool
    ],
)
def test_programs_naming_what_is_not_there_yet_wait(program: str) -> None:
    assert wants_unknown_tools(program, CONNECTED, {"given"})


def test_a_session_counts_the_names_its_earlier_programs_bound() -> None:
    earlier = SessionNames()
    earlier.add("rows = [1]\ndef total(xs):\n    return sum(xs)\nimport json as j", inputs=["given"])
    for later in ("print(total(rows), j.dumps(1))", "print(given)"):
        assert not wants_unknown_tools(later, CONNECTED, earlier), later
    assert wants_unknown_tools("print(typo)", CONNECTED, earlier)
    earlier.add("from os.path import *")  # from now on, any name may be one of its globals
    assert not wants_unknown_tools("print(typo)", CONNECTED, earlier)
    assert wants_unknown_tools("tools.slow_echo(text='x')", CONNECTED, earlier)
    assert "rows" not in SessionNames()


@pytest.mark.parametrize(
    ("kind", "message", "noted"),
    [
        ("NameError", "name 'x' is not defined", True),
        ("AttributeError", "module 'tools' has no attribute 'slow_echo'", True),
        ("AttributeError", "'types.SimpleNamespace' object has no attribute 'slow_echo'", True),  # atools
        ("ImportError", "cannot import name 'slow_echo' from 'tools' (unknown location)", True),
        ("UnknownToolError", "no tool named 'slow_echo'; search_tools(query) lists tools by keyword", True),
        ("AttributeError", "'dict' object has no attribute 'slow_echo'", False),  # the program's own
        ("ImportError", "cannot import name 'nope' from 'json'", False),
        ("KeyError", "'a'", False),
        ("ValueError", "bad", False),
    ],
)
def test_missing_name_errors_name_the_servers_still_connecting(kind: str, message: str, noted: bool) -> None:
    error: dict[str, object] = {"type": kind, "message": message, "traceback": f"...\n{kind}: {message}"}
    note_connecting(error, ["slow", "stuck"])
    note = " (servers still connecting: slow, stuck)"
    expected = message + note if noted else message
    assert error["message"] == expected
    assert error["traceback"] == f"...\n{kind}: {expected}" + ("\n" if noted else "")
    untouched: dict[str, object] = {"type": kind, "message": message}
    note_connecting(untouched, [])
    assert untouched["message"] == message
