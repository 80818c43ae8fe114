"""JSON Schema to Python for code mode: names, one type model per tool, and what is read from it.

One :class:`ToolModel` per tool, built once by :func:`build_tool_models`, feeds everything else:

- :func:`render_stubs`: Python source an LLM reads (typed ``def`` per tool, TypedDicts, docstrings);
- :func:`make_signature`, :func:`make_docstring`, :func:`bind_arguments`: the runtime function's face
  and how a call becomes the wire arguments dict; :func:`make_tool_function` (and its async twin) puts
  them together into the function, given where its calls go.

Standard library only, including what functions import: a worker imports it (a contract in pyproject.toml
says so, checked by ``lint-imports``). Checking arguments against the raw input schema needs jsonschema
and is the kernel's (``hub.validation``): a model is given the check (``check=``) and names only its face,
:class:`InputCheck`.

What JSON Schema says and Python types cannot is typed ``Any`` and listed in ``ToolModel.warnings``;
no schema makes any of this raise (docs/typegen.md has the mapping rules).
"""

from .function import make_async_tool_function, make_tool_function
from .model import (
    InputCheck,
    InputCheckFactory,
    Param,
    ToolModel,
    build_tool_model,
    build_tool_models,
    renamed_warning,
)
from .naming import assign_function_names, assign_parameter_names, function_name, parameter_name, type_name
from .pytypes import (
    AnyType,
    ClassRef,
    ClassType,
    DictType,
    Field,
    ListType,
    LiteralType,
    PyType,
    ScalarType,
    UnionType,
)
from .signature import bind_arguments, make_docstring, make_signature, runtime_annotation
from .stubs import render_signature, render_stubs

__all__ = [
    "AnyType",
    "ClassRef",
    "ClassType",
    "DictType",
    "Field",
    "InputCheck",
    "InputCheckFactory",
    "ListType",
    "LiteralType",
    "Param",
    "PyType",
    "ScalarType",
    "ToolModel",
    "UnionType",
    "assign_function_names",
    "assign_parameter_names",
    "bind_arguments",
    "build_tool_model",
    "build_tool_models",
    "function_name",
    "make_async_tool_function",
    "make_docstring",
    "make_signature",
    "make_tool_function",
    "parameter_name",
    "renamed_warning",
    "render_signature",
    "render_stubs",
    "runtime_annotation",
    "type_name",
]
