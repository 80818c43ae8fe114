"""Which programs wait for servers still connecting: those naming what nothing defines, or listing tools."""

from __future__ import annotations

import pytest

from codemode_kernel.executor.references import wants_unknown_tools

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
    ],
)
def test_programs_naming_what_is_not_there_yet_wait(program: str) -> None:
    assert wants_unknown_tools(program, CONNECTED, {"given"})
