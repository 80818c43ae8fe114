"""Result shapes inferred from values: a JSON Schema that accepts every result a tool returned so far.

Most servers publish no ``outputSchema``, so their stubs say ``-> Any`` and a model guesses field names.
The values a tool actually returned say more: which fields objects had, their types, which were always
there, lists of records. :func:`infer_schema` reads one value, :func:`merge_schemas` widens a schema so
it accepts the values of both sides, and :class:`InferredShape` keeps the schema with how many results
it was inferred from.

The schemas use a small vocabulary (``type``, ``properties``, ``required``, ``items``, ``anyOf``), so the
type translator reads them as it reads any schema. Rules:

- an object's ``required`` lists the fields present in every object seen at that place;
- a list's ``items`` merges all its items (a list of records is one record type);
- types that differ become a union: ``int`` and ``float`` are ``number``; null makes the type nullable;
- an object with more than ``MAX_PROPERTIES`` fields (or fields that are not short names) is a plain
  ``object`` (``dict[str, Any]``): a map keyed by data, not a record;
- containers nested deeper than ``MAX_DEPTH``, and whatever is left once ``MAX_NODES`` values were read,
  are typed ``{}`` (any value), so a hostile result gives a small schema quickly.

Nothing here raises for any value, and the schema always validates every value it was inferred from
(values that are not JSON, such as images, are typed ``{}``). Merging is commutative and associative in
what it accepts, as long as the caps above are not reached; reaching them only ever widens. Standard
library only: a worker imports typegen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_PROPERTIES",
    "InferredShape",
    "infer_schema",
    "merge_schemas",
    "schema_size",
]

MAX_DEPTH = 6
"""Containers nested deeper than this are typed ``{}``: the stub of a tree stays readable and finite."""
MAX_PROPERTIES = 64
"""More fields than this in one object (or, merged, at one place) make it a plain ``object``."""
MAX_NODES = 20_000
"""Values read per inference; the rest of a larger result is typed ``{}`` (a bound on time, not shape)."""
MAX_SCHEMA_NODES = 4_000
"""Schema nodes kept after a merge; beyond this the deepest levels are cut to ``{}``."""
MAX_KEY_CHARS = 200
"""A field name longer than this is data, not a name: its object is a plain ``object``."""

_ANY: dict[str, Any] = {}
_KIND_ORDER = ("object", "array", "string", "number", "boolean", "null")
_SCALAR_KIND = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}


class _Budget:
    """How many more values one inference may read."""

    __slots__ = ("left",)

    def __init__(self, nodes: int) -> None:
        self.left = nodes


def infer_schema(value: Any, *, max_nodes: int = MAX_NODES) -> dict[str, Any]:
    """A JSON Schema for ``value`` (a parsed JSON value; dict subclasses such as ToolResult count).

    Never raises; anything that is not JSON is typed ``{}``.
    """
    return _bound(_infer(value, 0, _Budget(max_nodes)))


def _infer(value: Any, depth: int, budget: _Budget) -> dict[str, Any]:
    budget.left -= 1
    if budget.left < 0:
        return dict(_ANY)
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"} if math.isfinite(value) else dict(_ANY)
    if isinstance(value, str):
        return {"type": "string"}
    if depth >= MAX_DEPTH:
        return dict(_ANY)
    if isinstance(value, list | tuple):
        items: dict[str, Any] | None = None
        for item in value:
            schema = _infer(item, depth + 1, budget)
            items = schema if items is None else _merge(items, schema)
            if not items:  # already any value: reading further items cannot widen it
                break
        return {"type": "array"} if items is None else {"type": "array", "items": items}
    if isinstance(value, Mapping):
        if len(value) > MAX_PROPERTIES or not all(
            isinstance(k, str) and len(k) <= MAX_KEY_CHARS for k in value
        ):
            return {"type": "object"}
        properties = {key: _infer(item, depth + 1, budget) for key, item in value.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    return dict(_ANY)  # an image, a resource, any other object: no JSON shape to give


def merge_schemas(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """A schema accepting every value either one accepts (for schemas of this module's vocabulary).

    A schema this module did not write (``enum``, ``$ref``...) is read as ``{}``, any value. The result
    is cut to ``MAX_SCHEMA_NODES`` nodes.
    """
    return _bound(_merge(dict(first), dict(second)))


def _merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    kinds_a, kinds_b = _kinds(first), _kinds(second)
    if kinds_a is None or kinds_b is None:
        return dict(_ANY)
    merged = dict(kinds_a)
    for kind, schema in kinds_b.items():
        merged[kind] = schema if kind not in merged else _merge_kind(kind, merged[kind], schema)
    return _join(merged)


def _kinds(schema: dict[str, Any], *, branch: bool = False) -> dict[str, dict[str, Any]] | None:
    """The schema split into one schema per kind of JSON value; None when it accepts any value.

    ``branch``: ``schema`` is an ``anyOf`` branch, which in this vocabulary never holds an ``anyOf``.
    """
    if "anyOf" in schema:
        branches = schema["anyOf"]
        if branch or not isinstance(branches, list) or not branches:
            return None
        found: dict[str, dict[str, Any]] = {}
        for item in branches:
            sub = _kinds(item, branch=True) if isinstance(item, dict) else None
            if sub is None:
                return None
            for kind, part in sub.items():
                found[kind] = part if kind not in found else _merge_kind(kind, found[kind], part)
        return found
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names:
        return None
    found = {}
    for name in names:
        if not isinstance(name, str):  # a list or a dict where a type name belongs (a hand edit): unknown
            return None
        if name == "null":
            found["null"] = {"type": "null"}
        elif name in _SCALAR_KIND:
            kind = _SCALAR_KIND[name]
            part = {"type": name}
            found[kind] = part if kind not in found else _merge_kind(kind, found[kind], part)
        elif name == "array":
            items = schema.get("items")
            found["array"] = (
                {"type": "array", "items": items} if isinstance(items, dict) else {"type": "array"}
            )
        elif name == "object":
            found["object"] = _object_part(schema)
        else:
            return None
    return found


def _object_part(schema: dict[str, Any]) -> dict[str, Any]:
    """The object kind of a schema, checked: a record (``properties``) or a plain ``object``."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not all(isinstance(v, dict) for v in properties.values()):
        return {"type": "object"}
    required = schema.get("required")
    listed = (
        [r for r in required if isinstance(r, str) and r in properties] if isinstance(required, list) else []
    )
    return {"type": "object", "properties": properties, "required": listed}


def _merge_kind(kind: str, first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two schemas of one kind of value, widened into one."""
    if kind == "number":
        both_int = first.get("type") == second.get("type") == "integer"
        return {"type": "integer" if both_int else "number"}
    if kind == "array":
        items_a, items_b = first.get("items"), second.get("items")
        if items_a is None or items_b is None:  # no item seen on one side: the other's items stand
            items = items_a if items_b is None else items_b
        else:
            items = _merge(items_a, items_b)
        return {"type": "array"} if items is None else {"type": "array", "items": items}
    if kind == "object":
        props_a, props_b = first.get("properties"), second.get("properties")
        if props_a is None or props_b is None:
            return {"type": "object"}  # a plain object on either side stays plain
        if len(props_a.keys() | props_b.keys()) > MAX_PROPERTIES:
            return {"type": "object"}
        properties = dict(props_a)
        for key, schema in props_b.items():
            properties[key] = schema if key not in properties else _merge(properties[key], schema)
        both = set(first.get("required", ())) & set(second.get("required", ()))
        return {"type": "object", "properties": properties, "required": [k for k in properties if k in both]}
    return first


def _join(kinds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One schema from per-kind schemas: itself for one kind, ``type: [...]`` for scalars, else anyOf."""
    parts = [kinds[kind] for kind in _KIND_ORDER if kind in kinds]
    if len(parts) == 1:
        return parts[0]
    if all(len(part) == 1 for part in parts):  # scalars only (and bare arrays or objects)
        return {"type": [part["type"] for part in parts]}
    return {"anyOf": parts}


def schema_size(schema: Any) -> int:
    """How many schema nodes ``schema`` holds (the measure ``MAX_SCHEMA_NODES`` bounds)."""
    count, pending = 0, [schema]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        count += 1
        if isinstance(node.get("items"), dict):
            pending.append(node["items"])
        if isinstance(node.get("properties"), dict):
            pending.extend(node["properties"].values())
        if isinstance(node.get("anyOf"), list):
            pending.extend(node["anyOf"])
    return count


def _bound(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, its deepest levels cut to ``{}`` until it has at most ``MAX_SCHEMA_NODES`` nodes."""
    depth = MAX_DEPTH
    schema = _cut(schema, depth)
    while schema_size(schema) > MAX_SCHEMA_NODES and depth > 0:
        depth -= 1
        schema = _cut(schema, depth)
    return schema


def _cut(schema: dict[str, Any], depth: int) -> dict[str, Any]:
    """``schema`` with the lists and records more than ``depth`` levels down typed ``{}``."""
    kinds = _kinds(schema)
    if kinds is None:
        return dict(_ANY)
    cut: dict[str, dict[str, Any]] = {}
    for kind, part in kinds.items():
        if kind == "array" and "items" in part:
            items = _cut(part["items"], depth - 1) if depth > 0 else {}
            cut[kind] = {"type": "array", "items": items}
        elif kind == "object" and "properties" in part:
            if depth > 0:
                properties = {key: _cut(sub, depth - 1) for key, sub in part["properties"].items()}
                cut[kind] = {**part, "properties": properties}
            else:
                cut[kind] = {"type": "object"}
        else:
            cut[kind] = part
    return _join(cut)


@dataclass(frozen=True)
class InferredShape:
    """A tool's result schema as inferred so far, with the number of results it was inferred from."""

    schema: dict[str, Any]
    calls: int = 1

    @classmethod
    def of(cls, value: Any) -> InferredShape:
        """The shape of one result."""
        return cls(infer_schema(value), 1)

    def add(self, value: Any) -> InferredShape:
        """This shape widened by one more result."""
        return InferredShape(merge_schemas(self.schema, infer_schema(value)), self.calls + 1)

    def merge(self, other: InferredShape) -> InferredShape:
        """Both shapes as one, counting the results of both."""
        return InferredShape(merge_schemas(self.schema, other.schema), self.calls + other.calls)

    def to_json(self) -> dict[str, Any]:
        """``{"calls", "schema"}``: how the store writes it."""
        return {"calls": self.calls, "schema": self.schema}

    @classmethod
    def from_json(cls, data: Any) -> InferredShape | None:
        """Read what ``to_json`` wrote; None when it is not that (a file edited by hand, or damaged).

        Never raises: whatever a hand edit left there is refused or read as any value.
        """
        if not isinstance(data, dict):
            return None
        schema, calls = data.get("schema"), data.get("calls")
        if not isinstance(schema, dict) or isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            return None
        try:
            if schema and _kinds(schema) is None:  # not this module's vocabulary: it could mean anything
                return None
            return cls(_bound(schema), calls)
        except Exception:  # a shape this module did not foresee (a RecursionError): refused
            return None
