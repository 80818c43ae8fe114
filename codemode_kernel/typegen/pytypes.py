"""The Python types a JSON Schema translates to: one small immutable tree per schema.

The tree is built once per tool and read three ways: stub source for the LLM, runtime annotations for
``help()``, and the parameter list for binding calls. Keeping it free of rendering concerns is what lets
the three agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "AnyType",
    "ClassRef",
    "ClassType",
    "DictType",
    "Field",
    "ListType",
    "LiteralType",
    "LiteralValue",
    "PyType",
    "ScalarType",
    "UnionType",
    "accepts_none",
    "make_union",
    "walk_classes",
]

LiteralValue: TypeAlias = str | int | bool
JsonScalar: TypeAlias = str | int | float | bool | None

# More alternatives than this stop being a useful type for a reader; the value is typed Any instead.
MAX_UNION = 12


@dataclass(frozen=True)
class AnyType:
    """Any value. ``reason`` is empty when the schema allows anything, else why the type was given up."""

    reason: str = ""


@dataclass(frozen=True)
class ScalarType:
    """``str``, ``int``, ``float``, ``bool`` or ``None``."""

    name: Literal["str", "int", "float", "bool", "None"]


@dataclass(frozen=True)
class LiteralType:
    """``Literal[...]`` from ``enum`` / ``const`` (strings, integers and booleans only)."""

    values: tuple[LiteralValue, ...]


@dataclass(frozen=True)
class ListType:
    """``list[item]``."""

    item: PyType


@dataclass(frozen=True)
class DictType:
    """``dict[str, value]``: an object described only by ``additionalProperties``."""

    value: PyType


@dataclass(frozen=True)
class UnionType:
    """``A | B | ...``; build with :func:`make_union`, which flattens and deduplicates."""

    options: tuple[PyType, ...]


@dataclass(frozen=True)
class Field:
    """One property of an object type, keyed by its wire name."""

    wire_name: str
    type: PyType
    required: bool
    description: str = ""
    default: JsonScalar = None


@dataclass(frozen=True)
class ClassType:
    """An object with known properties: a TypedDict in stubs and at runtime.

    ``extra`` is the type of further keys when ``additionalProperties`` gives a schema for them;
    ``notes`` are short remarks for the reader (ignored keywords, truncated listings).
    """

    name: str
    fields: tuple[Field, ...]
    description: str = ""
    extra: PyType | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassRef:
    """A reference by name to a class still being built: how recursive schemas stay finite."""

    name: str


PyType: TypeAlias = (
    AnyType | ScalarType | LiteralType | ListType | DictType | UnionType | ClassType | ClassRef
)


def make_union(options: list[PyType]) -> PyType:
    """Union of ``options``: flattened, deduplicated, literals merged; Any absorbs everything.

    Literal values are compared with their type, so ``Literal[1]`` and ``Literal[True]`` stay distinct.
    """
    flat: list[PyType] = []
    for option in options:
        flat.extend(option.options if isinstance(option, UnionType) else [option])
    for option in flat:
        if isinstance(option, AnyType):
            return option
    literals: list[LiteralValue] = []
    seen: set[tuple[type, LiteralValue]] = set()
    result: list[PyType] = []
    for option in flat:
        if isinstance(option, LiteralType):
            for value in option.values:
                if (type(value), value) not in seen:
                    seen.add((type(value), value))
                    literals.append(value)
            if not any(isinstance(r, LiteralType) for r in result):
                result.append(option)  # placeholder keeps the position of the first literal
        elif option not in result:
            result.append(option)
    if literals:
        result = [LiteralType(tuple(literals)) if isinstance(r, LiteralType) else r for r in result]
    if not result:
        return AnyType("empty union")
    if len(result) > MAX_UNION:
        return AnyType(f"union of {len(result)} types")
    return result[0] if len(result) == 1 else UnionType(tuple(result))


def accepts_none(pytype: PyType) -> bool:
    """Whether the type says outright that ``None`` (JSON null) is a valid value."""
    if isinstance(pytype, ScalarType):
        return pytype.name == "None"
    if isinstance(pytype, UnionType):
        return any(accepts_none(option) for option in pytype.options)
    return False


def walk_classes(pytype: PyType, seen: set[int] | None = None) -> list[ClassType]:
    """Every class reachable from ``pytype``, dependencies before the classes that use them."""
    seen = set() if seen is None else seen
    found: list[ClassType] = []
    if isinstance(pytype, ClassType):
        if id(pytype) in seen:
            return found
        seen.add(id(pytype))
        for field in pytype.fields:
            found += walk_classes(field.type, seen)
        if pytype.extra is not None:
            found += walk_classes(pytype.extra, seen)
        found.append(pytype)
    elif isinstance(pytype, ListType):
        found += walk_classes(pytype.item, seen)
    elif isinstance(pytype, DictType):
        found += walk_classes(pytype.value, seen)
    elif isinstance(pytype, UnionType):
        for option in pytype.options:
            found += walk_classes(option, seen)
    return found
