"""From pydantic's view of a mistake to the user's: the file, the JSON path as written, and the fix.

pydantic reports ``loc=("args",)`` and "Input should be a valid list"; the user needs
``.mcp.json: mcpServers.github.args: must be a list (JSON array), not a string`` and a line that says what to
write instead. Unknown keys are not errors but warnings with the nearest known key, so a typo is caught and a
newer file still loads.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from ..core.errors import ConfigError
from .jsonpath import join

__all__ = ["file_keys", "json_kind", "unknown_key_warnings", "validate"]

M = TypeVar("M", bound=BaseModel)

_EXPECTED = {
    "string_type": ("a string", "put the value in double quotes"),
    "list_type": ("a list (JSON array)", 'write a JSON array, e.g. ["a", "b"]'),
    "dict_type": ("an object", 'write a JSON object, e.g. {"KEY": "value"}'),
    "model_type": ("an object", 'write a JSON object, e.g. {"enabled": true}'),
    "bool_type": ("true or false", "write true or false, without quotes"),
    "float_type": ("a number", "write a number without quotes, e.g. 30"),
    "int_type": ("a whole number", "write a whole number without quotes, e.g. 3"),
}

_SERVERS_FIX = 'write an object that maps each server name to its entry, e.g. {"weather": {"command": "..."}}'

# Fixes that say more than the generic one, by the key the mistake is in.
_FIELD_FIXES = {
    "args": 'write a JSON array of strings, e.g. "args": ["--port", "8080"]',
    "type": 'write "stdio" (start a local command), "http" or "sse" (connect to a url)',
    "excludedTools": 'write a JSON array of tool names, e.g. ["get_weather", "github/create_issue"]',
    "ref": 'give every model a short unique name, e.g. "ref": "sonnet"',
    "mcpServers": _SERVERS_FIX,
    "servers": _SERVERS_FIX,
    "models": 'write a JSON array of model entries, e.g. [{"ref": "sonnet", "provider": "anthropic"}]',
    "executor": 'write an object, e.g. {"backend": "ray", "address": "auto"}, or remove it (run here)',
    "backend": 'write "local" (worker processes on this machine) or "ray" (the machines of a Ray cluster)',
}

_BOUNDS = {
    "greater_than": ("gt", "greater than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}


def validate(model: type[M], data: Any, *, file: str, path: str) -> M:
    """Validate file data (camelCase keys only) against ``model``; a ConfigError that points into the file."""
    try:
        return model.model_validate(data, by_alias=True, by_name=False, context={"file": file})
    except ValidationError as exc:
        raise _config_error(exc, file=file, path=path) from None


def _config_error(exc: ValidationError, *, file: str, path: str) -> ConfigError:
    # A default computed from another field is not computed when that field is wrong: not a second mistake.
    errors = [e for e in exc.errors(include_url=False) if e["type"] != "default_factory_not_called"]
    first = errors[0]
    loc = list(first["loc"])
    ctx = first.get("ctx") or {}
    if "field" in ctx:
        loc.append(str(ctx["field"]))
    message, fix = _describe(first, loc)
    if len(errors) > 1:
        more = len(errors) - 1
        message += f" (and {more} more problem{'s' if more > 1 else ''} in this entry)"
    return ConfigError(message, file=file, path=join(path, *loc), fix=fix)


def _describe(error: ErrorDetails, loc: list[str | int]) -> tuple[str, str]:
    """Return the message and the fix for one pydantic error."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    key = next((part for part in reversed(loc) if isinstance(part, str)), "")
    value = error["input"]
    if kind == "config":
        return error["msg"], str(ctx["fix"])
    if kind == "missing":
        return "missing", _FIELD_FIXES.get(key, f'add "{key}"')
    if kind in _EXPECTED:
        expected, fix = _EXPECTED[kind]
        return f"must be {expected}, not {json_kind(value)}", _FIELD_FIXES.get(key, fix)
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", '"')
        return f"unknown value {_short_json(value)}", _FIELD_FIXES.get(key, f"write one of {expected}")
    if kind in _BOUNDS:
        bound_key, words = _BOUNDS[kind]
        bound = f"{ctx.get(bound_key):g}"
        return f"must be {words} {bound} (got {_short_json(value)})", f"write a number {words} {bound}"
    if kind == "finite_number":
        return (
            f"must be a finite number (got {_short_json(value)})",
            "write an ordinary number, e.g. 30 (NaN and Infinity are not numbers, and 1e400 is too large "
            "to be one)",
        )
    if kind == "string_too_short":
        return "must not be empty", "write a value, or remove the key"
    return error["msg"], "see docs/configuration.md for the allowed values"


def json_kind(value: Any) -> str:
    """Name the JSON type of what the user wrote (the value is not repeated: it may be a secret)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _short_json(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def file_keys(model: type[BaseModel], *, exclude: frozenset[str] = frozenset()) -> dict[str, str]:
    """Map the keys a file may use for ``model`` to its field names (``{"envFile": "env_file"}``)."""
    keys = {}
    for name, field in model.model_fields.items():
        alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
        keys[alias or name] = name
    return {key: name for key, name in keys.items() if key not in exclude}


def unknown_key_warnings(
    data: Mapping[str, Any],
    model: type[BaseModel],
    *,
    file: str,
    path: str,
    exclude: frozenset[str] = frozenset(),
    silent: frozenset[str] = frozenset(),
) -> list[str]:
    """Warnings for keys ``model`` does not know, naming the nearest known key; nested models are walked.

    ``exclude`` removes field names that are not file keys (a server's ``name`` is its key in the file);
    ``silent`` are keys other tools put there, which we ignore without a word.
    """
    known = file_keys(model, exclude=exclude)
    warnings = []
    for key, value in data.items():
        if key in silent:
            continue
        if key not in known:
            warnings.append(f"{file}: {join(path, key)}: {_unknown_key_message(key, known)}")
            continue
        nested = _nested_model(model.model_fields[known[key]].annotation)
        if nested is not None and isinstance(value, Mapping):
            warnings += unknown_key_warnings(value, nested, file=file, path=join(path, key))
    return warnings


def _unknown_key_message(key: str, known: Mapping[str, str]) -> str:
    if to_camel(key) in known:
        return f'unknown key; did you mean "{to_camel(key)}"? (keys are camelCase)'
    nearest = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    if nearest:
        return f'unknown key; did you mean "{nearest[0]}"?'
    return "unknown key; ignored (known keys: " + ", ".join(sorted(known)) + ")"


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """Return the model inside ``X`` or ``X | None``, if the field holds one."""
    is_union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    candidates = typing.get_args(annotation) if is_union else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None
