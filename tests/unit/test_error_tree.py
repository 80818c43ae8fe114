"""Every error this package raises on purpose is a CodeModeError, defined in core/errors.py's one tree.

Read from the source (ast), so a new ``class SomethingError(ValueError)`` anywhere fails here before a
user finds that ``except CodeModeError`` does not catch it.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import codemode_kernel
from codemode_kernel.core import errors, limits
from codemode_kernel.core.errors import CodeModeError

PACKAGE = Path(codemode_kernel.__file__).parent
SIGNALS = {"ProgramReturn", "ProgramComplete", "NoStdin"}
"""Not errors but signals: BaseExceptions that end a program on purpose (``return`` at top level,
``complete()``), and the EOFError a kernel's approver reads as "nobody can answer"."""


def builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def exception_classes_outside_the_tree() -> list[str]:
    """``path:line Name(Base)`` for each public class deriving directly from a built-in exception."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "core" / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_") or node.name in SIGNALS:
                continue
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            if any(builtin_exception(b) for b in bases):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}({', '.join(bases)})")
    return found


def test_no_public_exception_class_lives_outside_the_error_tree() -> None:
    outside = exception_classes_outside_the_tree()
    assert not outside, (
        "define these in codemode_kernel/core/errors.py as CodeModeError subclasses (and draw them in its "
        f"tree): {outside}"
    )


@pytest.mark.parametrize(
    "name", ["ClientToolsError", "EnvFileError", "PendingFileError", "QuestionRefused", "TimeoutValueError"]
)
def test_the_input_errors_are_code_mode_errors_and_still_value_errors(name: str) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, CodeModeError) and issubclass(cls, ValueError)
    assert name in (errors.__doc__ or "")


def test_a_refused_timeout_is_caught_as_a_code_mode_error() -> None:
    with pytest.raises(CodeModeError, match="--timeout"):
        limits.check_timeout(0, field="--timeout")
