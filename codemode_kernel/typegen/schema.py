"""Helpers that read raw JSON Schema dicts: local ``$ref`` pointers, ``allOf`` merging, documentation text.

Schemas come from servers we do not control, so every helper here accepts any JSON value and answers
``None`` (or an empty string) rather than raising when the input is not what the specification says.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "STRUCTURAL_KEYWORDS",
    "UNSUPPORTED_KEYWORDS",
    "becomes_class",
    "describe",
    "merge_all_of",
    "resolve_pointer",
    "simple_default",
]

# Keywords that decide the shape of a value (as opposed to constraining or annotating it).
STRUCTURAL_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "items",
        "prefixItems",
        "enum",
        "const",
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "additionalProperties",
        "patternProperties",
        "nullable",
    }
)

# Keywords that shape a value in ways Python types cannot say; alone, they make a value Any.
UNSUPPORTED_KEYWORDS = ("not", "if", "then", "else", "$dynamicRef", "$recursiveRef", "dependentSchemas")

# allOf chains longer than this are not merged (and nested allOf is flattened into it).
_MAX_ALL_OF_PARTS = 64
_INDEX = re.compile(r"0|[1-9][0-9]*")
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated"})


def resolve_pointer(root: Any, ref: str) -> Any | None:
    """Resolve a local ``$ref`` (``#/$defs/Item``, ``#``) against ``root``; None if it does not resolve.

    Anchors (``#item``) and remote references are not resolved: code mode never fetches schemas.
    """
    if not ref.startswith("#"):
        return None
    from urllib.parse import unquote  # rare ($ref with escapes); urllib is not otherwise loaded by workers

    pointer = unquote(ref[1:])
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return None
    node = root
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and _INDEX.fullmatch(token) and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def becomes_class(schema: Any) -> bool:
    """Whether a schema will translate to a named class (an object with properties).

    Decided before translating, so a recursive ``$ref`` can be answered with the class name; it is
    deliberately narrow, since a wrong yes would leave a reference to a class that never exists.
    """
    if not isinstance(schema, dict):
        return False
    if any(key in schema for key in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const")):
        return False
    properties = schema.get("properties")
    return schema.get("type", "object") == "object" and isinstance(properties, dict) and bool(properties)


def merge_all_of(schema: dict[str, Any], root: Any) -> dict[str, Any] | None:
    """Merge ``schema`` and its ``allOf`` parts into one schema, or None when that is not simple.

    Properties are combined (a property in two parts becomes the ``allOf`` of both), ``required`` lists
    are joined, ``type`` sets intersected, annotations keep the first value; any other keyword given two
    different values means the parts do not merge simply, and the caller gives up on a precise type.
    """
    parts: list[Any] = [{k: v for k, v in schema.items() if k != "allOf"}]
    pending = schema.get("allOf")
    if not isinstance(pending, list):
        return None
    parts.extend(pending)
    merged: dict[str, Any] = {}
    index = 0
    while index < len(parts):
        if len(parts) > _MAX_ALL_OF_PARTS:
            return None
        part = parts[index]
        index += 1
        if part is True:
            continue
        if not isinstance(part, dict):
            return None
        if "$ref" in part:
            target = resolve_pointer(root, part["$ref"]) if isinstance(part["$ref"], str) else None
            if target is None:
                return None
            parts.append({k: v for k, v in part.items() if k != "$ref"})
            parts.append(target)
            continue
        for key, value in part.items():
            if key == "allOf":
                if not isinstance(value, list):
                    return None
                parts.extend(value)
            elif not _merge_keyword(merged, key, value):
                return None
    return merged


def _merge_keyword(merged: dict[str, Any], key: str, value: Any) -> bool:
    """Merge one keyword into ``merged``; False if it conflicts beyond what a simple merge can do."""
    if key not in merged:
        merged[key] = dict(value) if key == "properties" and isinstance(value, dict) else value
        return key != "properties" or isinstance(value, dict)
    old = merged[key]
    if key == "properties":
        if not isinstance(value, dict):
            return False
        for name, sub in value.items():
            old[name] = {"allOf": [old[name], sub]} if name in old and old[name] != sub else sub
    elif key == "required":
        if not isinstance(old, list) or not isinstance(value, list):
            return False
        merged[key] = old + [name for name in value if name not in old]
    elif key == "type":
        old_list, new_list = _type_list(old), _type_list(value)
        both = [t for t in old_list if t in new_list]
        if not both:
            return False
        merged[key] = both[0] if len(both) == 1 else both
    elif key not in _ANNOTATIONS and old != value:
        return False
    return True


def _type_list(value: Any) -> list[str]:
    """A ``type`` keyword as a list of names; empty when it is not one (which then fails to merge)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return list(value)
    return []


def simple_default(schema: Any) -> tuple[bool, Any]:
    """The schema's ``default`` when it can be shown as a short Python literal: ``(True, value)``."""
    if not isinstance(schema, dict) or "default" not in schema:
        return False, None
    value = schema["default"]
    if value is None or isinstance(value, bool | int):
        return (True, value) if not isinstance(value, int) or abs(value) < 10**15 else (False, None)
    if isinstance(value, float):
        return (True, value) if math.isfinite(value) else (False, None)
    if isinstance(value, str) and len(value) <= 60:
        return True, value
    return False, None


def describe(schema: Any, root: Any, *, listing_limit: int = 12) -> str:
    """The documentation of one property: description (or title), format, and long enum listings.

    An enum too long for a ``Literal`` is typed by its base type, so its values are listed here instead,
    truncated: the full schema is one ``tool_schema()`` call away.
    """
    if not isinstance(schema, dict):
        return ""
    target = schema
    if isinstance(schema.get("$ref"), str):
        resolved = resolve_pointer(root, schema["$ref"])
        target = resolved if isinstance(resolved, dict) else schema
    text = ""
    for source in (schema, target):
        for key in ("description", "title"):
            if not text and isinstance(source.get(key), str):
                text = source[key].strip()
    hints: list[str] = []
    fmt = target.get("format")
    if isinstance(fmt, str) and len(fmt) <= 40:
        hints.append(f"format: {fmt}")
    values = target.get("enum")
    if isinstance(values, list) and not literal_fits(values):
        shown = ", ".join(_short_repr(v) for v in values[:listing_limit])
        more = f", ... ({len(values)} values)" if len(values) > listing_limit else ""
        hints.append(f"one of {shown}{more}")
    if hints:
        text = f"{text} ({'; '.join(hints)})" if text else "; ".join(hints)
    return text


# An enum becomes Literal[...] only while the listing stays short enough to read.
MAX_LITERALS = 24
_MAX_LITERAL_CHARS = 600


def literal_fits(values: list[Any]) -> bool:
    """Whether an enum is short enough to be spelled out as ``Literal[...]``."""
    size = sum(len(v) + 4 if isinstance(v, str) else 8 for v in values)
    return len(values) <= MAX_LITERALS and size <= _MAX_LITERAL_CHARS


def _short_repr(value: Any) -> str:
    """``repr`` of a scalar cut to a readable length; containers are only hinted at."""
    if isinstance(value, list | dict):
        return "[...]" if isinstance(value, list) else "{...}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
