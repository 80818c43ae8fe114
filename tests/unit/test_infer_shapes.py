"""Result-shape inference (typegen/infer.py): any JSON values give a schema that accepts all of them.

jsonschema is the judge of what a schema accepts; hypothesis generates the values.
"""

from __future__ import annotations

import json
import time
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from codemode_kernel.typegen.infer import (
    MAX_PROPERTIES,
    MAX_SCHEMA_NODES,
    InferredShape,
    infer_schema,
    merge_schemas,
    schema_size,
)

_KEYS = st.sampled_from(["id", "name", "tags", "size", "children", "meta", "ok", "x y", "class", "é"])
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(_KEYS | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=30,
)


def accepts(schema: dict[str, Any], value: Any) -> bool:
    validator = jsonschema.Draft202012Validator(schema)
    return bool(validator.is_valid(value))


def merged(values: list[Any]) -> dict[str, Any]:
    shape = InferredShape.of(values[0])
    for value in values[1:]:
        shape = shape.add(value)
    return shape.schema


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_a_value_is_accepted_by_its_schema(value: Any) -> None:
    schema = infer_schema(value)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert accepts(schema, value)


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=6))
def test_every_value_seen_is_accepted_by_the_merged_schema(values: list[Any]) -> None:
    schema = merged(values)
    for value in values:
        assert accepts(schema, value), (value, schema)


@settings(max_examples=150, deadline=None)
@given(st.lists(json_values, min_size=2, max_size=5), st.randoms(use_true_random=False), json_values)
def test_merging_in_any_order_accepts_the_same_values(values: list[Any], rng: Any, probe: Any) -> None:
    shuffled = list(values)
    rng.shuffle(shuffled)
    forward, other = merged(values), merged(shuffled)
    for value in [*values, probe]:
        assert accepts(forward, value) == accepts(other, value), (value, forward, other)


@settings(max_examples=100, deadline=None)
@given(json_values, json_values)
def test_a_contradicting_result_widens_the_shape(first: Any, second: Any) -> None:
    before = infer_schema(first)
    after = merge_schemas(before, infer_schema(second))
    assert accepts(after, first) and accepts(after, second)


def test_records_in_a_list_become_one_record_with_the_fields_always_present_required() -> None:
    schema = merged(
        [
            {"items": [{"id": 1, "name": "a"}, {"id": 2, "name": "b", "note": None}], "next": None},
            {"items": [{"id": 3.5, "name": "c", "note": "x"}], "next": "cursor"},
        ]
    )
    record = schema["properties"]["items"]["items"]
    assert record["required"] == ["id", "name"]
    assert record["properties"]["id"] == {"type": "number"}  # int and float
    assert record["properties"]["note"] == {"type": ["string", "null"]}
    assert schema["properties"]["next"] == {"type": ["string", "null"]}
    assert schema["required"] == ["items", "next"]


def test_null_then_a_record_is_a_nullable_record() -> None:
    schema = merged([{"user": None}, {"user": {"name": "a"}}])
    user = schema["properties"]["user"]
    assert user["anyOf"][0]["properties"] == {"name": {"type": "string"}}
    assert user["anyOf"][1] == {"type": "null"}


def test_a_result_with_a_hundred_thousand_keys_is_a_plain_object_at_once() -> None:
    hostile = {f"k{i}": {"v": i} for i in range(100_000)}
    began = time.perf_counter()
    schema = infer_schema(hostile)
    assert time.perf_counter() - began < 0.5
    assert schema == {"type": "object"}
    assert accepts(schema, hostile)
    # Records seen one at a time that together pass the limit become a plain object too.
    wide = merged([{f"f{i}": i} for i in range(MAX_PROPERTIES + 1)])
    assert wide == {"type": "object"}


def test_a_result_nested_500_deep_gives_a_small_schema_quickly() -> None:
    deep: Any = "leaf"
    for _ in range(500):
        deep = {"child": [deep]}
    began = time.perf_counter()
    schema = infer_schema(deep)
    assert time.perf_counter() - began < 0.5
    assert schema_size(schema) < 20
    assert accepts(schema, deep)


def test_a_huge_list_of_varied_records_stays_within_the_node_bound() -> None:
    rows = [{f"a{i % 60}": {f"b{i % 50}": [i, str(i)]}} for i in range(30_000)]
    began = time.perf_counter()
    shape = InferredShape.of(rows).add(rows[:5])
    assert time.perf_counter() - began < 2.0
    assert schema_size(shape.schema) <= MAX_SCHEMA_NODES
    assert accepts(shape.schema, rows)


def test_values_that_are_not_json_are_typed_as_any() -> None:
    class Image:
        pass

    assert infer_schema(Image()) == {}
    assert infer_schema(float("nan")) == {}
    assert infer_schema({1: "a"}) == {"type": "object"}
    assert merge_schemas({"type": "string"}, {}) == {}


def test_a_stored_shape_reads_back_and_garbage_is_refused() -> None:
    shape = InferredShape.of({"a": [1, 2]}).add({"a": []})
    again = InferredShape.from_json(json.loads(json.dumps(shape.to_json())))
    assert again == shape and again.calls == 2
    for garbage in (None, [], {"calls": 0, "schema": {}}, {"calls": True, "schema": {}}, {"calls": 1}):
        assert InferredShape.from_json(garbage) is None
    assert InferredShape.from_json({"calls": 1, "schema": {"$ref": "#/x"}}) is None
    # A hand-made schema nested far deeper than inference ever goes is cut, not followed.
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(900):
        deep = {"type": "array", "items": deep}
    read = InferredShape.from_json({"calls": 3, "schema": deep})
    assert read is not None and schema_size(read.schema) < 20


def test_a_hand_damaged_type_never_raises_and_is_read_as_any() -> None:
    """``type`` naming a list or a dict (a hand edit) is no type name: any value, at any depth."""
    damaged: list[Any] = [
        {"type": ["string", ["x"]]},
        {"type": [{"a": 1}]},
        {"type": "array", "items": {"type": ["string", ["x"]]}},
        {"type": "object", "properties": {"a": {"type": [["x"], "null"]}}, "required": ["a"]},
        {"anyOf": [{"type": "string"}, {"type": [{"b": 2}]}]},
        {"type": "array", "items": {"anyOf": [{"type": [["x"]]}, {"type": "null"}]}},
    ]
    for schema in damaged:
        read = InferredShape.from_json({"calls": 2, "schema": schema})  # must not raise
        if read is not None:
            jsonschema.Draft202012Validator.check_schema(read.schema)
            assert read.calls == 2
        assert merge_schemas(schema, {"type": "string"}) is not None
        assert merge_schemas({"type": "integer"}, schema) is not None
    assert InferredShape.from_json({"calls": 1, "schema": {"type": ["string", ["x"]]}}) is None
    nested = InferredShape.from_json({"calls": 1, "schema": damaged[2]})
    assert nested is not None and nested.schema == {"type": "array", "items": {}}
    assert merge_schemas({"type": [{"a": 1}]}, {"type": "string"}) == {}
