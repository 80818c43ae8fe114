"""The runtime face of a tool function: its ``inspect.Signature``, docstring, and argument binding.

``help(get_weather)`` and ``get_weather?`` in IPython show what the stubs show, because both come from
the same ToolModel; :func:`bind_arguments` applies the same signature to a real call and produces the
wire arguments dict.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, Union, cast

from ..core.errors import ToolArgumentError
from ..core.results import subscript_note
from .model import ToolModel
from .pytypes import (
    AnyType,
    ClassRef,
    ClassType,
    DictType,
    ListType,
    LiteralType,
    PyType,
    ScalarType,
    UnionType,
    make_union,
)
from .stubs import render_signature, render_type
from .text import clip, comment_text

__all__ = ["bind_arguments", "make_docstring", "make_signature", "runtime_annotation"]

_SCALARS: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "None": None}
_RESULT_NOTE = "The result: a dict-like object for JSON results (r.key or r['key']), str for plain text."


def runtime_annotation(pytype: PyType, classes: dict[int, Any] | None = None) -> Any:
    """A real typing object for a type: ``Literal[...]``, ``list[...]``, unions, runtime TypedDicts.

    Classes become TypedDicts made with the functional syntax (keys need not be identifiers); a
    forward reference stays the class name as a string, which typing accepts in annotations.
    ``classes`` memoises the TypedDicts of one signature, so a class used twice is one object.
    """
    memo = {} if classes is None else classes
    if isinstance(pytype, AnyType):
        return Any
    if isinstance(pytype, ScalarType):
        return _SCALARS[pytype.name]
    if isinstance(pytype, LiteralType):
        return cast(Any, Literal)[pytype.values]
    if isinstance(pytype, ListType):
        return list[runtime_annotation(pytype.item, memo)]  # type: ignore[misc]
    if isinstance(pytype, DictType):
        return dict[str, runtime_annotation(pytype.value, memo)]  # type: ignore[misc]
    if isinstance(pytype, UnionType):
        options = [runtime_annotation(o, memo) for o in pytype.options]
        if any(isinstance(o, str) for o in options):  # "Node" | None is a TypeError; Union takes strings
            return cast(Any, Union)[tuple(options)]
        return functools.reduce(operator.or_, options)  # shows as ``str | None``, like the stubs
    if isinstance(pytype, ClassRef):
        return pytype.name
    if id(pytype) not in memo:
        fields = {
            f.wire_name: (
                runtime_annotation(f.type, memo)
                if f.required
                else NotRequired[runtime_annotation(f.type, memo)]  # type: ignore[misc]
            )
            for f in pytype.fields
        }
        typed_dict = cast(Any, TypedDict)(pytype.name, fields)
        typed_dict.__doc__ = pytype.description or None
        typed_dict.__module__ = "tools"  # where code mode puts the tool functions; reads well in help()
        memo[id(pytype)] = typed_dict
    return memo[id(pytype)]


def make_signature(model: ToolModel) -> inspect.Signature:
    """The tool function's signature with real annotations, for ``help()`` and IPython's ``fn?``.

    Required parameters are positional-or-keyword, optional ones keyword-only with their default,
    extra properties (when the schema allows them) ``**kwargs``.
    """
    classes: dict[int, Any] = {}
    params: list[inspect.Parameter] = []
    for p in model.params:
        if p.required:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            params.append(inspect.Parameter(p.name, kind, annotation=runtime_annotation(p.type, classes)))
        else:
            pytype = p.type if p.default is not None else make_union([p.type, ScalarType("None")])
            annotation = runtime_annotation(pytype, classes)
            params.append(
                inspect.Parameter(
                    p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default, annotation=annotation
                )
            )
    if model.kwargs_name:
        annotation = runtime_annotation(model.kwargs_type, classes)
        params.append(
            inspect.Parameter(model.kwargs_name, inspect.Parameter.VAR_KEYWORD, annotation=annotation)
        )
    output = model.output_type if model.output_type is not None else AnyType()
    return inspect.Signature(params, return_annotation=runtime_annotation(output, classes))


def make_docstring(model: ToolModel) -> str:
    """The tool function's docstring: description, ``Args:``, ``Returns:`` and where the tool lives.

    Unlike the stub, which shows result classes in full, ``help()`` only shows the return type's name,
    so the result's fields are listed here.
    """
    spec = model.spec
    parts = [spec.description.strip() or (spec.title or "").strip() or f"The MCP tool {spec.name!r}."]
    args = []
    for p in model.params:
        reason = f"Any: {p.type.reason}. " if isinstance(p.type, AnyType) and p.type.reason else ""
        text = comment_text(reason + p.description, 600)
        wire = f" (sent as {p.wire_name!r})" if p.wire_name != p.name else ""
        args.append(f"    {p.name} ({comment_text(render_type(p.type), 120)}){wire}: {text}".rstrip(": "))
    if model.kwargs_name:
        args.append(f"    **{model.kwargs_name}: further properties, sent as given.")
    if args:
        parts.append("Args:\n" + "\n".join(args))
    parts.append("Returns:\n" + _returns(model))
    parts.append(f"MCP tool {spec.qualified_name!r}.")
    return "\n\n".join(parts)


def _returns(model: ToolModel) -> str:
    """The ``Returns:`` section body: the result's fields when it is a class, else a sentence."""
    output = model.output_type
    if output is None:
        return f"    {_RESULT_NOTE}"
    calls = model.inferred_calls
    inferred = f", inferred from {calls} call{'s' if calls != 1 else ''} (no outputSchema)" if calls else ""
    if not isinstance(output, ClassType):
        return f"    {comment_text(render_type(output), 200)}{inferred}"
    lines = [f"    {output.name}{inferred}, with:"]
    for f in output.fields:
        optional = "" if f.required else ", optional"
        text = comment_text(subscript_note(f.wire_name, f.description), 300)
        lines.append(
            f"        {f.wire_name} ({comment_text(render_type(f.type), 120)}{optional}): {text}".rstrip(": ")
        )
    return "\n".join(lines)


def _fail(model: ToolModel, message: str, field: str | None) -> ToolArgumentError:
    """A ToolArgumentError that ends with the signature, so the caller sees how to call the tool."""
    text = f"{model.function_name}() {message}\n  signature: {clip(render_signature(model), 2000)}"
    return ToolArgumentError(text, tool=model.function_name, field=field)


def bind_arguments(model: ToolModel, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Map a Python call to the wire arguments dict, the way Python itself would bind it.

    Positional arguments fill the required parameters in order; keywords may use the Python name or
    the wire name. Optional parameters that are not passed are left out (the server applies its
    default), and so is an explicit ``None`` unless the schema accepts null. Extra keywords are kept
    under their own name when the schema allows extra properties; a parameter passed under its wire
    name (``**{"class": 1}``) leaves its Python name (``class_``) free to be such an extra key.

    Raises:
        ToolArgumentError: too many positional arguments, an unknown or repeated keyword, or a missing
            required argument (the message shows the signature).
    """
    required = [p for p in model.params if p.required]
    if len(args) > len(required):
        taken = f"{len(required)} positional argument{'s' if len(required) != 1 else ''}"
        raise _fail(model, f"takes {taken} but {len(args)} were given", None)
    by_name = {p.name: p for p in model.params}
    by_wire = {p.wire_name: p for p in model.params}
    values: dict[str, Any] = {p.wire_name: value for p, value in zip(required, args, strict=False)}
    extra: dict[str, Any] = {}
    named_by_wire = {key for key in kwargs if key in by_wire}
    for key, value in kwargs.items():
        param = by_wire.get(key) or by_name.get(key)
        if param is not None and param.wire_name != key and param.wire_name in named_by_wire:
            param = None if model.kwargs_name is not None else param  # its Python name, as an extra key
        if param is None:
            if model.kwargs_name is None:
                import difflib  # only for a mistaken call: not worth loading for every worker

                hint = difflib.get_close_matches(key, list(by_name), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                raise _fail(model, f"got an unexpected keyword argument {key!r}{suggestion}", key)
            extra[key] = value
            continue
        if param.wire_name in values:
            raise _fail(model, f"got multiple values for argument {param.name!r}", param.name)
        if value is None and not param.required and not param.nullable:
            values[param.wire_name] = _OMIT
            continue
        values[param.wire_name] = value
    missing = [p.name for p in required if p.wire_name not in values]
    if missing:
        listed = ", ".join(repr(name) for name in missing)
        plural = "s" if len(missing) > 1 else ""
        raise _fail(model, f"missing {len(missing)} required argument{plural}: {listed}", missing[0])
    wire = {
        p.wire_name: values[p.wire_name] for p in model.params if values.get(p.wire_name, _OMIT) is not _OMIT
    }
    for key, value in extra.items():
        wire.setdefault(key, value)
    return wire


_OMIT: Any = object()  # an optional argument passed as None: counts as given, but is not sent
