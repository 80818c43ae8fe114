"""What a program may write beyond Python, because models write it: a top-level ``return``, JSON literals.

Both are rewritten in the parsed tree before it is compiled, keeping every line and column as written:

- ``return value`` outside any function ends the program with that value (``return`` alone: None), the
  way a function's body ends. It becomes ``raise ProgramReturn(value)``, which ``run_prepared`` catches:
  ``finally`` blocks run on the way out, as in a function. A ``BaseException``, so ``except Exception``
  in the program does not swallow it (a bare ``except:`` or ``except BaseException`` would).
- ``true``, ``false`` and ``null`` read as ``True``, ``False`` and ``None`` only where Python would fail:
  when the program binds no such name anywhere (an assignment, a parameter, an import, a ``for`` or
  ``with`` target, a ``def`` or ``class``...) and the run's namespace (inputs, a session's globals, the
  tools) has none either. Otherwise the name means what Python says it means. Each one read as a
  literal is noted, so the author learns the Python spelling.
"""

from __future__ import annotations

import ast
from collections.abc import Container
from typing import Any

__all__ = ["JSON_LITERALS", "RETURN_NAME", "ProgramReturn", "read_json_literals", "rewrite_returns"]

RETURN_NAME = "__codemode_return__"
"""The name ``return`` is rewritten to raise; ``run_prepared`` puts ``ProgramReturn`` there."""

JSON_LITERALS: dict[str, bool | None] = {"true": True, "false": False, "null": None}
"""The JSON spellings that read as Python constants when nothing else defines them."""


class ProgramReturn(BaseException):
    """A top-level ``return`` ending the program; ``value`` is what it returned."""

    def __init__(self, value: Any = None) -> None:
        super().__init__(value)
        self.value = value


def rewrite_returns(tree: ast.Module) -> bool:
    """Turn each ``return`` outside a function into ``raise __codemode_return__(value)``; True if any."""
    rewriter = _TopLevelReturns()
    rewriter.visit(tree)
    if rewriter.found:
        ast.fix_missing_locations(tree)
    return rewriter.found


def read_json_literals(tree: ast.Module, defined: Container[str] = ()) -> list[str]:
    """Read ``true``/``false``/``null`` as constants where nothing defines them; one note for each.

    ``defined`` holds the names the run's namespace already has (inputs, a session's globals).
    """
    bound = _bound_names(tree)
    free = {name for name in JSON_LITERALS if name not in bound and name not in defined}
    if not free:
        return []
    notes: list[str] = []
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if _is_literal(item, free):
                        value[index] = _constant(item, notes)
            elif _is_literal(value, free):
                setattr(node, field, _constant(value, notes))
    return notes


def _is_literal(node: object, free: set[str]) -> bool:
    return isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in free


def _constant(name: ast.Name, notes: list[str]) -> ast.Constant:
    value = JSON_LITERALS[name.id]
    notes.append(f"line {name.lineno}: read JSON's {name.id} as {value!r}, its Python spelling")
    return ast.copy_location(ast.Constant(value=value), name)


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the program binds anywhere, in any scope (a name bound anywhere is never a literal)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


class _TopLevelReturns(ast.NodeTransformer):
    """Rewrites ``return`` statements that are not inside a function, lambda or class body."""

    def __init__(self) -> None:
        self.found = False

    def visit_Return(self, node: ast.Return) -> ast.Raise:
        self.found = True
        value = node.value if node.value is not None else ast.Constant(value=None)
        call = ast.Call(func=ast.Name(id=RETURN_NAME, ctx=ast.Load()), args=[value], keywords=[])
        return ast.copy_location(ast.Raise(exc=call, cause=None), node)

    def _skip(self, node: ast.AST) -> ast.AST:
        return node  # a return in there is the function's own

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip  # type: ignore[assignment]
