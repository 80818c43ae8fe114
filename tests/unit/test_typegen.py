"""Schema to type model to stubs, signatures, binding and validation, one rule per test."""

from __future__ import annotations

import ast
import contextlib
import inspect
import pydoc
import typing
from typing import Any, Literal

import pytest

import codemode_kernel.typegen as typegen
from codemode_kernel.core.errors import ToolArgumentError
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator, validate_arguments
from codemode_kernel.typegen import (
    AnyType,
    ClassType,
    ToolModel,
    bind_arguments,
    build_tool_model,
    build_tool_models,
    make_docstring,
    make_signature,
    render_signature,
    render_stubs,
)

# The two tools of the Go design's example, as a server would list them.
GET_WEATHER = {
    "name": "get_weather",
    "title": "Weather Data Retriever",
    "description": "Get current weather data for a location",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The name of the city to get weather for"},
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "Temperature unit for the weather response",
            },
        },
        "required": ["city", "unit"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"temperature": {"type": "number", "description": "Temperature in celsius"}},
        "required": ["temperature"],
    },
}
GET_CITY = {
    "name": "get_city",
    "title": "City location retrieval",
    "description": "Get current city location",
    "inputSchema": {},
    "outputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "Current city location"}},
        "required": ["city"],
    },
}

WEATHER_STUB = '''\
from typing import Literal, TypedDict

# --- server: weather ---
class GetWeatherInput(TypedDict):
    city: str
    unit: Literal["celsius", "fahrenheit"]

class GetWeatherOutput(TypedDict):
    temperature: float  # Temperature in celsius

def get_weather(city: str, unit: Literal["celsius", "fahrenheit"]) -> GetWeatherOutput:
    """Get current weather data for a location

    Args:
        city: The name of the city to get weather for
        unit: Temperature unit for the weather response
    """
    ...

class GetCityOutput(TypedDict):
    city: str  # Current city location

def get_city() -> GetCityOutput:
    """Get current city location"""
    ...
'''


@pytest.fixture
def weather_models() -> list[ToolModel]:
    specs = [ToolSpec.from_wire("weather", GET_WEATHER), ToolSpec.from_wire("weather", GET_CITY)]
    return build_tool_models(specs, reserved=("execute_python",), check=ArgumentValidator)


def model_for(
    properties: dict[str, Any] | None = None,
    required: tuple[str, ...] = (),
    *,
    output: dict[str, Any] | None = None,
    description: str = "",
    **extra: Any,
) -> ToolModel:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}, "required": list(required)}
    spec = ToolSpec(
        "srv", "t", description=description, input_schema={**schema, **extra}, output_schema=output
    )
    return build_tool_model(spec, "t", check=ArgumentValidator)


def signature_of(prop: Any, *, required: bool = True, **extra: Any) -> str:
    return render_signature(model_for({"x": prop}, ("x",) if required else (), **extra))


def assert_inert(source: str) -> None:
    """The stub parses and holds only declarations: no text from a schema became code."""
    tree = ast.parse(source)
    compile(source, "<stub>", "exec", dont_inherit=True)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert node.module == "typing"
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                assert isinstance(item, ast.AnnAssign | ast.Pass) or (
                    isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)
                )
        elif isinstance(node, ast.FunctionDef):
            assert all(
                isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) for item in node.body
            )
        else:
            assert isinstance(node, ast.Assign), ast.dump(node)
            assert isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "TypedDict"
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert set(calls) <= {"TypedDict"}


# --- the Go design's example --------------------------------------------------------------------


def test_weather_example_stub(weather_models: list[ToolModel]) -> None:
    assert render_stubs(weather_models) == WEATHER_STUB


def test_weather_example_stub_without_input_types_or_imports(weather_models: list[ToolModel]) -> None:
    source = render_stubs(weather_models, imports=False, input_types=False)
    assert "GetWeatherInput" not in source
    assert not source.startswith("from typing")
    assert source.startswith("# --- server: weather ---\nclass GetWeatherOutput(TypedDict):")


def test_weather_example_model(weather_models: list[ToolModel]) -> None:
    weather, city = weather_models
    assert (weather.function_name, weather.input_type_name, weather.output_type_name) == (
        "get_weather",
        "GetWeatherInput",
        "GetWeatherOutput",
    )
    assert [(p.name, p.wire_name, p.required) for p in weather.params] == [
        ("city", "city", True),
        ("unit", "unit", True),
    ]
    assert weather.params[0].description == "The name of the city to get weather for"
    assert weather.warnings == ()
    assert city.params == () and city.output_type_name == "GetCityOutput"


def test_stub_executes(weather_models: list[ToolModel]) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(render_stubs(weather_models), "<stub>", "exec", dont_inherit=True), namespace)
    assert typing.get_type_hints(namespace["get_weather"])["unit"] == Literal["celsius", "fahrenheit"]
    assert namespace["GetWeatherOutput"].__required_keys__ == {"temperature"}


def test_tool_without_output_schema_returns_any_with_a_note() -> None:
    model = model_for({"q": {"type": "string"}}, ("q",))
    assert render_signature(model) == "t(q: str) -> Any"
    source = render_stubs([model])
    assert "str for plain text" in source
    assert "str for plain text" in make_docstring(model)


def test_stubs_group_tools_by_server() -> None:
    specs = [ToolSpec("b", "one"), ToolSpec("a", "two"), ToolSpec("b", "three")]
    source = render_stubs(build_tool_models(specs, check=ArgumentValidator))
    assert source.index("# --- server: b ---") < source.index("def one(")
    assert source.index("def three(") < source.index("# --- server: a ---") < source.index("def two(")


# --- one type rule at a time --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "x: str"),
        ({"type": "number"}, "x: float"),
        ({"type": "integer"}, "x: int"),
        ({"type": "boolean"}, "x: bool"),
        ({"type": "null"}, "x: None"),
        ({}, "x: Any"),
        ({"description": "only words"}, "x: Any"),
        ({"type": ["string", "null"]}, "x: str | None"),
        ({"type": ["null", "integer", "string"]}, "x: None | int | str"),
        ({"type": "string", "nullable": True}, "x: str | None"),
        ({"enum": ["a", "b"]}, 'x: Literal["a", "b"]'),
        ({"type": "string", "enum": ["celsius", "fahrenheit"]}, 'x: Literal["celsius", "fahrenheit"]'),
        ({"enum": ["a", 1, True, None]}, 'x: Literal["a", 1, True] | None'),
        ({"enum": [1, True]}, "x: Literal[1, True]"),  # equal in Python, distinct in JSON
        ({"enum": ["x", 1.5]}, 'x: Literal["x"] | float'),
        ({"const": "only"}, 'x: Literal["only"]'),
        ({"const": 'say "hi"\n'}, "x: Literal['say \"hi\"\\n']"),
        ({"type": "array", "items": {"type": "string"}}, "x: list[str]"),
        ({"type": "array"}, "x: list[Any]"),
        ({"items": {"type": "integer"}}, "x: list[int]"),
        (
            {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
            "x: list[str | int]",
        ),
        ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "x: list[list[float]]"),
        ({"type": "object"}, "x: dict[str, Any]"),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "x: dict[str, int]"),
        ({"additionalProperties": {"type": "array", "items": {"type": "string"}}}, "x: dict[str, list[str]]"),
        (
            {
                "type": "object",
                "patternProperties": {"^a": {"type": "integer"}},
                "additionalProperties": False,
            },
            "x: dict[str, int]",
        ),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "x: str | int"),
        ({"oneOf": [{"type": "string"}, {"type": "null"}]}, "x: str | None"),
        ({"anyOf": [{"enum": ["a"]}, {"enum": ["b"]}]}, 'x: Literal["a", "b"]'),
        ({"type": "string", "anyOf": [{"format": "date"}, {"format": "email"}]}, "x: str"),
        ({"allOf": [{"type": "integer"}, {"minimum": 3}]}, "x: int"),
        ({"allOf": [{"type": ["string", "null"]}, {"type": "string"}]}, "x: str"),
    ],
)
def test_type_rule(schema: dict[str, Any], expected: str) -> None:
    assert signature_of(schema) == f"t({expected}) -> Any"


@pytest.mark.parametrize(
    ("schema", "expected", "warning"),
    [
        ({"not": {"type": "string"}}, "x: Any", "'not' is not supported"),
        ({"if": {"type": "string"}, "then": {"minLength": 1}}, "x: Any", "'if' is not supported"),
        ({"type": 42}, "x: Any", "unknown type 42"),
        ({"type": "text"}, "x: Any", "unknown type 'text'"),
        ({"type": [["string"]]}, "x: Any", "unknown type list"),
        ({"$ref": "https://example.com/s.json"}, "x: Any", "remote $ref"),
        ({"$ref": "#/$defs/missing"}, "x: Any", "does not resolve"),
        ({"$ref": 7}, "x: Any", "$ref is not a string"),
        (False, "x: Any", "schema `false`"),
        ([1, 2], "x: Any", "not a schema (list)"),
        ({"enum": []}, "x: Any", "enum is not a non-empty list"),
        ({"anyOf": "nope"}, "x: Any", "anyOf is not a non-empty list"),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "x: Any", "allOf too complex"),
    ],
)
def test_unsupported_schema_degrades_to_any_with_a_warning(schema: Any, expected: str, warning: str) -> None:
    model = model_for({"x": schema}, ("x",))
    assert render_signature(model) == f"t({expected}) -> Any"
    assert any(warning in w and "srv/t inputSchema/properties/x" in w for w in model.warnings), model.warnings
    assert isinstance(model.params[0].type, AnyType)
    source = render_stubs([model])
    assert f"x: Any: {model.params[0].type.reason}" in source  # the reason is in the docstring
    assert_inert(source)


def test_true_schema_is_any_without_warning() -> None:
    model = model_for({"x": True}, ("x",))
    assert render_signature(model) == "t(x: Any) -> Any"
    assert model.warnings == ()


def test_optional_parameters_are_keyword_only_with_defaults() -> None:
    model = model_for(
        {
            "opt_int": {"type": "integer", "default": 3},
            "req": {"type": "string"},
            "opt_str": {"type": "string", "default": 'a"b'},
            "opt_list": {"type": "array", "items": {"type": "string"}, "default": ["x"]},
            "opt_none": {"type": ["string", "null"]},
            "opt_bool": {"type": "boolean", "default": False},
            "opt_long": {"type": "string", "default": "x" * 100},
        },
        ("req",),
    )
    assert render_signature(model) == (
        "t(req: str, *, opt_int: int = 3, opt_str: str = 'a\"b', opt_list: list[str] | None = None, "
        "opt_none: str | None = None, opt_bool: bool = False, opt_long: str | None = None) -> Any"
    )


def test_huge_enum_becomes_base_type_with_truncated_listing() -> None:
    values = [f"value{i}" for i in range(5000)]
    model = model_for({"x": {"type": "string", "enum": values, "description": "Pick one"}}, ("x",))
    assert render_signature(model) == "t(x: str) -> Any"
    source = render_stubs([model])
    assert "Pick one (one of 'value0', 'value1'," in source
    assert "... (5000 values)" in source
    assert "value4999" not in source
    assert len(source) < 1000


def test_nested_objects_become_named_classes() -> None:
    model = model_for(
        {
            "location": {
                "type": "object",
                "description": "Where",
                "properties": {
                    "lat": {"type": "number", "description": "Latitude"},
                    "lon": {"type": "number"},
                    "label": {"type": "object", "properties": {"text": {"type": "string"}}},
                },
                "required": ["lat", "lon"],
            },
            "points": {
                "type": "array",
                "items": {"type": "object", "properties": {"x": {"type": "integer"}}},
            },
        },
        ("location",),
    )
    assert (
        render_signature(model) == "t(location: TLocation, *, points: list[TPointsItem] | None = None) -> Any"
    )
    source = render_stubs([model], input_types=False)
    assert_inert(source)
    assert (
        "class TLocationLabel(TypedDict, total=False):\n"
        "    text: str\n\n"
        "class TLocation(TypedDict):\n"
        '    """Where"""\n'
        "    lat: float  # Latitude\n"
        "    lon: float\n"
        "    label: NotRequired[TLocationLabel]\n"
    ) in source
    assert "class TPointsItem(TypedDict, total=False):\n    x: int\n" in source


def test_object_with_properties_and_additional_properties() -> None:
    model = model_for(
        {
            "x": {
                "type": "object",
                "properties": {"k": {"type": "string"}},
                "additionalProperties": {"type": "number"},
            }
        },
        ("x",),
    )
    assert render_signature(model) == "t(x: TX) -> Any"
    assert "class TX(TypedDict, total=False):\n    k: str\n    # other keys: float\n" in render_stubs([model])


def test_refs_and_definitions() -> None:
    model = model_for(
        {
            "home": {"$ref": "#/$defs/Address"},
            "work": {"$ref": "#/definitions/Address"},
            "unit": {"$ref": "#/$defs/Unit"},
        },
        ("home", "work", "unit"),
        **{
            "$defs": {
                "Address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}},
                    "required": ["street"],
                },
                "Unit": {"enum": ["c", "f"], "description": "The unit"},
            },
            "definitions": {"Address": {"type": "object", "properties": {"zip": {"type": "string"}}}},
        },
    )
    assert render_signature(model) == 't(home: Address, work: Address2, unit: Literal["c", "f"]) -> Any'
    assert model.params[2].description == "The unit"  # taken from the $ref target


def test_recursive_ref_is_a_forward_reference() -> None:
    node = {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
        },
    }
    model = model_for({"tree": {"$ref": "#/$defs/Node"}}, ("tree",), **{"$defs": {"Node": node}})
    assert render_signature(model) == "t(tree: Node) -> Any"
    source = render_stubs([model], input_types=False)
    assert 'children: list["Node"]' in source
    assert 'parent: "Node | None"' in source
    exec(compile(source, "<stub>", "exec", dont_inherit=True), {})


def test_ref_to_root_makes_the_input_class_appear() -> None:
    model = model_for({"child": {"$ref": "#"}, "name": {"type": "string"}}, ("name",))
    assert render_signature(model) == 't(name: str, *, child: "TInput | None" = None) -> Any'
    source = render_stubs([model], input_types=False)
    assert "class TInput(TypedDict" in source
    exec(compile(source, "<stub>", "exec", dont_inherit=True), {})


def test_recursive_non_object_ref_degrades() -> None:
    model = model_for(
        {"x": {"$ref": "#/$defs/L"}},
        ("x",),
        **{"$defs": {"L": {"type": "array", "items": {"$ref": "#/$defs/L"}}}},
    )
    assert render_signature(model) == "t(x: list[Any]) -> Any"
    assert any("recursive $ref" in w for w in model.warnings)


def test_all_of_objects_are_merged() -> None:
    model = model_for(
        {
            "x": {
                "allOf": [
                    {"$ref": "#/$defs/Base"},
                    {"type": "object", "properties": {"extra": {"type": "integer"}}, "required": ["extra"]},
                ]
            }
        },
        ("x",),
        **{
            "$defs": {
                "Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
            }
        },
    )
    assert render_signature(model) == "t(x: TX) -> Any"
    x = model.params[0].type
    assert isinstance(x, ClassType)
    assert [(f.wire_name, f.required) for f in x.fields] == [("extra", True), ("id", True)]


def test_one_of_objects_become_a_union_of_classes() -> None:
    model = model_for(
        {
            "shape": {
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}},
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                    },
                ]
            }
        },
        ("shape",),
    )
    assert render_signature(model) == "t(shape: TShape1 | TShape2) -> Any"


def test_input_root_forms() -> None:
    by_ref = ToolSpec(
        "s",
        "r",
        input_schema={
            "$ref": "#/$defs/Args",
            "$defs": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
        },
    )
    assert render_signature(build_tool_model(by_ref, "r", check=ArgumentValidator)) == "r(q: str) -> Any"
    alternatives = ToolSpec(
        "s",
        "a",
        input_schema={
            "type": "object",
            "properties": {"common": {"type": "integer"}},
            "oneOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a", "common"]},
                {"properties": {"b": {"type": "string"}}, "required": ["common"]},
            ],
        },
    )
    model = build_tool_model(alternatives, "a", check=ArgumentValidator)
    assert render_signature(model) == "a(common: int, *, a: str | None = None, b: str | None = None) -> Any"
    assert any("alternatives" in w for w in model.warnings)


def test_input_schema_that_is_not_an_object_takes_no_parameters() -> None:
    model = build_tool_model(
        ToolSpec("s", "n", input_schema={"type": "string"}), "n", check=ArgumentValidator
    )
    assert render_signature(model) == "n() -> Any"
    assert any("not an object schema" in w for w in model.warnings)


def test_extra_properties_become_kwargs() -> None:
    model = model_for({"q": {"type": "string"}}, ("q",), additionalProperties={"type": "string"})
    assert render_signature(model) == "t(q: str, **kwargs: str) -> Any"
    assert bind_arguments(model, ("x",), {"lang": "en"}) == {"q": "x", "lang": "en"}
    taken = model_for({"kwargs": {"type": "string"}}, additionalProperties=True)
    assert render_signature(taken) == "t(*, kwargs: str | None = None, **kwargs_2: Any) -> Any"


def test_property_names_that_are_not_identifiers() -> None:
    model = model_for(
        {"user-id": {"type": "string"}, "class": {"type": "integer"}, "userId": {"type": "string"}},
        ("user-id",),
    )
    assert (
        render_signature(model)
        == "t(user_id: str, *, class_: int | None = None, userId: str | None = None) -> Any"
    )
    assert [(p.name, p.wire_name) for p in model.params] == [
        ("user_id", "user-id"),
        ("class_", "class"),
        ("userId", "userId"),
    ]
    source = render_stubs([model])
    assert 'TInput = TypedDict("TInput", {\n    "user-id": Required[str],\n    "class": int,\n' in source
    namespace: dict[str, Any] = {}
    exec(compile(source, "<stub>", "exec", dont_inherit=True), namespace)
    assert namespace["TInput"].__required_keys__ == {"user-id"}


def test_output_forms() -> None:
    by_ref = model_for(
        output={
            "$ref": "#/$defs/Item",
            "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        }
    )
    assert render_signature(by_ref) == "t() -> Item"
    assert by_ref.output_type_name == "Item"
    mapping = model_for(output={"type": "object", "additionalProperties": {"type": "integer"}})
    assert render_signature(mapping) == "t() -> dict[str, int]"
    assert mapping.output_type_name is None


def test_same_defs_in_two_tools_are_defined_once() -> None:
    defs = {"$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}}}
    item = {"type": "object", "properties": {"item": {"$ref": "#/$defs/Item"}}, "required": ["item"], **defs}
    other = {"type": "object", "properties": {"item": {"$ref": "#/$defs/Item"}}, "required": ["item"]}
    other["$defs"] = {"Item": {"type": "object", "properties": {"name": {"type": "string"}}}}
    models = build_tool_models(
        [ToolSpec("s", "a", input_schema=item, output_schema=item), ToolSpec("s", "b", input_schema=other)],
        check=ArgumentValidator,
    )
    source = render_stubs(models, input_types=False)
    assert source.count("class Item(TypedDict") == 1
    assert "class Item2(TypedDict" in source
    assert "def b(item: Item2) -> Any:" in source
    exec(compile(source, "<stub>", "exec", dont_inherit=True), {})


def test_class_names_do_not_shadow_typing_or_builtins() -> None:
    model = model_for(
        {"x": {"$ref": "#/$defs/Any"}, "y": {"$ref": "#/$defs/None"}},
        ("x", "y"),
        **{
            "$defs": {n: {"type": "object", "properties": {"v": {"type": "string"}}} for n in ("Any", "None")}
        },
    )
    assert render_signature(model) == "t(x: Any2, y: None2) -> Any"
    exec(compile(render_stubs([model]), "<stub>", "exec", dont_inherit=True), {})


# --- hostile input ------------------------------------------------------------------------------

INJECTION = '"""\nimport os\nos.system("echo pwned")\n"""'


def test_descriptions_and_names_cannot_inject_code() -> None:
    schema = {
        "type": "object",
        "description": INJECTION,
        "properties": {
            'q"""\\': {"type": "string", "description": 'ends with a quote"'},
            "new\nline": {
                "type": "object",
                "description": "nul\x00 surrogate\ud800 separator\u2028 bidi\u202e done",
                "properties": {'z"': {"type": "integer", "description": INJECTION}},
            },
            "x": {"type": "string", "default": INJECTION[:40], "enum": [INJECTION[:40], "b\\"]},
            "bs": {"type": "string", "description": "trailing backslash \\"},
        },
    }
    spec = ToolSpec(
        "srv\n# evil",
        "tool\nname",
        description=INJECTION + '"',
        title=INJECTION,
        input_schema=schema,
        output_schema=schema,
    )
    models = build_tool_models([spec], check=ArgumentValidator)
    for input_types in (True, False):
        source = render_stubs(models, input_types=input_types)
        assert_inert(source)
        assert "\nimport os" not in source
        exec(compile(source, "<stub>", "exec", dont_inherit=True), {})


def test_deep_nesting_is_capped() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(3000):
        schema = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    model = build_tool_model(
        ToolSpec("s", "deep", input_schema=schema, output_schema=schema), "deep", check=ArgumentValidator
    )
    assert any("nested too deeply" in w for w in model.warnings)
    source = render_stubs([model])
    assert_inert(source)
    assert source.count("class ") < 60
    make_signature(model)
    validate_arguments(model, {"x": {}})  # jsonschema cannot take this depth: validation is off, no crash
    assert model.validator is not None and model.validator.warning


def test_wide_schema_is_capped() -> None:
    properties = {f"p{i}": {"type": "object", "properties": {"v": {"type": "integer"}}} for i in range(3000)}
    model = model_for(properties)
    assert len(model.params) == 3000
    assert isinstance(model.params[-1].type, AnyType)
    assert sum("schema too large" in w for w in model.warnings) == 1
    assert_inert(render_stubs([model]))


def test_garbage_schemas_never_crash() -> None:
    garbage: list[Any] = [
        {"type": "object", "properties": [1, 2]},
        {"type": "object", "properties": {"a": None}, "required": "a"},
        {"type": "object", "required": ["ghost"]},
        {"type": "object", "properties": {"a": {"allOf": [{"$ref": "#/properties/a"}]}}},
        {"$ref": "#"},
        {"allOf": [{"$ref": "#"}]},
        {"anyOf": []},
        {"type": "object", "properties": {"a": {"items": [True, False], "additionalItems": False}}},
        {"type": "object", "$schema": "http://example.com/unknown", "properties": {"a": {"type": "string"}}},
        {"type": "object", "$schema": ["not", "a", "uri"]},
        {"type": "object", "properties": {"a": {"type": "string", "minLength": "three"}}},
    ]
    for i, schema in enumerate(garbage):
        spec = ToolSpec("s", f"g{i}", input_schema=schema, output_schema=schema)
        model = build_tool_model(spec, f"g{i}", check=ArgumentValidator)
        assert_inert(render_stubs([model]))
        make_signature(model)
        make_docstring(model)
        with contextlib.suppress(ToolArgumentError):
            validate_arguments(model, {"a": 1})


def test_required_name_without_property_is_an_any_parameter() -> None:
    model = model_for({}, ("ghost",))
    assert render_signature(model) == "t(ghost: Any) -> Any"


# --- runtime signature and docstring ------------------------------------------------------------


def test_make_signature_has_real_annotations(weather_models: list[ToolModel]) -> None:
    signature = make_signature(weather_models[0])
    assert str(signature) == "(city: str, unit: Literal['celsius', 'fahrenheit']) -> tools.GetWeatherOutput"
    output = signature.return_annotation
    assert typing.is_typeddict(output)
    assert typing.get_type_hints(output) == {"temperature": float}
    assert signature.parameters["unit"].annotation == Literal["celsius", "fahrenheit"]


def test_make_signature_optional_and_kwargs() -> None:
    model = model_for(
        {
            "q": {"type": "string"},
            "n": {"type": "integer", "default": 5},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        ("q",),
        additionalProperties={"type": "integer"},
    )
    signature = make_signature(model)
    assert str(signature) == "(q: str, *, n: int = 5, tags: list[str] | None = None, **kwargs: int) -> Any"
    assert signature.parameters["tags"].kind is inspect.Parameter.KEYWORD_ONLY


def test_help_shows_signature_and_docstring(weather_models: list[ToolModel]) -> None:
    model = weather_models[0]

    def get_weather(*args: Any, **kwargs: Any) -> Any:
        return bind_arguments(model, args, kwargs)

    get_weather.__signature__ = make_signature(model)  # type: ignore[attr-defined]
    get_weather.__doc__ = make_docstring(model)
    text = pydoc.render_doc(get_weather, renderer=pydoc.plaintext)
    assert "get_weather(city: str, unit: Literal['celsius', 'fahrenheit'])" in text
    assert "city (str): The name of the city to get weather for" in text
    assert "temperature (float): Temperature in celsius" in text
    assert "MCP tool 'weather/get_weather'." in text


def test_docstring_notes_wire_names_and_any_reasons() -> None:
    model = model_for({"user-id": {"type": "string", "description": "Who"}, "f": {"not": {}}}, ("user-id",))
    doc = make_docstring(model)
    assert "user_id (str) (sent as 'user-id'): Who" in doc
    assert "f (Any): Any: 'not' is not supported." in doc


# --- binding calls ------------------------------------------------------------------------------


def test_bind_positional_and_keyword(weather_models: list[ToolModel]) -> None:
    model = weather_models[0]
    assert bind_arguments(model, ("Oslo", "celsius"), {}) == {"city": "Oslo", "unit": "celsius"}
    assert bind_arguments(model, ("Oslo",), {"unit": "celsius"}) == {"city": "Oslo", "unit": "celsius"}
    assert bind_arguments(model, (), {"unit": "celsius", "city": "Oslo"}) == {
        "city": "Oslo",
        "unit": "celsius",
    }


def test_bind_maps_python_names_back_to_wire_names() -> None:
    model = model_for({"user-id": {"type": "string"}, "class": {"type": "integer"}}, ("user-id",))
    assert bind_arguments(model, ("u1",), {"class_": 3}) == {"user-id": "u1", "class": 3}
    assert bind_arguments(model, (), {"user-id": "u1"}) == {"user-id": "u1"}  # wire names work too


def test_bind_omits_optional_arguments_not_given_or_none() -> None:
    model = model_for(
        {
            "q": {"type": "string"},
            "n": {"type": "integer", "default": 5},
            "tag": {"type": ["string", "null"]},
        },
        ("q",),
    )
    assert bind_arguments(model, ("x",), {}) == {"q": "x"}
    assert bind_arguments(model, ("x",), {"n": None}) == {"q": "x"}
    assert bind_arguments(model, ("x",), {"n": 5}) == {"q": "x", "n": 5}
    assert bind_arguments(model, ("x",), {"tag": None}) == {"q": "x", "tag": None}  # null is a value here


def send(model: ToolModel, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """What a tool function sends: the call bound as Python would, then checked as the hub checks it."""
    arguments = bind_arguments(model, args, kwargs)
    ArgumentValidator(model.spec).validate(arguments)
    return arguments


def test_nullable_true_accepts_and_sends_none() -> None:
    model = model_for(
        {
            "q": {"type": "string", "nullable": True},
            "lang": {"type": "string", "nullable": True},
            "mode": {"enum": ["fast", "slow"], "nullable": True},
            "size": {"$ref": "#/$defs/Size", "nullable": True},
            "off": {"type": "string", "nullable": False},
        },
        ("q",),
        **{"$defs": {"Size": {"type": "integer", "minimum": 1}}},
    )
    assert render_signature(model) == (
        't(q: str | None, *, lang: str | None = None, mode: Literal["fast", "slow"] | None = None, '
        "size: int | None = None, off: str | None = None) -> Any"
    )
    assert send(model, None, lang=None, mode=None, size=None) == {
        "q": None,
        "lang": None,
        "mode": None,
        "size": None,
    }
    assert send(model, "x", off=None) == {"q": "x"}  # nullable: false accepts no null: None is not sent
    with pytest.raises(ToolArgumentError, match="argument lang must be of type str; got 3"):
        send(model, "x", lang=3)
    with pytest.raises(ToolArgumentError, match="argument size: 0 is less than the minimum of 1"):
        send(model, "x", size=0)


def test_none_valid_through_another_alternatives_extra_keys_is_sent() -> None:
    # Found by the property test: "class_" must be a string in the first alternative, but the second
    # takes any extra key, so {"class_": None} is valid and the function must send it.
    declares = {"properties": {"q": {"type": "string"}, "class_": {"type": "string"}}}
    open_ended = {"properties": {"q": {"type": "string"}}, "additionalProperties": True}
    schema = {"type": "object", "anyOf": [declares, open_ended]}
    model = build_tool_model(ToolSpec("s", "t", input_schema=schema), "t", check=ArgumentValidator)
    assert send(model, class_=None) == {"class_": None}
    assert send(model, q=None) == {}  # no alternative takes a null q: None still means "not given"
    closed = {**open_ended, "additionalProperties": False}
    strict = build_tool_model(
        ToolSpec("s", "t", input_schema={"anyOf": [declares, closed]}), "t", check=ArgumentValidator
    )
    assert send(strict, class_=None) == {}


def test_top_level_alternatives_that_take_extra_keys_give_kwargs() -> None:
    alternatives = [
        {"properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": True},
        {
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": False,
        },
    ]
    for key in ("anyOf", "oneOf"):
        model = build_tool_model(
            ToolSpec("s", "t", input_schema={"type": "object", key: alternatives}),
            "t",
            check=ArgumentValidator,
        )
        assert (
            render_signature(model)
            == "t(*, name: str | None = None, id: int | None = None, **kwargs: Any) -> Any"
        )
        assert send(model, name="n", colour="red") == {"name": "n", "colour": "red"}
        assert send(model, id=3, **{"x-team": "core"}) == {"id": 3, "x-team": "core"}
        with pytest.raises(ToolArgumentError):  # validation still applies the exact rule
            send(model, id=3, colour="red")
    typed = build_tool_model(
        ToolSpec("s", "t", input_schema={"oneOf": alternatives[1:]}), "t", check=ArgumentValidator
    )
    assert render_signature(typed) == "t(id: int, **kwargs: str) -> Any"
    closed_alternative = {**alternatives[1], "patternProperties": {}}  # no pattern: no extra key either
    closed = build_tool_model(
        ToolSpec("s", "t", input_schema={"anyOf": [closed_alternative]}), "t", check=ArgumentValidator
    )
    assert closed.kwargs_name is None  # no alternative takes extra keys: a typo is still caught
    with pytest.raises(ToolArgumentError, match="unexpected keyword argument 'idd'"):
        send(closed, idd=3)


def test_any_typed_parameter_sends_none_when_its_schema_accepts_null() -> None:
    model = model_for(
        {
            "meta": {"description": "anything"},
            "neg": {"not": {"type": "string"}},
            "short": {"minLength": 2},
            "ref": {"$ref": "#/$defs/NotText"},
            "never": {"not": {"type": "null"}},
        },
        **{"$defs": {"NotText": {"not": {"type": "string"}}}},
    )
    assert all(isinstance(p.type, AnyType) for p in model.params)
    assert [p.name for p in model.params if p.nullable] == ["meta", "neg", "short", "ref"]
    nones = dict.fromkeys(["meta", "neg", "short", "ref", "never"])
    assert send(model, **nones) == dict.fromkeys(["meta", "neg", "short", "ref"])


def test_an_extra_key_may_be_a_renamed_parameters_python_name() -> None:
    model = model_for({"class": {"type": "integer"}}, additionalProperties=True)
    assert render_signature(model) == "t(*, class_: int | None = None, **kwargs: Any) -> Any"
    # The parameter named by its wire name leaves its Python name free for an extra key, in any order.
    assert send(model, **{"class": 1, "class_": 2}) == {"class": 1, "class_": 2}
    assert send(model, **{"class_": 2, "class": 1}) == {"class": 1, "class_": 2}
    assert send(model, class_=1) == {"class": 1}  # alone, the Python name is the parameter it names
    closed = model_for({"class": {"type": "integer"}})
    with pytest.raises(ToolArgumentError, match="got multiple values for argument 'class_'"):
        send(closed, **{"class": 1, "class_": 2})


@pytest.mark.parametrize(
    ("args", "kwargs", "message", "field"),
    [
        (("Oslo",), {}, "get_weather() missing 1 required argument: 'unit'", "unit"),
        ((), {}, "get_weather() missing 2 required arguments: 'city', 'unit'", "city"),
        (("Oslo", "celsius", "x"), {}, "get_weather() takes 2 positional arguments but 3 were given", None),
        (
            ("Oslo",),
            {"units": "celsius"},
            "unexpected keyword argument 'units' (did you mean 'unit'?)",
            "units",
        ),
        (("Oslo",), {"city": "Bergen", "unit": "celsius"}, "got multiple values for argument 'city'", "city"),
    ],
)
def test_bind_errors_name_the_argument_and_show_the_signature(
    weather_models: list[ToolModel],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    message: str,
    field: str | None,
) -> None:
    with pytest.raises(ToolArgumentError) as info:
        bind_arguments(weather_models[0], args, kwargs)
    assert message in str(info.value)
    assert (
        'signature: get_weather(city: str, unit: Literal["celsius", "fahrenheit"]) -> GetWeatherOutput'
        in str(info.value)
    )
    assert info.value.tool == "get_weather"
    assert info.value.field == field
    assert isinstance(info.value, TypeError)


# --- validation ---------------------------------------------------------------------------------


def test_validation_names_field_and_expectation(weather_models: list[ToolModel]) -> None:
    model = weather_models[0]
    validate_arguments(model, {"city": "Oslo", "unit": "celsius"})
    with pytest.raises(ToolArgumentError) as info:
        validate_arguments(model, {"city": "Oslo", "unit": "kelvin"})
    assert (
        str(info.value) == "get_weather(): argument unit must be one of 'celsius', 'fahrenheit'; got 'kelvin'"
    )
    assert (info.value.tool, info.value.field) == ("get_weather", "unit")
    with pytest.raises(ToolArgumentError, match="argument unit is required"):
        validate_arguments(model, {"city": "Oslo"})


def test_validation_paths_into_nested_values() -> None:
    model = model_for(
        {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            }
        },
        ("items",),
    )
    with pytest.raises(ToolArgumentError) as info:
        validate_arguments(model, {"items": [{"name": "a"}, {"name": "b"}, {"name": 3}]})
    assert info.value.field == "items[2].name"
    assert str(info.value) == "t(): argument items[2].name must be of type str; got 3 (int)"
    with pytest.raises(ToolArgumentError) as info:
        validate_arguments(model, {"items": [{}]})
    assert info.value.field == "items[0].name"


def test_validation_uses_python_names_and_lists_more_problems() -> None:
    model = model_for(
        {"user-id": {"type": "string"}, "n": {"type": "integer", "minimum": 1}, "c": {"const": 1}},
        additionalProperties=False,
    )
    with pytest.raises(ToolArgumentError) as info:
        validate_arguments(model, {"user-id": 5, "n": 0, "c": 2, "zzz": 1})
    text = str(info.value)
    assert "argument user_id must be of type str; got 5 (int)" in text
    assert "argument n: 0 is less than the minimum of 1" in text
    assert "argument c must be 1; got 2" in text
    assert "argument zzz is not accepted" in text


def test_invalid_schema_disables_validation_with_a_warning() -> None:
    model = model_for({"a": {"type": "strin"}})
    assert any("cannot be used for validation" in w for w in model.warnings)
    assert model.validator is not None and not model.validator.enabled
    # The problem as data (doctor shows it under the tool's name), the warning naming the tool for logs.
    problem = model.validator.problem
    assert problem is not None and problem.startswith("inputSchema cannot be used for validation (")
    assert model.validator.warning == f"{model.spec.qualified_name}: {problem}; arguments are sent unchecked"
    validate_arguments(model, {"a": object()})  # nothing checked, nothing raised


def test_remote_ref_fails_only_the_check_that_reaches_it() -> None:
    model = model_for({"a": {"$ref": "https://example.invalid/schema.json"}, "b": {"type": "integer"}})
    validate_arguments(model, {"a": 1})  # unresolvable at use: sent unchecked
    assert model.validator is not None and model.validator.warning
    assert model.validator.problem is None and model.validator.enabled  # later calls are checked again
    with pytest.raises(ToolArgumentError, match="argument b must be of type int"):
        validate_arguments(model, {"b": "x"})


def test_validator_follows_dollar_schema() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}]}},
    }
    validator = ArgumentValidator(ToolSpec("s", "d7", input_schema=schema))
    validator.validate({"pair": ["a", 1]})  # draft 7: only the first item is constrained
    with pytest.raises(ToolArgumentError, match=r"pair\[0\]"):
        validator.validate({"pair": [1]})


def test_validator_is_compiled_once(weather_models: list[ToolModel], monkeypatch: pytest.MonkeyPatch) -> None:
    from codemode_kernel.hub import validation

    calls: list[object] = []
    monkeypatch.setattr(validation.ArgumentValidator, "__init__", lambda *a, **k: calls.append(a))
    for _ in range(50):
        validate_arguments(weather_models[0], {"city": "Oslo", "unit": "celsius"})
    assert calls == []


# --- the public surface -------------------------------------------------------------------------


def test_all_lists_exactly_the_public_names() -> None:
    public = {
        name
        for name, value in vars(typegen).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(typegen.__all__) == public
    assert list(typegen.__all__) == sorted(typegen.__all__)
