"""Code as LLMs write it runs, and its errors point at the code as written."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codemode_kernel.core.errors import CodeModeError
from codemode_kernel.worker.source import (
    CodeSyntaxError,
    PreparedCode,
    arun_prepared,
    error_record,
    format_error_text,
    prepare,
    run_prepared,
)

RECORD_KEYS = {"type", "message", "line", "column", "source_line", "traceback"}


def run(code: str, **globals: Any) -> Any:
    return run_prepared(prepare(code), dict(globals))


def failure(code: str, **globals: Any) -> dict[str, Any]:
    """The error record of a program that must raise; checks the record is JSON."""
    prepared = prepare(code)
    with pytest.raises(BaseException) as caught:
        run_prepared(prepared, dict(globals))
    record = error_record(caught.value, prepared)
    assert set(record) == RECORD_KEYS
    json.dumps(record, allow_nan=False)
    return record


def syntax_failure(code: str) -> dict[str, Any]:
    with pytest.raises(CodeSyntaxError) as caught:
        prepare(code)
    assert set(caught.value.error) == RECORD_KEYS
    json.dumps(caught.value.error, allow_nan=False)
    return caught.value.error


# --- the program's value ---------------------------------------------------------------------------


def test_the_last_expression_is_the_value() -> None:
    assert run("x = 20\nx + 22") == 42


def test_out_is_the_value_when_the_program_ends_with_a_statement() -> None:
    assert run("__out = {'a': 1}\ny = 2") == {"a": 1}


def test_out_is_the_value_when_the_last_expression_gives_none() -> None:
    assert run("__out = 5\nprint('done')") == 5


def test_the_last_expression_wins_over_out() -> None:
    assert run("__out = 5\n6") == 6


def test_no_expression_and_no_out_gives_none() -> None:
    assert run("x = 1") is None
    assert run("") is None
    assert run("def f():\n    return 3") is None


def test_out_of_an_earlier_run_does_not_leak_into_the_next() -> None:
    namespace: dict[str, Any] = {}
    assert run_prepared(prepare("__out = 1"), namespace) == 1
    assert run_prepared(prepare("y = 2"), namespace) is None
    assert namespace["y"] == 2


def test_the_hidden_value_name_does_not_stay_in_the_globals() -> None:
    namespace: dict[str, Any] = {}
    run_prepared(prepare("a = 1\na"), namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == ["a"]


def test_the_kernels_future_imports_do_not_leak_into_the_program() -> None:
    # source.py uses `from __future__ import annotations`; the program must not inherit it.
    assert run("def f(x: int) -> str:\n    pass\nf.__annotations__") == {"x": int, "return": str}


# --- fences and magic lines ------------------------------------------------------------------------


def test_a_python_fence_with_text_around_it() -> None:
    code = "Here is the program:\n\n```python\nx = 3\nx * 2\n```\nIt prints nothing."
    prepared = prepare(code)
    assert prepared.source == "x = 3\nx * 2"
    assert prepared.line_offset == 3
    assert run_prepared(prepared, {}) == 6


@pytest.mark.parametrize(
    "code",
    [
        "```\n1 + 1\n```",
        "```py\n1 + 1\n```",
        "```Python3 title='x'\n1 + 1\n```",
        "~~~python\n1 + 1\n~~~",
        "````python\n1 + 1\n````",
        "```python\n1 + 1",  # a cut-off answer: the block runs to the end
        "\n\n```python\n1 + 1\n```\n\n",
    ],
)
def test_fence_variants(code: str) -> None:
    assert run(code) == 2


def test_the_first_python_block_wins_over_blocks_in_other_languages() -> None:
    code = "Install it:\n```bash\npip install thing\n```\nThen:\n```python\n'first'\n```\n"
    code += "```python\n'second'\n```"
    assert run(code) == "first"


def test_an_indented_fence_is_de_indented_and_columns_count_as_written() -> None:
    code = "1. Run:\n   ```python\n   x = 0\n   y = 1 / x\n   ```"
    assert prepare(code).column_offset == 3
    record = failure(code)
    assert (record["line"], record["source_line"]) == (4, "   y = 1 / x")
    assert record["column"] == 8  # "1 / x" starts in column 8 of the line as written


def test_valid_code_with_a_fence_inside_a_string_is_left_alone() -> None:
    assert run('text = """\n```python\nnot code\n```\n"""\ntext.count("```")') == 2


@pytest.mark.parametrize(
    "code",
    [
        "%%codemode\n40 + 2",
        "%%codemode --timeout 5 --session s\n40 + 2",
        "\n%%codemode\n40 + 2",
        "%%codemode\n```python\n40 + 2\n```",
        "```python\n%%codemode\n40 + 2\n```",
    ],
)
def test_a_leading_codemode_magic_line_is_ignored(code: str) -> None:
    assert run(code) == 42


def test_a_magic_line_later_in_the_program_is_code() -> None:
    syntax_failure("x = 1\n%%codemode")


def test_runtime_error_after_a_fence_line_counts_lines_as_written() -> None:
    record = failure("```python\nx = 0\ny = 1 / x\n```")
    assert record["line"] == 3
    assert record["source_line"] == "y = 1 / x"
    assert record["column"] == 5
    assert "line 3, in <module>\n    y = 1 / x\n        ^^^^^" in record["traceback"]


def test_runtime_error_after_magic_and_fence_counts_lines_as_written() -> None:
    code = "%%codemode\nSure! Here it is:\n```python\nimport math\n\nmath.sqrt(-1)\n```"
    record = failure(code)
    assert (record["type"], record["line"], record["source_line"]) == ("ValueError", 6, "math.sqrt(-1)")


@given(
    prose=st.lists(st.text(alphabet="abc .:!", max_size=20), max_size=5),
    before=st.integers(min_value=0, max_value=5),
    magic=st.booleans(),
)
def test_any_text_before_the_fence_keeps_the_error_line(prose: list[str], before: int, magic: bool) -> None:
    head = (["%%codemode"] if magic else []) + prose + ["```python"]
    body = ["x = 1"] * before + ["raise KeyError('k')"]
    prepared = prepare("\n".join([*head, *body, "```", "Done."]))
    with pytest.raises(KeyError) as caught:
        run_prepared(prepared, {})
    record = error_record(caught.value, prepared)
    assert record["line"] == len(head) + before + 1
    assert record["source_line"] == "raise KeyError('k')"


# --- async programs --------------------------------------------------------------------------------


def test_top_level_await_with_gather() -> None:
    code = (
        "import asyncio\n"
        "async def twice(x):\n"
        "    await asyncio.sleep(0.01)\n"
        "    return 2 * x\n"
        "await asyncio.gather(*(twice(i) for i in range(5)))"
    )
    prepared = prepare(code)
    assert prepared.is_async
    assert run_prepared(prepared, {}) == [0, 2, 4, 6, 8]


def test_top_level_async_for_and_async_with() -> None:
    code = (
        "import contextlib\n"
        "async def numbers():\n"
        "    for i in range(4):\n"
        "        yield i\n"
        "@contextlib.asynccontextmanager\n"
        "async def opened():\n"
        "    yield 10\n"
        "total = 0\n"
        "async with opened() as base:\n"
        "    async for n in numbers():\n"
        "        total += base + n\n"
        "total"
    )
    assert run(code) == 46


def test_top_level_async_comprehension() -> None:
    code = "async def gen():\n    yield 1\n    yield 2\n[x async for x in gen()]"
    assert run(code) == [1, 2]


def test_sync_code_does_not_need_awaiting() -> None:
    assert not prepare("1").is_async
    assert not prepare("async def f():\n    await g()").is_async


def test_arun_prepared_runs_on_the_callers_loop() -> None:
    async def main() -> Any:
        loop = asyncio.get_running_loop()
        same = await arun_prepared(prepare("import asyncio\nasyncio.get_running_loop()"), {})
        return same is loop, await arun_prepared(prepare("1 + 2"), {})

    assert asyncio.run(main()) == (True, 3)


def test_run_prepared_inside_a_running_loop_says_to_use_arun() -> None:
    async def main() -> None:
        run_prepared(prepare("await f()"), {})

    with pytest.raises(RuntimeError, match="arun_prepared"):
        asyncio.run(main())


def test_an_error_in_a_gathered_task_points_at_the_user_function() -> None:
    code = (
        "import asyncio\n"
        "async def check(x):\n"
        "    await asyncio.sleep(0)\n"
        "    if x == 2:\n"
        "        raise ValueError(f'bad {x}')\n"
        "    return x\n"
        "await asyncio.gather(check(1), check(2))"
    )
    record = failure(code)
    assert (record["type"], record["message"], record["line"]) == ("ValueError", "bad 2", 5)
    assert "line 7, in <module>" in record["traceback"]
    assert "line 5, in check" in record["traceback"]


# --- syntax errors ---------------------------------------------------------------------------------


def test_a_syntax_error_carries_the_written_line_and_a_caret() -> None:
    error = syntax_failure("```python\nx = 1\ny = (x +\n```")
    assert error["type"] == "SyntaxError"
    assert error["line"] == 3
    assert error["column"] == 5
    assert error["source_line"] == "y = (x +"
    assert error["message"] == "'(' was never closed\n    y = (x +\n        ^"
    assert error["traceback"] == (
        "  File \"<code>\", line 3\n    y = (x +\n        ^\nSyntaxError: '(' was never closed"
    )
    assert format_error_text(error) == error["traceback"]


def test_code_syntax_error_is_a_syntax_error_located_as_written() -> None:
    with pytest.raises(CodeSyntaxError) as caught:
        prepare("%%codemode\nfor x in range(3)\n    pass", filename="<cell>")
    exc = caught.value
    assert isinstance(exc, SyntaxError)
    assert isinstance(exc, CodeModeError)
    assert (exc.lineno, exc.filename) == (2, "<cell>")
    assert "expected ':'" in exc.error["message"]
    assert error_record(exc, None) == exc.error


def test_a_caret_spans_the_faulty_range() -> None:
    error = syntax_failure("x = 1\nprint 'hello'")
    assert error["line"] == 2
    assert error["message"].endswith("\n    print 'hello'\n    ^^^^^^^^^^^^^")


def test_an_error_found_by_the_compiler_is_located_too() -> None:
    error = syntax_failure("```python\nx = 1\nbreak\n```")
    assert (error["line"], error["source_line"]) == (3, "break")
    assert "'break' outside loop" in error["message"]


@pytest.mark.parametrize(
    ("code", "kind", "line"),
    [
        ("if True:\nx = 1", "IndentationError", 2),
        ("x = 1\n    y = 2", "IndentationError", 2),
        ("if True:\n\tx = 1\n        y = 2", "TabError", 3),
    ],
)
def test_indentation_and_tab_errors(code: str, kind: str, line: int) -> None:
    error = syntax_failure(code)
    assert (error["type"], error["line"]) == (kind, line)


def test_a_column_counts_characters_not_bytes() -> None:
    error = syntax_failure("café = 'é'; café +(")
    assert error["column"] == 19
    assert error["message"].endswith("\n    café = 'é'; café +(\n                      ^")


def test_an_error_past_the_last_line_has_no_source_line() -> None:
    error = syntax_failure("def f(:")
    assert error["line"] == 1


# --- runtime errors --------------------------------------------------------------------------------

NESTED = """\
```python
def parse(text):
    return int(text)

def total(items):
    return sum(parse(item) for item in items)

def report():
    data = ["1", "2", "x"]
    return total(data)

report()
```"""


def test_an_error_deep_in_user_functions_lists_only_user_frames() -> None:
    record = failure(NESTED)
    assert record["type"] == "ValueError"
    assert record["message"] == "invalid literal for int() with base 10: 'x'"
    assert (record["line"], record["column"], record["source_line"]) == (3, 12, "    return int(text)")
    assert record["traceback"] == (
        "Traceback (most recent call last):\n"
        '  File "<code>", line 12, in <module>\n'
        "    report()\n"
        '  File "<code>", line 10, in report\n'
        "    return total(data)\n"
        "           ^^^^^^^^^^^\n"
        '  File "<code>", line 6, in total\n'
        "    return sum(parse(item) for item in items)\n"
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '  File "<code>", line 6, in <genexpr>\n'
        "    return sum(parse(item) for item in items)\n"
        "               ^^^^^^^^^^^\n"
        '  File "<code>", line 3, in parse\n'
        "    return int(text)\n"
        "           ^^^^^^^^^\n"
        "ValueError: invalid literal for int() with base 10: 'x'"
    )
    assert format_error_text(record) == record["traceback"]


def test_no_frame_of_the_runner_or_of_python_files_is_shown() -> None:
    record = failure("import json\njson.loads('{')")
    assert ".py" not in record["traceback"]
    assert "[called loads(), outside your code:" in record["traceback"]
    assert record["line"] == 2


def test_an_error_inside_a_tool_keeps_the_calling_user_frame() -> None:
    def get_weather(city: str) -> dict[str, Any]:
        return fetch(city)

    def fetch(city: str) -> dict[str, Any]:
        if city == "Atlantis":
            raise LookupError(f"no weather for {city}")
        return {"city": city}

    record = failure(
        "cities = ['Paris', 'Atlantis']\n[get_weather(c) for c in cities]", get_weather=get_weather
    )
    assert (record["type"], record["message"]) == ("LookupError", "no weather for Atlantis")
    assert (record["line"], record["source_line"]) == (2, "[get_weather(c) for c in cities]")
    lines = record["traceback"].splitlines()
    assert lines[-2] == "  [called get_weather(), outside your code: 2 frames not shown]"
    assert lines[-1] == "LookupError: no weather for Atlantis"
    assert "fetch" not in record["traceback"]


def test_a_user_callback_called_from_library_code_is_shown() -> None:
    record = failure("def key(x):\n    return x['k']\nsorted([{}], key=key)")
    assert record["line"] == 2
    assert "line 3, in <module>" in record["traceback"]
    assert "line 2, in key" in record["traceback"]


def test_a_chained_exception_names_its_cause() -> None:
    code = (
        "config = {}\n"
        "try:\n"
        "    config['port']\n"
        "except KeyError as exc:\n"
        "    raise RuntimeError('no port configured') from exc"
    )
    record = failure(code)
    assert (record["type"], record["message"], record["line"]) == ("RuntimeError", "no port configured", 5)
    assert record["traceback"].endswith(
        "RuntimeError: no port configured\nThe direct cause was KeyError: 'port' (line 3)"
    )


def test_an_exception_raised_while_handling_another_names_it() -> None:
    record = failure("try:\n    1 / 0\nexcept ZeroDivisionError:\n    undefined_name")
    assert record["type"] == "NameError"
    assert record["traceback"].endswith(
        "It happened while handling ZeroDivisionError: division by zero (line 2)"
    )


def test_a_suppressed_context_is_not_mentioned() -> None:
    record = failure("try:\n    1 / 0\nexcept ZeroDivisionError:\n    raise ValueError('v') from None")
    assert "ZeroDivisionError" not in record["traceback"]


def test_a_cycle_of_causes_ends() -> None:
    code = "a = ValueError('a')\nb = TypeError('b')\na.__cause__ = b\nb.__cause__ = a\nraise a"
    record = failure(code)
    assert record["traceback"].count("The direct cause was") == 1


def test_recursion_error_gives_a_short_record() -> None:
    record = failure("def down(n):\n    return down(n + 1)\ndown(0)")
    assert (record["type"], record["line"]) == ("RecursionError", 2)
    assert "maximum recursion depth exceeded" in record["message"]
    assert "[Previous line repeated" in record["traceback"]
    assert len(record["traceback"]) < 2000


def test_mutual_recursion_keeps_the_outermost_and_innermost_frames() -> None:
    record = failure("def ping(n):\n    return pong(n)\ndef pong(n):\n    return ping(n)\nping(0)")
    assert "more frames ...]" in record["traceback"]
    assert record["traceback"].count("\n") < 100
    assert "line 5, in <module>" in record["traceback"]


@pytest.mark.parametrize(
    ("code", "kind", "message"),
    [
        ("raise KeyboardInterrupt", "KeyboardInterrupt", "interrupted"),
        ("import sys\nsys.exit(3)", "SystemExit", "sys.exit(3)"),
        ("raise SystemExit('bye')", "SystemExit", "sys.exit('bye')"),
        ("raise MemoryError", "MemoryError", "out of memory"),
        ("raise RecursionError", "RecursionError", "maximum recursion depth exceeded"),
    ],
)
def test_base_exceptions_without_a_message_get_a_sensible_one(code: str, kind: str, message: str) -> None:
    record = failure(code)
    assert record["type"] == kind
    assert message in record["message"]
    assert record["line"] is not None


def test_an_exception_whose_str_raises_still_gives_a_record() -> None:
    code = "class Evil(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\nraise Evil()"
    record = failure(code)
    assert (record["type"], record["line"]) == ("Evil", 4)
    assert record["message"] == "<unprintable Evil>"


def test_a_huge_message_is_clipped() -> None:
    record = failure("raise ValueError('x' * 1_000_000)")
    assert len(record["message"]) < 3000
    assert "more characters" in record["message"]


def test_notes_and_exception_groups_are_in_the_message() -> None:
    code = (
        "e = ValueError('outer')\n"
        "e.add_note('while reading row 3')\n"
        "raise ExceptionGroup('two failed', [e, KeyError('k')])"
    )
    record = failure(code)
    assert record["type"] == "ExceptionGroup"
    assert "two failed (2 sub-exceptions)" in record["message"]
    assert "  - ValueError: outer\nwhile reading row 3" in record["message"]
    assert "  - KeyError: 'k'" in record["message"]


def test_a_record_without_prepared_code_names_no_files() -> None:
    try:
        json.loads("{")
    except ValueError as exc:
        record = error_record(exc, None)
    assert record["type"] == "JSONDecodeError"
    assert record["line"] is None
    assert ".py" not in record["traceback"]
    assert record["traceback"].endswith(
        "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )


def test_a_syntax_error_from_exec_inside_the_program_points_at_the_exec_call() -> None:
    record = failure("x = 1\nexec('1 +')")
    assert (record["type"], record["line"], record["source_line"]) == ("SyntaxError", 2, "exec('1 +')")


def test_an_exception_without_a_traceback() -> None:
    record = error_record(ValueError("never raised"), prepare("x = 1"))
    assert record == {
        "type": "ValueError",
        "message": "never raised",
        "line": None,
        "column": None,
        "source_line": None,
        "traceback": "ValueError: never raised",
    }


def test_format_error_text_of_a_partial_or_untrusted_record() -> None:
    assert format_error_text({"type": "X", "message": "m"}) == "X: m"
    assert (
        format_error_text({"type": "X", "message": "m", "line": 4, "source_line": "y()"})
        == "X: m\n  at line 4: y()"
    )
    assert format_error_text({"traceback": 5, "type": None}) == "None: None"
    assert len(format_error_text({"type": "X", "message": "m" * 10**6})) < 3000


def test_prepared_code_keeps_the_written_text() -> None:
    prepared = prepare("```python\nx = 1\n```", filename="<cell 3>")
    assert isinstance(prepared, PreparedCode)
    assert prepared.text == "```python\nx = 1\n```"
    assert (prepared.filename, prepared.line_offset, prepared.line(2), prepared.line(9)) == (
        "<cell 3>",
        1,
        "x = 1",
        None,
    )


def test_crlf_line_breaks_count_like_newlines() -> None:
    record = failure("```python\r\nx = 0\r\n1 / x\r\n```")
    assert (record["line"], record["source_line"]) == (3, "1 / x")
