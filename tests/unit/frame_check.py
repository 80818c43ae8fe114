"""Check a message against the TypedDicts of the wire format at run time, as mypy checks it when built.

``problems(value, hint)`` lists what does not fit (an empty list: it fits); ``frame_class(frame, union)``
is the member of a union of tagged TypedDicts a frame is, by its Literal keys (``type``, ``ok``, ``op``).
Used by the tests that watch real frames go by.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal


def problems(value: Any, hint: Any, where: str = "$") -> list[str]:
    """Where ``value`` does not fit the type ``hint`` (TypedDicts, unions, Literal, list, dict, scalars)."""
    if hint is Any:
        return []
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        fits = any(value == a and type(value) is type(a) for a in args)
        return [] if fits else [f"{where}: {value!r} is none of {args}"]
    if origin in (typing.Union, types.UnionType):
        found = [problems(value, arg, where) for arg in args]
        if any(not p for p in found):
            return []
        # A frame or an envelope is judged by the member its tags name, if one does.
        named = [p for arg, p in zip(args, found, strict=True) if _tagged_as(value, arg)]
        return named[0] if len(named) == 1 else [f"{where}: {value!r} fits none of {hint}"]
    if origin is list:
        if type(value) is not list:
            return [f"{where}: {type(value).__name__} is not a list"]
        return [p for i, item in enumerate(value) for p in problems(item, args[0], f"{where}[{i}]")]
    if origin is dict:
        if type(value) is not dict:
            return [f"{where}: {type(value).__name__} is not an object"]
        keys = [f"{where}: key {k!r} is not a str" for k in value if type(k) is not str]
        return keys + [p for k, item in value.items() for p in problems(item, args[1], f"{where}[{k!r}]")]
    if typing.is_typeddict(hint):
        return _typeddict_problems(value, hint, where)
    if hint is float:
        return [] if type(value) in (int, float) else [f"{where}: {value!r} is not a number"]
    return [] if type(value) is hint else [f"{where}: {value!r} is not a {hint.__name__}"]


def _typeddict_problems(value: Any, cls: Any, where: str) -> list[str]:
    if type(value) is not dict:
        return [f"{where}: {type(value).__name__} is not an object ({cls.__name__})"]
    hints = typing.get_type_hints(cls)
    found = [f"{where}: {cls.__name__} lacks {key!r}" for key in cls.__required_keys__ if key not in value]
    found += [f"{where}: {cls.__name__} has no key {key!r}" for key in value if key not in hints]
    for key, item in value.items():
        if key in hints:
            found += problems(item, hints[key], f"{where}.{key}")
    return found


def frame_class(frame: dict[str, Any], union: Any) -> type:
    """The member of ``union`` whose Literal keys ``frame`` matches; AssertionError when none or several."""
    members = [cls for cls in typing.get_args(union) if _tags_match(frame, cls)]
    assert len(members) == 1, f"{frame!r} matches {members} of {union}"
    return members[0]


def _tagged_as(value: Any, hint: Any) -> bool:
    return typing.is_typeddict(hint) and type(value) is dict and _tags_match(value, hint)


def _tags_match(frame: dict[str, Any], cls: Any) -> bool:
    literals = {k: h for k, h in typing.get_type_hints(cls).items() if typing.get_origin(h) is Literal}
    return all(not problems(frame.get(key), hint) for key, hint in literals.items())


def check(frame: dict[str, Any], union: Any) -> type:
    """The class of ``frame`` in ``union``, after asserting that the frame fits it exactly."""
    cls = frame_class(frame, union)
    found = problems(frame, cls)
    assert not found, f"{cls.__name__}: {found}"
    return cls
