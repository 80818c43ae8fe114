"""Notebook-defined tools: ``@codemode.tool`` makes a kernel function a tool of ``%%codemode``/``%%agent``.

A registered function becomes an ``OwnedTool`` (executor/owned.py) of the server ``notebook``: its input
schema comes from its signature through pydantic (``Annotated[..., Field(description=...)]``, defaults, and
the parameter descriptions of a Google-style ``Args:`` section), its description from its docstring, and
its output schema from its return annotation. Every run gets the registry's tools; a call runs the
function in the kernel process (a plain function on a worker thread, a coroutine function on the hub's
loop), after the executor checked the arguments against the schema and pydantic converted them to the
annotated types. The call is logged, traced and replayed like a server's.

Output: a return annotation pydantic can describe is the output schema; one that is not an object (``int``,
``list[str]``, ``str | None``...) is wrapped as ``{"result": ...}`` the way MCP structured output does, so
the program gets the value itself, typed. No annotation is ``Any``, wrapped the same way; ``-> None``
returns nothing.

Lifetime (docs/kernel.md): registering a name again replaces the tool; ``unregister_tool`` removes it; a
function defined in the notebook that is no longer bound under its name (``del f``, a redefinition without
the decorator) is dropped before the next cell or run; ``%reset`` drops every notebook tool.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import json
import keyword
import re
import sys
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast, overload

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ArgsKwargs, SchemaValidator, to_jsonable_python

from ..core.errors import ToolArgumentError, ToolError, ToolNameCollisionError
from ..core.toolspec import ToolSpec
from ..executor.owned import OwnedTool, ToolAnswer
from ..toolbox import RESERVED_NAMES
from ..typegen import function_name, type_name

__all__ = ["NOTEBOOK_SERVER", "CodeModeHandle", "NotebookTool", "NotebookToolRegistry", "note_dropped"]

NOTEBOOK_SERVER = "notebook"
"""The server name of every notebook tool (in the trace, the history and the call log)."""

_KERNEL_NAMES = frozenset({"codemode"})
"""Names the kernel binds itself besides RESERVED_NAMES: a tool of that name would hide them."""

_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True)
class NotebookTool:
    """One registered function: its tool name, the function, and the tool the executor is given."""

    name: str
    function: Callable[..., Any]
    tool: OwnedTool

    @property
    def tracked(self) -> bool:
        """Whether it lives only while bound in the notebook: a top-level ``def`` run in the notebook.

        A library function (or a lambda, a nested function) is not bound by its own name in the
        namespace, so only ``unregister_tool`` and ``%reset`` remove it.
        """
        fn = self.function
        return (
            getattr(fn, "__module__", None) == "__main__"
            and getattr(fn, "__qualname__", None) == getattr(fn, "__name__", None)
            and str(getattr(fn, "__name__", "")).isidentifier()
        )


class NotebookToolRegistry:
    """One shell's notebook tools, by tool name (registration order)."""

    def __init__(self, taken: Callable[[], Iterable[str]] = tuple) -> None:
        self._tools: dict[str, NotebookTool] = {}
        self._taken = taken
        """The Python names the configured servers' tools have in programs (asked at registration)."""

    def register(self, fn: Callable[..., Any], name: str | None = None) -> NotebookTool:
        """Make ``fn`` the tool ``name`` (default: its ``__name__``), replacing one of that name.

        Raises:
            ToolNameCollisionError: a configured server's tool, or code mode itself, has this name.
            ValueError: the name is not a snake_case identifier, or the signature has ``*args``,
                ``**kwargs`` or positional-only parameters, or a type pydantic cannot describe.
            TypeError: ``fn`` is not callable.
        """
        if not callable(fn):
            raise TypeError(f"codemode.register_tool needs a function, not {type(fn).__name__}")
        tool_name = name if name is not None else str(getattr(fn, "__name__", ""))
        self._check_name(tool_name, explicit=name is not None)
        spec = _spec(tool_name, fn)
        entry = NotebookTool(tool_name, fn, OwnedTool(spec, _answer(spec, fn)))
        self._tools[tool_name] = entry
        return entry

    def unregister(self, name_or_fn: str | Callable[..., Any]) -> str:
        """Remove a tool by its name or its function; returns the name.

        Raises:
            KeyError: no notebook tool has that name or function.
        """
        for entry in self._tools.values():
            if entry.name == name_or_fn or entry.function is name_or_fn:
                del self._tools[entry.name]
                return entry.name
        what = (
            name_or_fn if isinstance(name_or_fn, str) else getattr(name_or_fn, "__name__", repr(name_or_fn))
        )
        known = ", ".join(self._tools) or "none"
        raise KeyError(f"no notebook tool {what!r} (the notebook tools: {known})")

    def clear(self) -> None:
        """Forget every tool (``%reset``)."""
        self._tools.clear()

    def prune(self, namespace: Mapping[str, Any]) -> list[str]:
        """Drop the notebook functions no longer bound under their name; returns the names dropped."""
        gone = [
            entry.name
            for entry in self._tools.values()
            if entry.tracked and not _binds(namespace.get(entry.function.__name__), entry.function)
        ]
        for tool_name in gone:
            del self._tools[tool_name]
        return gone

    def owned_tools(self, namespace: Mapping[str, Any]) -> list[OwnedTool]:
        """The tools for the next run, after dropping those whose function ``namespace`` no longer binds."""
        note_dropped(self.prune(namespace))
        return [entry.tool for entry in self._tools.values()]

    def entries(self) -> list[NotebookTool]:
        """The registered tools, in registration order."""
        return list(self._tools.values())

    def _check_name(self, tool_name: str, *, explicit: bool) -> None:
        fix = 'pass another name: @codemode.tool(name="...")'
        if not tool_name.isidentifier() or keyword.iskeyword(tool_name):
            what = "this name" if explicit else "a function without a usable __name__"
            raise ValueError(f"{tool_name!r} cannot be a notebook tool's name ({what}); {fix}")
        if tool_name in RESERVED_NAMES or tool_name in _KERNEL_NAMES:
            raise ToolNameCollisionError(
                f"{tool_name} is a name code mode defines itself (in programs or the notebook), so it "
                f"cannot be a notebook tool; {fix}",
                tools=[tool_name],
            )
        if tool_name in set(self._taken()):
            raise ToolNameCollisionError(
                f"{tool_name} is already a configured MCP tool's function in programs, so a notebook tool "
                f"of that name would hide it; {fix}",
                tools=[tool_name],
            )
        converted = function_name(tool_name)
        if converted != tool_name:
            why = "a Python builtin" if hasattr(builtins, tool_name) else "not snake_case"
            raise ValueError(
                f"{tool_name} is {why}: programs would call it {converted}(); "
                f'name the function {converted} or pass @codemode.tool(name="{converted}")'
            )


def _binds(value: Any, fn: Callable[..., Any]) -> bool:
    """Whether ``value`` is ``fn`` or a decorator's wrapper of it (its ``__wrapped__``)."""
    for _ in range(8):  # a chain of decorators, not a cycle
        if value is fn:
            return True
        value = getattr(value, "__wrapped__", None)
        if value is None:
            return False
    return False


class CodeModeHandle:
    """The ``codemode`` object of the notebook's namespace: register notebook functions as tools.

    Usage::

        @codemode.tool
        def lookup(user_id: int, verbose: bool = False) -> dict:
            \"\"\"Find a user.\"\"\"

        codemode.register_tool(some_library_function, name="search")
        codemode.unregister_tool("search")
        codemode.notebook_tools()      # {"lookup": <function lookup>}
    """

    def __init__(self, registry: NotebookToolRegistry, jobs: Mapping[str, Any] | None = None) -> None:
        self._registry = registry
        self.jobs: Mapping[str, Any] = jobs if jobs is not None else {}
        """The ``%%codemode --background`` runs by id (also ``jobs`` in the namespace, unless taken)."""

    @overload
    def tool(self, fn: _F, /) -> _F: ...
    @overload
    def tool(self, fn: None = None, /, *, name: str | None = None) -> Callable[[_F], _F]: ...

    def tool(self, fn: _F | None = None, /, *, name: str | None = None) -> _F | Callable[[_F], _F]:
        """Decorator: make the function a tool of ``%%codemode`` programs and ``%%agent``; returns it as is.

        ``@codemode.tool`` or ``@codemode.tool(name="other_name")``. Its parameters' annotations and
        docstring are its schema and description; defining it again replaces it for the next run.
        """
        if fn is not None:
            self._registry.register(fn)
            return fn

        def decorate(function: _F) -> _F:
            self._registry.register(function, name)
            return function

        return decorate

    def register_tool(self, fn: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
        """Make ``fn`` (a library function too) a tool named ``name`` (default: its name); returns ``fn``."""
        self._registry.register(fn, name)
        return fn

    def unregister_tool(self, name_or_fn: str | Callable[..., Any]) -> None:
        """Remove a notebook tool, by name or function; the next run no longer has it."""
        self._registry.unregister(name_or_fn)

    def notebook_tools(self) -> dict[str, Callable[..., Any]]:
        """The notebook tools: tool name to function, in registration order."""
        return {entry.name: entry.function for entry in self._registry.entries()}

    def __repr__(self) -> str:
        names = ", ".join(self.notebook_tools()) or "none"
        return f"<codemode: notebook tools: {names}; @codemode.tool makes a function one>"


# -- the schema -------------------------------------------------------------------------------------


def _spec(tool_name: str, fn: Callable[..., Any]) -> ToolSpec:
    """The tool's MCP definition: description and schemas from the function's docstring and annotations."""
    summary, arg_docs = _split_docstring(inspect.getdoc(fn) or "")
    return ToolSpec(
        server=NOTEBOOK_SERVER,
        name=tool_name,
        description=summary,
        input_schema=_input_schema(tool_name, fn, arg_docs),
        output_schema=_output_schema(tool_name, _return_annotation(fn)),
    )


def _input_schema(tool_name: str, fn: Callable[..., Any], arg_docs: Mapping[str, str]) -> dict[str, Any]:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{tool_name}: its signature cannot be read ({exc}); wrap it in a def") from None
    unusable = [p.name for p in parameters if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY)]
    if unusable:
        raise ValueError(
            f"{tool_name}: a tool takes named parameters only, not {', '.join(unusable)} (*args, **kwargs or "
            "positional-only); wrap it in a def that names each parameter"
        )
    try:
        schema = TypeAdapter(cast(Any, fn)).json_schema()
    except Exception as exc:  # pydantic cannot describe a parameter's type
        raise ValueError(
            f"{tool_name}: its parameters' types cannot be a JSON Schema ({exc}); annotate them with JSON "
            "types (str, int, float, bool, list, dict, Literal, TypedDict, pydantic models)"
        ) from None
    _drop_generated_titles(schema)
    for name, prop in schema.get("properties", {}).items():
        if isinstance(prop, dict) and name in arg_docs and "description" not in prop:
            prop["description"] = arg_docs[name]
    schema.pop("title", None)
    schema.setdefault("type", "object")
    return schema


def _drop_generated_titles(schema: Any) -> None:
    """Remove the titles pydantic makes from property names (``qty``: "Qty").

    Stubs would show them as descriptions; a title given with ``Field(title=...)`` stays.
    """
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, prop in properties.items():
                if isinstance(prop, dict) and prop.get("title") == name.replace("_", " ").title():
                    del prop["title"]
        for value in schema.values():
            _drop_generated_titles(value)
    elif isinstance(schema, list):
        for item in schema:
            _drop_generated_titles(item)


def _return_annotation(fn: Callable[..., Any]) -> Any:
    """The evaluated return annotation; ``Signature.empty`` when there is none or it cannot be read."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return inspect.Signature.empty
    return hints.get("return", inspect.Signature.empty)


def _output_adapter(annotation: Any) -> TypeAdapter[Any] | None:
    """The adapter of a return annotation pydantic can describe (None: ``Any``)."""
    if annotation is inspect.Signature.empty or annotation is Any:
        return None
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        adapter.json_schema(mode="serialization")
    except Exception:
        return None
    return adapter


def _output_schema(tool_name: str, annotation: Any) -> dict[str, Any] | None:
    if annotation is None or annotation is type(None):
        return None
    adapter = _output_adapter(annotation)
    schema = adapter.json_schema(mode="serialization") if adapter is not None else {}
    _drop_generated_titles(schema)
    if schema.get("type") == "object":  # a model, TypedDict, dataclass or dict: structured content as is
        return schema
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        "title": f"{type_name(tool_name)}Output",
        "x-fastmcp-wrap-result": True,
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped


_SECTION = re.compile(r"^(Args|Arguments|Parameters):\s*$")
_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The docstring without its Google-style ``Args:`` section, and that section's text per parameter."""
    lines = doc.splitlines()
    kept: list[str] = []
    described: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _SECTION.match(line.strip()):
            kept.append(line)
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        i += 1
        entry_indent: int | None = None
        current: str | None = None
        while i < len(lines):
            body = lines[i]
            depth = len(body) - len(body.lstrip())
            if body.strip() and depth <= indent:
                break  # the next section
            i += 1
            if not body.strip():
                continue
            if entry_indent is None:
                entry_indent = depth
            match = _ENTRY.match(body.strip()) if depth == entry_indent else None
            if match:
                current = match.group(1)
                described[current] = match.group(2).strip()
            elif current is not None:
                described[current] = f"{described[current]} {body.strip()}".strip()
    return "\n".join(kept).strip(), described


# -- the answer -------------------------------------------------------------------------------------


def _answer(spec: ToolSpec, fn: Callable[..., Any]) -> ToolAnswer:
    """The coroutine that answers a call: convert the arguments, run ``fn``, return its CallToolResult."""
    tool_name = spec.name
    arguments_validator = _arguments_validator(fn)
    returns_nothing = spec.output_schema is None
    output = _output_adapter(_return_annotation(fn))
    wrapped = spec.wraps_result
    is_async = inspect.iscoroutinefunction(fn)

    async def answer(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            _, kwargs = arguments_validator.validate_python(ArgsKwargs((), arguments))
        except ValidationError as exc:
            raise _argument_error(tool_name, exc) from None
        if is_async:
            value = await fn(**kwargs)
        else:
            value = await asyncio.to_thread(fn, **kwargs)
        if returns_nothing:
            return {"content": [], "isError": False}
        data = _to_json(tool_name, value, output)
        structured = {"result": data} if wrapped else data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": False,
        }

    return answer


def _arguments_validator(fn: Callable[..., Any]) -> SchemaValidator:
    """Validates a call's arguments into the function's annotated types, without calling it."""
    schema: Any = TypeAdapter(cast(Any, fn)).core_schema

    def arguments_only(node: Any) -> Any:
        if node["type"] == "definitions":
            return {**node, "schema": arguments_only(node["schema"])}
        return node["arguments_schema"]

    return SchemaValidator(arguments_only(schema))


def _argument_error(tool_name: str, exc: ValidationError) -> ToolArgumentError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    where = f" {field}" if field else ""
    return ToolArgumentError(
        f"{tool_name}(): argument{where}: {first['msg']} (got {first.get('input')!r})",
        tool=tool_name,
        field=field,
    )


def _to_json(tool_name: str, value: Any, output: TypeAdapter[Any] | None) -> Any:
    """The return value as JSON: checked against the return annotation when there is one."""
    try:
        if output is not None:
            return output.dump_python(output.validate_python(value), mode="json")
        return to_jsonable_python(value)
    except Exception as exc:
        expected = "its return annotation" if output is not None else "JSON"
        raise ToolError(
            f"{tool_name} returned {type(value).__name__}, which does not fit {expected}: {exc}",
            tool=tool_name,
            server=NOTEBOOK_SERVER,
        ) from None


def note_dropped(names: Iterable[str], out: Any = None) -> None:
    """Say on stderr which notebook tools were dropped because their function is gone."""
    names = list(names)
    if names:
        print(
            f"codemode: notebook tool{'s' if len(names) > 1 else ''} {', '.join(names)} removed: the "
            "decorated function is no longer bound under its name (decorate it again to keep it)",
            file=out or sys.stderr,
            flush=True,
        )
