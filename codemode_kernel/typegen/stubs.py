"""Stub source for the LLM: every tool as a typed ``def`` with a docstring, grouped by server.

The stub is read, not run, so it is written for a reader who pays per token: one blank line between
definitions, descriptions as trailing comments and short docstrings, no repetition. It is nonetheless
valid Python that compiles and executes (forward references are quoted), so a mistake in it shows up
in tests, not in a model's confused answer.
"""

from __future__ import annotations

import keyword
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.results import subscript_note
from .model import Param, ToolModel
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
    walk_classes,
)
from .text import comment_text, docstring_text, py_string

__all__ = ["render_signature", "render_stubs", "render_type"]

_TYPING_ORDER = ("Any", "Literal", "NotRequired", "Required", "TypedDict")
_NO_OUTPUT_NOTE = (
    "# A tool whose result type is Any returns a dict-like object for JSON results, str for plain text."
)
_INFERRED_NOTE = (
    "# A result type marked inferred was read from the results seen so far (the tool publishes no "
    "outputSchema): a field may be missing or typed differently in the next result."
)


@dataclass
class _Names:
    """Final class names in one stub module: per tool, local name -> name in the module."""

    local: dict[str, str] = field(default_factory=dict)

    def __call__(self, name: str) -> str:
        return self.local.get(name, name)


@dataclass
class _Typing:
    """The ``typing`` names a rendering used, so the import line lists exactly those."""

    used: set[str] = field(default_factory=set)


def render_type(pytype: PyType, names: _Names | None = None, typing: _Typing | None = None) -> str:
    """Python source for a type; a union holding a forward reference is quoted as a whole.

    Quoting the whole union (``"Node | None"``) keeps the source executable: ``"Node" | None`` would be
    a runtime error wherever annotations are evaluated.
    """
    return _render(pytype, names or _Names(), typing or _Typing(), quoted=False)


def _render(pytype: PyType, names: _Names, typing: _Typing, *, quoted: bool) -> str:
    """Render ``pytype``; inside ``quoted`` text, forward references need no quotes of their own."""
    if isinstance(pytype, AnyType):
        typing.used.add("Any")
        return "Any"
    if isinstance(pytype, ScalarType):
        return pytype.name
    if isinstance(pytype, LiteralType):
        typing.used.add("Literal")
        values = ", ".join(py_string(v) if isinstance(v, str) else repr(v) for v in pytype.values)
        return f"Literal[{values}]"
    if isinstance(pytype, ListType):
        return f"list[{_render(pytype.item, names, typing, quoted=quoted)}]"
    if isinstance(pytype, DictType):
        return f"dict[str, {_render(pytype.value, names, typing, quoted=quoted)}]"
    if isinstance(pytype, ClassType):
        return names(pytype.name)
    if isinstance(pytype, ClassRef):
        return names(pytype.name) if quoted else py_string(names(pytype.name))
    if not quoted and any(isinstance(option, ClassRef) for option in pytype.options):
        return py_string(_render(pytype, names, typing, quoted=True))
    return " | ".join(_render(option, names, typing, quoted=quoted) for option in pytype.options)


def _default(value: object) -> str:
    """A parameter default as source (only short scalars reach here, see ``simple_default``)."""
    return py_string(value) if isinstance(value, str) else repr(value)


def _param_source(param: Param, names: _Names, typing: _Typing) -> str:
    """``name: T`` for a required parameter, ``name: T | None = default`` for an optional one."""
    if param.required:
        return f"{param.name}: {render_type(param.type, names, typing)}"
    pytype = param.type if param.default is not None else make_union([param.type, ScalarType("None")])
    return f"{param.name}: {render_type(pytype, names, typing)} = {_default(param.default)}"


def render_signature(
    model: ToolModel,
    names: _Names | None = None,
    out_names: _Names | None = None,
    typing: _Typing | None = None,
) -> str:
    """The call signature as source: ``get_weather(city: str, *, unit: str | None = None) -> Any``.

    Required parameters may be positional; optional ones are keyword-only, so adding one to a tool never
    shifts the meaning of a positional call. ``names`` / ``out_names`` rename classes of the input and
    output documents (the stub module's names); by default the model's own names are used.
    """
    names = names or _Names()
    typing = typing or _Typing()
    parts = [_param_source(p, names, typing) for p in model.params if p.required]
    optional = [_param_source(p, names, typing) for p in model.params if not p.required]
    if optional:
        parts += ["*", *optional]
    if model.kwargs_name:
        parts.append(f"**{model.kwargs_name}: {render_type(model.kwargs_type, names, typing)}")
    output = model.output_type if model.output_type is not None else AnyType()
    returns = render_type(output, out_names or _Names(), typing)
    return f"{model.function_name}({', '.join(parts)}) -> {returns}"


def _field_comment(key: str, description: str, pytype: PyType, *, result: bool) -> str:
    """Trailing ``# ...`` text for a field: its note if it is in a result, why it is Any, what it is."""
    reason = f"Any: {pytype.reason}. " if isinstance(pytype, AnyType) and pytype.reason else ""
    text = reason + description
    text = comment_text(subscript_note(key, text) if result else text, 600)
    return f"  # {text}" if text else ""


def _is_attribute_name(name: str) -> bool:
    """Whether a key can be a field in ``class X(TypedDict)`` syntax (else the functional form is used)."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and unicodedata.normalize("NFKC", name) == name
        and not name.startswith("__")  # would be name-mangled in a class body
    )


def _render_class(
    cls: ClassType, names: _Names, typing: _Typing, *, comments: bool = True, result: bool = True
) -> list[str]:
    """A TypedDict definition; ``total=False`` with ``Required`` when most fields are optional.

    ``result``: the class types (part of) a tool's result, so its fields say how a program reads them.
    """
    typing.used.add("TypedDict")
    optional_count = sum(1 for f in cls.fields if not f.required)
    total = optional_count * 2 <= len(cls.fields)
    marker = "NotRequired" if total else "Required"
    rows: list[tuple[str, str, str]] = []  # (key, type, comment)
    for f in cls.fields:
        rendered = render_type(f.type, names, typing)
        if f.required != total:
            typing.used.add(marker)
            rendered = f"{marker}[{rendered}]"
        comment = _field_comment(f.wire_name, f.description, f.type, result=result) if comments else ""
        rows.append((f.wire_name, rendered, comment))
    extra = ""
    if cls.extra is not None:
        extra = f"# other keys: {comment_text(render_type(cls.extra, names, typing))}"
    name = names(cls.name)
    total_arg = "" if total else ", total=False"
    if all(_is_attribute_name(key) for key, _, _ in rows):
        lines = [f"class {name}(TypedDict{total_arg}):"]
        if cls.description:
            lines.append(f'    """{docstring_text(comment_text(cls.description, 600))}"""')
        lines += [f"    {key}: {rendered}{comment}" for key, rendered, comment in rows]
        if extra:
            lines.append(f"    {extra}")
        if len(lines) == 1 or (len(lines) == 2 and extra):
            lines.append("    pass")
        return lines
    lines = [f"# {comment_text(cls.description)}"] if cls.description else []
    lines.append(f"{name} = TypedDict({py_string(name)}, {{")
    lines += [f"    {py_string(key)}: {rendered},{comment}" for key, rendered, comment in rows]
    if extra:
        lines.append(f"    {extra}")
    lines.append(f"}}{total_arg})")
    return lines


def _docstring(model: ToolModel) -> str:
    """The stub docstring: the tool's description and an ``Args:`` section for documented parameters."""
    parts: list[str] = []
    description = model.spec.description.strip() or (model.spec.title or "").strip()
    if description:
        parts.append(docstring_text(description))
    args: list[str] = []
    for p in model.params:
        reason = f"Any: {p.type.reason}. " if isinstance(p.type, AnyType) and p.type.reason else ""
        text = reason + p.description
        if text.strip():
            args.append(f"    {p.name}: {docstring_text(comment_text(text, 600))}")
    if args:
        parts.append("Args:\n" + "\n".join(args))
    return "\n\n".join(parts)


def _indent(text: str, prefix: str) -> str:
    """Indent every non-empty line of ``text``."""
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def _render_function(model: ToolModel, in_names: _Names, out_names: _Names, typing: _Typing) -> list[str]:
    """``def ...:`` with its docstring and a ``...`` body."""
    lines = [f"def {render_signature(model, in_names, out_names, typing)}:"]
    if model.inferred_calls:
        calls = model.inferred_calls
        lines[0] += f"  # result inferred from {calls} call{'s' if calls != 1 else ''}"
    doc = _docstring(model)
    if doc:
        lines.append(_indent(f'"""{doc}\n"""' if "\n" in doc else f'"""{doc}"""', "    "))
    lines.append("    ...")
    return lines


@dataclass
class _Document:
    """One schema document of one tool (its input or its output): the classes it needs, their final names.

    Documents name their classes independently, so names are looked up per document.
    """

    model: ToolModel
    classes: list[ClassType]
    root: str | None
    names: _Names = field(default_factory=_Names)


def _assign_names(documents: list[_Document], function_names: list[str]) -> None:
    """Final class names for the module: every tool's input/output class first, then nested classes.

    A nested class equal to one already named (the same ``$defs`` entry used by two tools, or by a tool's
    input and output) shares that name and is defined once; a different class wanting a taken name gets
    a number.
    """
    used: dict[str, ClassType | None] = dict.fromkeys(function_names)
    for doc in documents:
        for cls in doc.classes:
            if cls.name == doc.root:
                final = _fresh(cls.name, used)
                used[final] = cls
                doc.names.local[cls.name] = final
    for doc in documents:
        for cls in doc.classes:
            if cls.name in doc.names.local:
                continue
            if cls.name in used and used[cls.name] == cls:
                doc.names.local[cls.name] = cls.name
                continue
            final = _fresh(cls.name, used)
            used[final] = cls
            doc.names.local[cls.name] = final


def _fresh(name: str, used: dict[str, ClassType | None]) -> str:
    """``name`` or the first ``name<n>`` not in ``used``."""
    candidate, n = name, 2
    while candidate in used:
        candidate = f"{name}{n}"
        n += 1
    return candidate


def _referenced(model: ToolModel) -> set[str]:
    """Class names the tool's input types refer to by forward reference (is the input class needed?)."""
    found: set[str] = set()
    seen: set[int] = set()
    pending: list[PyType | None] = [model.input_type]
    while pending:
        pytype = pending.pop()
        if pytype is None or id(pytype) in seen:
            continue
        seen.add(id(pytype))
        if isinstance(pytype, ClassRef):
            found.add(pytype.name)
        elif isinstance(pytype, ClassType):
            pending += [f.type for f in pytype.fields] + [pytype.extra]
        elif isinstance(pytype, ListType):
            pending.append(pytype.item)
        elif isinstance(pytype, DictType):
            pending.append(pytype.value)
        elif isinstance(pytype, UnionType):
            pending += list(pytype.options)
    return found


def _documents(model: ToolModel, input_types: bool) -> tuple[_Document, _Document]:
    """The input and output documents of a tool, with the classes each must define, in order."""
    wanted_input = (input_types and bool(model.input_type.fields)) or model.input_type_name in _referenced(
        model
    )
    if wanted_input:
        input_classes = walk_classes(model.input_type)
    else:
        seen = {id(model.input_type)}
        input_classes = [c for p in model.params for c in walk_classes(p.type, seen)]
        if model.input_type.extra is not None:
            input_classes += walk_classes(model.input_type.extra, seen)
    output_classes = walk_classes(model.output_type) if model.output_type is not None else []
    return (
        _Document(model, input_classes, model.input_type_name),
        _Document(model, output_classes, model.output_type_name),
    )


def render_stubs(models: Sequence[ToolModel], *, imports: bool = True, input_types: bool = True) -> str:
    """Python source declaring every tool, grouped by server in first-seen order, for an LLM to read.

    Per tool: the classes its parameters and result use, the ``<Tool>Input`` TypedDict (when
    ``input_types`` and the tool takes parameters), the ``<Tool>Output`` TypedDict, then the ``def``.
    ``imports=False`` leaves out the ``from typing import ...`` line (when the caller writes its own).
    """
    pairs = [_documents(model, input_types) for model in models]
    _assign_names([doc for pair in pairs for doc in pair], [m.function_name for m in models])
    typing = _Typing()
    result_classes = {cls for _, output_doc in pairs for cls in output_doc.classes}
    body: list[str] = []
    defined: set[str] = set()
    for server in dict.fromkeys(m.spec.server for m in models):
        body.append(f"# --- server: {comment_text(server, 120)} ---")
        for model, (input_doc, output_doc) in zip(models, pairs, strict=True):
            if model.spec.server != server:
                continue
            for doc in (input_doc, output_doc):
                for cls in doc.classes:
                    final = doc.names(cls.name)
                    if final not in defined:
                        defined.add(final)
                        comments = cls is not model.input_type
                        body += _render_class(
                            cls, doc.names, typing, comments=comments, result=cls in result_classes
                        )
                        body.append("")
            body += _render_function(model, input_doc.names, output_doc.names, typing)
            body.append("")
    header: list[str] = []
    if imports and typing.used:
        header.append(f"from typing import {', '.join(n for n in _TYPING_ORDER if n in typing.used)}")
    if any(m.output_type is None for m in models):
        header.append(_NO_OUTPUT_NOTE)
    if any(m.inferred_calls for m in models):
        header.append(_INFERRED_NOTE)
    if header:
        header.append("")
    return "\n".join(header + body).rstrip("\n") + "\n"
