"""Whether a program needs tools that are not there yet, asked before it runs while servers still connect.

A server slow to start goes on connecting in the background (``ToolHub.start``), so a program that only
calls tools of servers already connected must not wait for it. The program's names tell: one that names
something nothing defines (a tool of a server still connecting, or a typo) or that looks at the tools as a
whole (``search_tools``, ``tool_schema``, ``dir(tools)``) waits for the servers still connecting first.
Scopes are ignored: a name bound anywhere in the program counts as defined, which can only make it wait less
for a name it would not find anyway.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Container

from .. import errors
from ..errors import CodeModeError
from .source import prepare
from .toolset import HELPER_NAMES

__all__ = ["PROGRAM_NAMES", "wants_unknown_tools"]

PROGRAM_NAMES = frozenset({"tools", *HELPER_NAMES, *errors.__all__})
"""Names every program starts with besides the tool functions (``tools``, the helpers, the errors)."""

_LISTERS = frozenset({"search_tools", "tool_schema"})
_NAMESPACES = frozenset({"tools", "atools"})


def wants_unknown_tools(code: str, is_tool: Callable[[str], bool], inputs: Container[str] = ()) -> bool:
    """Whether ``code`` names what nothing defines yet, or looks the tools up as a whole.

    Defined are: the program's own names, the builtins, ``PROGRAM_NAMES``, ``inputs`` and the tools
    (``is_tool``). A program that does not compile: False (the worker reports its syntax error).
    """
    try:
        tree = ast.parse(prepare(code).source)
    except (CodeModeError, SyntaxError, ValueError):
        return False
    found = _References()
    found.visit(tree)
    if found.whole_list:
        return True
    return any(
        not (
            name in found.bound
            or name in PROGRAM_NAMES
            or name in inputs
            or hasattr(builtins, name)
            or is_tool(name)
        )
        for name in found.read | found.tools
    )


class _References(ast.NodeVisitor):
    """Collects the names a program reads, binds, and names through ``tools``/``atools``."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.bound: set[str] = set()
        self.tools: set[str] = set()
        """Names used as ``tools.name``, ``tools["name"]`` or ``from tools import name``."""
        self.whole_list = False

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.read.add(node.id)
            # tools.name and tools["name"] never get here (see below): a bare `tools` is dir(tools) and such.
            if node.id in _LISTERS or node.id in _NAMESPACES:
                self.whole_list = True
        else:
            self.bound.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in _NAMESPACES:
            self.tools.add(node.attr)
            return
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(node.value, ast.Name) and node.value.id in _NAMESPACES:
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.tools.add(key.value)
            else:
                self.whole_list = True  # tools[name] with a computed name
            self.visit(key)
            return
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.whole_list = self.whole_list or node.module in _NAMESPACES
                continue
            if node.module in _NAMESPACES:
                self.tools.add(alias.name)  # the tool must exist; a new name for it is the program's own
                if alias.asname:
                    self.bound.add(alias.asname)
            else:
                self.bound.add(alias.asname or alias.name)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)
        self.generic_visit(node)

    def _define(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _define

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bound.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.bound.add(node.rest)
        self.generic_visit(node)
