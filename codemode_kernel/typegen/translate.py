"""JSON Schema to the Python type tree of :mod:`.pytypes`, giving up gracefully on what does not map.

Every way a schema can go wrong (unknown keywords, garbage values, remote or broken ``$ref``, recursion,
absurd depth or size) ends in ``AnyType(reason)`` plus a warning naming the schema location, never in an
exception: one odd tool must not keep the others from loading.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .naming import RESERVED_TYPE_NAMES, type_name
from .pytypes import (
    AnyType,
    ClassRef,
    ClassType,
    DictType,
    Field,
    ListType,
    LiteralType,
    LiteralValue,
    PyType,
    ScalarType,
    make_union,
)
from .schema import (
    STRUCTURAL_KEYWORDS,
    UNSUPPORTED_KEYWORDS,
    becomes_class,
    describe,
    literal_fits,
    merge_all_of,
    resolve_pointer,
    simple_default,
)

__all__ = ["ClassNames", "SchemaTranslator"]

# Deeper than this, a value is typed Any: no real tool nests this far, and hostile schemas must not
# exhaust the stack.
MAX_DEPTH = 24
# Schema nodes translated per document before the rest is typed Any (a guard against blow-up).
MAX_NODES = 2000

_SCALARS: dict[str, ScalarType] = {
    "string": ScalarType("str"),
    "integer": ScalarType("int"),
    "number": ScalarType("float"),
    "boolean": ScalarType("bool"),
    "null": ScalarType("None"),
}


class ClassNames:
    """Hands out class names that are unique within one tool and shadow nothing the stub uses."""

    def __init__(self, taken: Collection[str] = ()) -> None:
        self._taken = set(taken) | RESERVED_TYPE_NAMES

    def claim(self, preferred: str) -> str:
        """Reserve ``preferred``, or ``preferred2``, ``preferred3``... if it is taken."""
        name, n = preferred, 2
        while name in self._taken:
            name = f"{preferred}{n}"
            n += 1
        self._taken.add(name)
        return name


class SchemaTranslator:
    """Translates one schema document (an input or an output schema) of one tool.

    ``root`` is the document local ``$ref`` pointers resolve against; ``where`` prefixes warnings
    (``weather/get_weather inputSchema``). Warnings collect in :attr:`warnings`.
    """

    def __init__(self, root: Any, *, where: str, names: ClassNames) -> None:
        self.root = root
        self.where = where
        self.names = names
        self.warnings: list[str] = []
        self._nodes = 0
        self._done: dict[str, PyType] = {}
        self._active: dict[str, str | None] = {}
        # Class name -> prefix for the names of its nested classes, where that is not the name itself:
        # ``GetWeatherOutput`` nests ``GetWeatherLocation``, as ``GetWeatherInput`` would.
        self.stems: dict[str, str] = {}

    def degrade(self, path: str, reason: str) -> AnyType:
        """Record why the value at ``path`` is typed Any, and return that Any."""
        shown = path if len(path) <= 160 else "..." + path[-157:]  # deep paths keep their informative end
        self.warnings.append(f"{self.where}{shown}: {reason}; typed as Any")
        return AnyType(reason)

    def translate(
        self, schema: Any, path: str, hint: str, depth: int = 0, named: str | None = None
    ) -> PyType:
        """The Python type of ``schema``; ``hint`` names the class it becomes, if it becomes one.

        ``named`` is a class name already claimed for this schema (by a ``$ref`` that may recurse into it).
        """
        self._nodes += 1
        if self._nodes > MAX_NODES:
            if self._nodes == MAX_NODES + 1:  # one warning, not one per remaining property
                return self.degrade(path, "schema too large (this and later values)")
            return AnyType("schema too large")
        if depth > MAX_DEPTH:
            return self.degrade(path, "nested too deeply")
        if schema is True:
            return AnyType()
        if schema is False:
            return self.degrade(path, "schema `false` accepts no value")
        if not isinstance(schema, dict):
            return self.degrade(path, f"not a schema ({type(schema).__name__})")
        result = self._shape(schema, path, hint, depth, named)
        if schema.get("nullable") is True:  # OpenAPI 3.0: null is valid too, whatever the rest says
            result = make_union([result, ScalarType("None")])
        return result

    def _shape(self, schema: dict[str, Any], path: str, hint: str, depth: int, named: str | None) -> PyType:
        """The type of a schema object, by the keyword that decides its shape."""
        if "$ref" in schema:
            return self._ref(schema, path, hint, depth)
        if "allOf" in schema:
            merged = merge_all_of(schema, self.root)
            if merged is None:
                return self.degrade(path, "allOf too complex")
            return self.translate(merged, path, hint, depth + 1, named)
        if "anyOf" in schema or "oneOf" in schema:
            return self._alternatives(schema, path, hint, depth)
        if "const" in schema:
            return self._literal([schema["const"]], path)
        if "enum" in schema:
            return self._literal(schema["enum"], path)
        return self._typed(schema, path, hint, depth, named)

    def _typed(self, schema: dict[str, Any], path: str, hint: str, depth: int, named: str | None) -> PyType:
        """Translate by ``type`` (or by the keywords present when ``type`` is missing)."""
        declared = schema.get("type")
        if declared is None:
            if any(k in schema for k in ("properties", "additionalProperties", "patternProperties")):
                declared = "object"
            elif "items" in schema or "prefixItems" in schema:
                declared = "array"
            else:
                unsupported = [k for k in UNSUPPORTED_KEYWORDS if k in schema]
                if unsupported:
                    return self.degrade(path, f"{unsupported[0]!r} is not supported")
                return AnyType()
        names = [declared] if isinstance(declared, str) else declared
        known = ("array", "object", *_SCALARS)
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n in known for n in names)
        ):
            return self.degrade(path, f"unknown type {_clip(declared)}")
        options: list[PyType] = []
        for name in dict.fromkeys(names):
            if name == "array":
                options.append(self._array(schema, path, hint, depth))
            elif name == "object":
                options.append(self.object_type(schema, path, hint, depth, named))
            else:
                options.append(_SCALARS[name])
        return make_union(options)

    def _ref(self, schema: dict[str, Any], path: str, hint: str, depth: int) -> PyType:
        """Follow a local ``$ref``; a reference back into a class being built becomes a ClassRef."""
        ref = schema["$ref"]
        if not isinstance(ref, str):
            return self.degrade(path, "$ref is not a string")
        if not ref.startswith("#"):
            return self.degrade(path, f"remote $ref {_clip(ref)} is not followed")
        if ref in self._done:
            return self._done[ref]
        if ref in self._active:
            name = self._active[ref]
            return ClassRef(name) if name else self.degrade(path, f"recursive $ref {_clip(ref)}")
        target = resolve_pointer(self.root, ref)
        if target is None:
            return self.degrade(path, f"$ref {_clip(ref)} does not resolve")
        stem = ref.rstrip("/").rsplit("/", 1)[-1] if "/" in ref else ""
        name = self.names.claim(type_name(stem) if stem else hint) if becomes_class(target) else None
        self._active[ref] = name
        result = self.translate(target, f"{path}/$ref", type_name(stem) if stem else hint, depth + 1, name)
        del self._active[ref]
        self._done[ref] = result
        return result

    def _alternatives(self, schema: dict[str, Any], path: str, hint: str, depth: int) -> PyType:
        """``anyOf`` / ``oneOf`` as a union; branches that only add constraints keep the base type."""
        key = "anyOf" if "anyOf" in schema else "oneOf"
        branches = schema[key]
        if not isinstance(branches, list) or not branches:
            return self.degrade(path, f"{key} is not a non-empty list")
        base = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        if not any(isinstance(b, dict) and STRUCTURAL_KEYWORDS & b.keys() for b in branches):
            return self.translate(base, path, hint, depth + 1)
        structural_base = bool(STRUCTURAL_KEYWORDS & base.keys())
        class_like = sum(1 for b in branches if isinstance(b, dict) and "properties" in b)
        options: list[PyType] = []
        for i, branch in enumerate(branches):
            if structural_base and isinstance(branch, dict):
                branch = {**base, "allOf": [branch]}
            branch_hint = hint if class_like <= 1 else f"{hint}{i + 1}"
            options.append(self.translate(branch, f"{path}/{key}/{i}", branch_hint, depth + 1))
        result = make_union(options)
        if isinstance(result, AnyType) and result.reason.startswith("union of"):
            return self.degrade(path, result.reason)
        return result

    def _literal(self, values: Any, path: str) -> PyType:
        """``enum`` / ``const`` as ``Literal[...]``, or as the base types when the listing is too long."""
        if not isinstance(values, list) or not values:
            return self.degrade(path, "enum is not a non-empty list")
        literals: list[LiteralValue] = []
        options: list[PyType] = []
        for value in values:
            if value is None:
                options.append(ScalarType("None"))
            elif isinstance(value, str | int):  # bool is an int
                literals.append(value)
            elif isinstance(value, float):
                options.append(ScalarType("float"))
            else:
                options.append(self.degrade(path, "enum holds objects or lists"))
        if literals and literal_fits(values):
            options.insert(0, LiteralType(tuple(literals)))
        else:  # the values are listed in the documentation instead (see describe())
            options[:0] = [
                *([ScalarType("str")] if any(isinstance(v, str) for v in literals) else []),
                *([ScalarType("int")] if any(type(v) is int for v in literals) else []),
                *([ScalarType("bool")] if any(isinstance(v, bool) for v in literals) else []),
            ]
        return make_union(options)

    def _array(self, schema: dict[str, Any], path: str, hint: str, depth: int) -> PyType:
        """``list[T]``; tuple-style ``prefixItems`` / ``items: [...]`` become a list of their union."""
        items = schema.get("items", True)
        prefix = schema.get("prefixItems")
        if isinstance(items, list):  # draft 4-7 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        item_hint = f"{hint}Item"
        options: list[PyType] = []
        if isinstance(prefix, list):
            for i, sub in enumerate(prefix):
                options.append(self.translate(sub, f"{path}/prefixItems/{i}", item_hint, depth + 1))
        if items is not False or not options:
            options.append(self.translate(items, f"{path}/items", item_hint, depth + 1))
        return ListType(make_union(options))

    def object_type(
        self, schema: dict[str, Any], path: str, hint: str, depth: int, named: str | None = None
    ) -> PyType:
        """An object: a class when it has properties, else ``dict[str, T]``."""
        properties = schema.get("properties")
        extra = self.extra_type(schema, path, hint, depth)
        if not isinstance(properties, dict) or not properties:
            return DictType(extra or AnyType())
        name = named or self.names.claim(hint)
        fields = self.fields(schema, path, self.stems.get(name, name), depth)
        description = schema.get("description")
        return ClassType(
            name=name,
            fields=fields,
            description=description.strip() if isinstance(description, str) else "",
            extra=extra,
        )

    def fields(self, schema: dict[str, Any], path: str, stem: str, depth: int) -> tuple[Field, ...]:
        """The properties of an object schema as fields, in schema order; nested classes named ``stem<Prop>``.

        Names listed in ``required`` without a property schema still become (Any-typed) fields: the call
        cannot succeed without them.
        """
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required_list = schema.get("required")
        required = (
            {r for r in required_list if isinstance(r, str)} if isinstance(required_list, list) else set()
        )
        result: list[Field] = []
        for wire, sub in properties.items():
            has_default, default = simple_default(sub)
            result.append(
                Field(
                    wire_name=wire,
                    type=self.translate(sub, f"{path}/properties/{wire}", stem + type_name(wire), depth + 1),
                    required=wire in required,
                    description=describe(sub, self.root),
                    default=default if has_default else None,
                )
            )
        result.extend(Field(name, AnyType(), True) for name in sorted(required - properties.keys()))
        return tuple(result)

    def extra_type(self, schema: dict[str, Any], path: str, hint: str, depth: int) -> PyType | None:
        """The type of keys beyond ``properties``: from ``additionalProperties`` and ``patternProperties``.

        None means no typed extras: ``additionalProperties`` is false, missing or true (a missing keyword
        allows extra keys in JSON Schema, but nothing useful can be said about them).
        """
        options: list[PyType] = []
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            for pattern, sub in patterns.items():
                options.append(
                    self.translate(sub, f"{path}/patternProperties/{pattern}", f"{hint}Value", depth + 1)
                )
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            options.append(
                self.translate(additional, f"{path}/additionalProperties", f"{hint}Value", depth + 1)
            )
        elif options and additional is not False:
            options.append(AnyType())
        return make_union(options) if options else None

    def begin_root(self, name: str | None) -> None:
        """Mark the document root as being built, so ``{"$ref": "#"}`` refers back to class ``name``."""
        self._active["#"] = name


def _clip(value: Any) -> str:
    """A value for a warning: repr, cut short (warnings are read by people, schemas may be huge)."""
    text = (
        repr(value) if isinstance(value, str | int | float | bool) or value is None else type(value).__name__
    )
    return text if len(text) <= 40 else text[:37] + "..."
