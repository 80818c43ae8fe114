"""What a program may write beyond Python: a top-level ``return``, and JSON's true/false/null.

Through ``prepare`` and ``run_prepared``, as a worker runs a program.
"""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from codemode_kernel.core.errors import CodeSyntaxError
from codemode_kernel.worker.source import prepare, run_prepared


def run(code: str, namespace: dict[str, Any] | None = None) -> tuple[Any, tuple[str, ...]]:
    """The program's value and the notes of what was read beyond Python."""
    given = dict(namespace or {})
    prepared = prepare(code, defined=given)
    return run_prepared(prepared, {"__builtins__": builtins, **given}), prepared.notes


@pytest.mark.parametrize(
    ("code", "value"),
    [
        ("return 42", 42),
        ("return", None),
        ("x = 1\nif x:\n    return x + 1\nx", 2),
        ("for i in range(5):\n    if i == 3:\n        return i\n'never'", 3),
        ("while True:\n    return 'out'", "out"),
        ("with open('/dev/null') as f:\n    return 'closed'", "closed"),
        ("import asyncio\nawait asyncio.sleep(0)\nreturn 'awaited'", "awaited"),
        ("try:\n    return 'tried'\nexcept Exception:\n    return 'caught'", "tried"),
    ],
)
def test_a_top_level_return_ends_the_program_with_its_value(code: str, value: Any) -> None:
    assert run(code) == (value, ())


def test_finally_blocks_run_on_the_way_out_and_nothing_after_the_return() -> None:
    seen: list[str] = []
    assert run(
        "try:\n    return 1\nfinally:\n    seen.append('finally')\nseen.append('after')", {"seen": seen}
    )
    assert seen == ["finally"]


def test_a_functions_own_return_is_left_alone() -> None:
    assert run("def f():\n    return 5\nf() + 1") == (6, ())
    assert run("g = lambda: 7\ng()") == (7, ())


def test_a_return_in_a_class_body_is_still_a_syntax_error_at_its_line() -> None:
    with pytest.raises(CodeSyntaxError) as caught:
        prepare("x = 1\nclass A:\n    return 1")
    assert caught.value.error["line"] == 3
    assert "outside function" in caught.value.error["message"]


def test_json_literals_read_as_constants_where_nothing_defines_them() -> None:
    value, notes = run('payload = {"ok": true, "missing": null}\n[payload, false]')
    assert value == [{"ok": True, "missing": None}, False]
    assert notes == (
        "line 1: read JSON's true as True, its Python spelling",
        "line 1: read JSON's null as None, its Python spelling",
        "line 2: read JSON's false as False, its Python spelling",
    )


@pytest.mark.parametrize(
    "code",
    [
        "true = 'mine'\ntrue",
        "def f(true):\n    return true\nf('mine')",
        "for true in ['mine']:\n    pass\ntrue",
        "import json as true\ntrue = 'mine'\ntrue",
        "try:\n    raise ValueError('mine')\nexcept ValueError as true:\n    found = str(true)\nfound",
    ],
)
def test_a_name_the_program_binds_is_never_a_literal(code: str) -> None:
    assert run(code) == ("mine", ())


def test_a_name_the_namespace_has_is_never_a_literal() -> None:
    assert run("[true, false]", {"true": "an input"}) == (
        ["an input", False],
        ("line 1: read JSON's false as False, its Python spelling",),
    )


def test_a_json_literal_is_read_in_a_nested_function_too() -> None:
    assert run("def f():\n    return null\nf()")[0] is None
