"""How a program reaches each field of a tool's result: the stub, the description and the runtime agree.

A model reads the ``execute_python`` description (its rule about ``r.field``, and the tools as stubs) and
writes ``r.name`` or ``r["name"]``; the worker then runs that against a ``ToolResult``. For every field
name an object schema may hold (dict method names such as ``values`` and ``items``, ``count``, keywords,
dunder-like names, names that are no identifier), the three must tell the same story: where the rule
and the stub allow ``r.name``, that expression is the field; where they say ``r["name"]``, the stub marks
the field so, and ``r.name`` never silently stands for it.
"""

from __future__ import annotations

import ast
import copy
import io
import json
import keyword
import pickle
import re
import tokenize
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from codemode_kernel.agent import AgentOptions, build_toolset
from codemode_kernel.config import CodeModeSettings
from codemode_kernel.core.results import ToolResult, decode_result
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.typegen import build_tool_models, make_docstring

TRICKY = [
    "values",
    "items",
    "keys",
    "get",
    "copy",
    "update",
    "pop",
    "popitem",
    "setdefault",
    "fromkeys",
    "clear",
    "count",
    "index",
    "class",
    "from",
    "None",
    "match",
    "type",
    "_",
    "_private",
    "__init__",
    "__class__",
    "__dict__",
    "__deepcopy__",
    "__reduce_ex__",
    "__x",
    "ﬁeld",  # NFKC makes `r.ﬁeld` read `r.field`
    "field",
    "température",
    "user-id",
    "2fa",
    "",
    "range",
]

field_names = st.one_of(
    st.sampled_from(TRICKY),
    st.from_regex(r"\A_{0,2}[a-z][a-z0-9_]{0,6}_{0,2}\Z"),
    st.text(max_size=5),
)
field_schemas = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        {"type": "object", "properties": {"values": {"type": "integer"}}, "required": ["values"]},
        {},
    ]
)
object_schemas = st.dictionaries(field_names, field_schemas, min_size=1, max_size=6).map(
    lambda properties: {"type": "object", "properties": properties, "required": list(properties)}
)

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def instance_of(schema: dict[str, Any], data: st.DataObject) -> Any:
    """A valid instance of ``schema``: objects built here, everything else drawn by hypothesis-jsonschema.

    hypothesis-jsonschema 0.23 cannot generate objects with the Hypothesis installed here
    (``'many' object has no attribute 'more'``), so it draws the property values only.
    """
    if schema.get("type") == "object":
        return {name: instance_of(sub, data) for name, sub in schema["properties"].items()}
    return data.draw(from_schema(schema))


def description_for(schema: dict[str, Any]) -> str:
    """The ``execute_python`` description a model would read for one tool with this output schema."""
    return description_for_specs(
        [ToolSpec(server="sheet", name="probe", description="A probe.", output_schema=schema)]
    )


def description_for_specs(specs: list[ToolSpec]) -> str:
    """The ``execute_python`` description, with the tools as stubs."""
    models = build_tool_models(specs, check=ArgumentValidator)
    toolset = build_toolset(models, specs, CodeModeSettings(), AgentOptions(listing="stubs"))
    assert toolset.execute_python is not None
    return toolset.execute_python.description


def stub_of(description: str) -> str:
    """The stub source inside the description's ```python fence."""
    found = re.search(r"```python\n(.*?)\n```", description, re.S)
    assert found, description
    return found.group(1)


def declared_fields(source: str, class_name: str) -> dict[str, str]:
    """Each field the stub declares for the TypedDict ``class_name``, with the comment on its line."""
    comments = {
        token.start[0]: token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {
                stmt.target.id: comments.get(stmt.lineno, "")
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            }
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == class_name:
            assert isinstance(node.value, ast.Call) and isinstance(node.value.args[1], ast.Dict)
            keys = node.value.args[1].keys
            return {key.value: comments.get(key.lineno, "") for key in keys if isinstance(key, ast.Constant)}
    raise AssertionError(f"no class {class_name} in the stub:\n{source}")


def description_allows_attribute(description: str, name: str) -> bool:
    """The description's rule, read from its own words: which fields a program reads as ``r.name``."""
    listed = re.search(r"named like a dict method \(([^)]*)\)", description)
    assert listed, "the description names the dict methods that shadow fields"
    methods = {word.strip() for word in listed.group(1).split(",")}
    assert "starting with __" in description and "a keyword" in description
    plain = name.isidentifier() and unicodedata.normalize("NFKC", name) == name
    return plain and not keyword.iskeyword(name) and not name.startswith("__") and name not in methods


def stub_allows_attribute(name: str, comment: str) -> bool:
    """What the stub says: an identifier-like field is read as ``r.name`` unless its line says otherwise."""
    return name.isidentifier() and f"r[{json.dumps(name, ensure_ascii=False)}]" not in comment


def runtime_reaches_by_attribute(result: ToolResult, name: str) -> bool:
    """Whether the program text ``r.<name>`` evaluates to the field itself."""
    try:
        code = compile(f"r.{name}", "<program>", "eval")
    except SyntaxError:
        return False
    try:
        return eval(code, {"r": result}) is result[name]
    except AttributeError:
        return False


@SETTINGS
@given(schema=object_schemas, data=st.data())
def test_stub_description_and_runtime_agree_on_every_field(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    description = description_for(schema)
    declared = declared_fields(stub_of(description), "ProbeOutput")
    assert set(declared) == set(schema["properties"])
    instance = instance_of(schema, data)
    result = decode_result({"content": [], "structuredContent": instance}, tool="probe")
    assert isinstance(result, ToolResult)
    for name in list(result):
        dict.__setitem__(result, name, object())  # a value only the field itself is
    for name, comment in declared.items():
        by_rule = description_allows_attribute(description, name)
        assert stub_allows_attribute(name, comment) == by_rule, (name, comment)
        assert runtime_reaches_by_attribute(result, name) == by_rule, name
        assert result[name] is dict.__getitem__(result, name)


@SETTINGS
@given(schema=object_schemas, data=st.data())
def test_any_field_names_leave_the_dict_working(schema: dict[str, Any], data: st.DataObject) -> None:
    """Whatever its fields are called, a result still serialises, copies and pickles as a dict."""
    instance = instance_of(schema, data)
    result = decode_result({"content": [], "structuredContent": instance}, tool="probe")
    assert json.loads(json.dumps(result)) == instance
    assert dict(result) == instance and {**result} == instance
    assert copy.copy(result) == instance and copy.deepcopy(result) == instance
    assert pickle.loads(pickle.dumps(result)) == instance
    assert sorted(result.keys()) == sorted(instance) and len(result.items()) == len(instance)


@pytest.mark.parametrize("name", ["values", "items", "keys", "get", "copy", "update", "pop"])
def test_a_dict_method_taken_for_the_field_says_how_to_read_the_field(name: str) -> None:
    result = decode_result({"structuredContent": {name: [["a", "b"]], "range": "A1"}}, tool="read_range")
    hint = f'r["{name}"]'
    with pytest.raises(TypeError, match=re.escape(hint)):
        iter(getattr(result, name))
    with pytest.raises(TypeError, match=re.escape(hint)):
        getattr(result, name)[0]
    with pytest.raises(TypeError, match=re.escape(hint)):
        len(getattr(result, name))
    assert hint in repr(getattr(result, name))
    assert result[name] == [["a", "b"]]


def test_the_dict_methods_still_work_on_a_result_with_fields_of_their_names() -> None:
    fields = {"values": [1], "items": [2], "keys": [3], "get": 4, "copy": 5, "update": 6, "pop": 7}
    result = decode_result({"structuredContent": fields}, tool="t")
    assert list(result.values()) == list(fields.values())
    assert dict(result.items()) == fields and list(result.keys()) == list(fields)
    assert result.get("pop") == 7 and result.copy() == fields
    result.update(extra=1)
    assert result.pop("extra") == 1


def test_fields_not_named_like_a_dict_method_are_attributes() -> None:
    result = decode_result({"structuredContent": {"count": 3, "index": 0, "match": "m", "_": 1}}, tool="t")
    assert (result.count, result.index, result.match, result._) == (3, 0, "m", 1)


def test_a_dunder_named_field_is_never_taken_for_a_protocol_method() -> None:
    fields = {"__deepcopy__": "x", "__reduce_ex__": "y", "__getstate__": "z", "__init__": "i", "a": 1}
    result = decode_result({"structuredContent": fields}, tool="t")
    assert copy.deepcopy(result) == fields and pickle.loads(pickle.dumps(result)) == fields
    with pytest.raises(AttributeError, match=re.escape('r["__deepcopy__"]')):
        result.__deepcopy__  # noqa: B018
    assert result["__init__"] == "i"


def test_the_docstring_marks_the_fields_read_by_subscript() -> None:
    schema = {"type": "object", "properties": {"values": {"type": "string"}, "rows": {"type": "integer"}}}
    doc = make_docstring(
        build_tool_models(
            [ToolSpec(server="s", name="read_range", output_schema=schema)], check=ArgumentValidator
        )[0]
    )
    values_line = next(line for line in doc.splitlines() if line.strip().startswith("values ("))
    rows_line = next(line for line in doc.splitlines() if line.strip().startswith("rows ("))
    assert 'r["values"]' in values_line and "r[" not in rows_line


def test_only_result_classes_carry_the_note() -> None:
    """An argument is a dict the program builds: ``read as r[...]`` would only be noise there."""
    nested = {"type": "object", "properties": {"values": {"type": "integer"}}}
    spec = ToolSpec(
        server="sheet",
        name="write_range",
        input_schema={"type": "object", "properties": {"cells": nested}},
        output_schema={"type": "object", "properties": {"written": {"type": "integer"}}},
    )
    description = description_for_specs([spec])
    assert "values: int" in description and 'r["values"]' not in description
