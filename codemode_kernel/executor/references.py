"""Whether a program needs tools that are not there yet, asked before it runs while servers still connect.

A server slow to start goes on connecting in the background (``ToolHub.start``), so a program that only
calls tools of servers already connected must not wait for it. The program's names tell: one that names
something nothing defines (a tool of a server still connecting, or a typo) or that looks at the tools as a
whole (``search_tools``, ``tool_schema``, ``dir(tools)``) waits for the servers still connecting first.
Scopes are ignored: a name bound anywhere in the program counts as defined, which can only make it wait less
for a name it would not find anyway. After ``from module import *`` any bare name may be defined, so only
names used through ``tools`` are still waited for.

``await_servers_named`` is that wait, for programs (``Executor``) and notebook cells alike. A ``Program``
is parsed once: the wait asks it again each time the tools change, and a session counts the globals it
bound, without parsing it again.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import errors
from ..core.errors import CodeModeError
from ..core.records import ErrorRecord
from ..worker.lenient import JSON_LITERALS
from ..worker.source import prepare
from ..worker.tools_module import HELPER_NAMES

if TYPE_CHECKING:
    from ..toolbox import Toolbox

__all__ = [
    "PROGRAM_NAMES",
    "Names",
    "Program",
    "SessionNames",
    "await_servers_named",
    "note_connecting",
    "note_sign_in",
    "waiting_for",
    "wants_unknown_tools",
]

PROGRAM_NAMES = frozenset({"tools", *HELPER_NAMES, *errors.__all__, *JSON_LITERALS})
"""Names every program starts with besides the tool functions (``tools``, the helpers, the errors)."""

_LISTERS = frozenset({"search_tools", "tool_schema"})
_NAMESPACES = frozenset({"tools", "atools"})
_MISSING_NAME_ERRORS = frozenset({"NameError", "UnknownToolError", "AttributeError", "ImportError"})
_TOOL_NAMESPACES_IN_ERRORS = ("module 'tools'", "from 'tools'", "'types.SimpleNamespace'")
"""How the worker's ``tools`` module and ``atools`` namespace show in AttributeError and ImportError."""


def waiting_for(toolbox: Toolbox, program: Program | str, defined: Container[str] = ()) -> list[str]:
    """The servers still connecting that ``program`` would wait for: all of them, or none if it needs none.

    ``defined`` holds the names the program may use besides its own, the builtins and the tools (a
    program's inputs, a session's earlier globals, a notebook's namespace).
    """
    connecting = toolbox.pending
    if connecting and wants_unknown_tools(program, toolbox.tools.__contains__, defined):
        return connecting
    return []


async def await_servers_named(
    toolbox: Toolbox, program: Program | str, defined: Container[str] = (), *, timeout: float | None = None
) -> list[str]:
    """Wait for servers still connecting while ``program`` names what nothing defines yet (``waiting_for``).

    Runs on the hub's loop (blocking callers: ``toolbox.hub.loop_thread.run(...)``, which an interrupt
    stops). Ends as soon as every name is defined, when no server is connecting any more, or after
    ``timeout`` seconds. Returns the servers still connecting if the program still names what nothing
    defines, for its error message; else an empty list. The program is parsed once, however often the
    tools change while it waits.
    """
    program = Program.of(program)
    if not waiting_for(toolbox, program, defined):
        return []

    def satisfied() -> bool:
        return not wants_unknown_tools(program, toolbox.tools.__contains__, defined)

    with contextlib.suppress(TimeoutError):  # the servers go on connecting; the code runs with what is there
        await asyncio.wait_for(toolbox.await_servers(until=satisfied), timeout)
    return waiting_for(toolbox, program, defined)


def note_connecting(error: ErrorRecord | None, connecting: Iterable[str]) -> None:
    """Say in a program's missing-name error which servers were still connecting when it ran.

    The name may be a tool of one of them (or a typo): ``name 'x' is not defined (servers still connecting:
    stuck)``. The note goes on the message and on the traceback's last line, which is what people read.
    """
    names = ", ".join(connecting)
    if not names or error is None or error.get("type") not in _MISSING_NAME_ERRORS:
        return
    message = str(error.get("message"))
    if error.get("type") in ("AttributeError", "ImportError") and not any(
        of in message for of in _TOOL_NAMESPACES_IN_ERRORS
    ):
        return  # about the program's own objects and modules
    note = f" (servers still connecting: {names})"
    error["message"] = f"{error.get('message')}{note}"
    traceback = error.get("traceback")
    if isinstance(traceback, str) and traceback.strip():
        error["traceback"] = traceback.rstrip("\n") + note + "\n"


def note_sign_in(error: ErrorRecord | None, signed_out: Iterable[str]) -> None:
    """Say in a program's missing-name error which servers wait for a sign-in, and the command.

    Their tools are unknown until then, so a program naming one fails with a NameError that alone would
    not say why: ``name 'x' is not defined (servers waiting for sign-in: gh; run `codemode login gh`)``.
    """
    names = list(signed_out)
    if not names or error is None or error.get("type") != "NameError":
        return
    command = f"codemode login {names[0]}" if len(names) == 1 else "codemode login NAME"
    note = f" (servers waiting for sign-in: {', '.join(names)}; run `{command}`)"
    error["message"] = f"{error.get('message')}{note}"
    traceback = error.get("traceback")
    if isinstance(traceback, str) and traceback.strip():
        error["traceback"] = traceback.rstrip("\n") + note + "\n"


class SessionNames:
    """The globals that a session's earlier programs bound, as far as their code tells.

    A session's worker keeps its globals, so its next program may use them without defining them. After a
    ``from module import *`` any name may be one of them.
    """

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._any = False

    def add(self, program: Program | str, inputs: Iterable[str] = ()) -> None:
        """Count the names ``program`` binds (and its ``inputs``, which become globals too)."""
        self._names.update(inputs)
        found = Program.of(program).names
        if found is not None:
            self._names |= found.bound
            self._any = self._any or found.star_import

    def __contains__(self, name: object) -> bool:
        return self._any or name in self._names


def wants_unknown_tools(
    program: Program | str, is_tool: Callable[[str], bool], defined: Container[str] = ()
) -> bool:
    """Whether ``program`` names what nothing defines yet, or looks the tools up as a whole.

    Defined are: the program's own names, the builtins, ``PROGRAM_NAMES``, ``defined`` and the tools
    (``is_tool``). A program that does not compile: False (the worker reports its syntax error).
    """
    found = Program.of(program).names
    if found is None:
        return False
    if found.whole_list or not all(is_tool(name) for name in found.tools):
        return True
    if found.star_import:
        return False  # any bare name may come from the module
    return any(
        not (
            name in found.bound
            or name in PROGRAM_NAMES
            or name in defined
            or hasattr(builtins, name)
            or is_tool(name)
        )
        for name in found.read
    )


@dataclass(frozen=True)
class Names:
    """The names a program reads and binds, and those it uses through ``tools``/``atools``."""

    read: frozenset[str]
    bound: frozenset[str]
    tools: frozenset[str]
    """Names used as ``tools.name``, ``tools["name"]`` or ``from tools import name``."""
    whole_list: bool
    """It looks at the tools as a whole (``search_tools``, ``dir(tools)``, ``tools[computed]``)."""
    star_import: bool
    """``from module import *`` of a module other than ``tools``: its names are unknowable here."""


@dataclass(frozen=True)
class Program:
    """A program as written, and its names as parsed: once per run, however often they are asked for."""

    code: str
    names: Names | None
    """None when it does not compile (the worker reports its syntax error)."""

    @classmethod
    def parse(cls, code: str) -> Program:
        """Parse ``code`` (Markdown fences and a ``%%codemode`` line tolerated, as the worker does)."""
        try:
            tree = ast.parse(prepare(code).source)
        except (CodeModeError, SyntaxError, ValueError):
            return cls(code, None)
        found = _References()
        found.visit(tree)
        names = Names(
            frozenset(found.read),
            frozenset(found.bound),
            frozenset(found.tools),
            found.whole_list,
            found.star_import,
        )
        return cls(code, names)

    @classmethod
    def of(cls, program: Program | str) -> Program:
        """``program`` parsed: as it is when it already was."""
        return program if isinstance(program, Program) else cls.parse(program)


class _References(ast.NodeVisitor):
    """Collects a program's ``Names`` (the fields mean what they mean there)."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.bound: set[str] = set()
        self.tools: set[str] = set()
        self.whole_list = False
        self.star_import = False

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
                if node.module in _NAMESPACES:
                    self.whole_list = True
                else:
                    self.star_import = True
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
