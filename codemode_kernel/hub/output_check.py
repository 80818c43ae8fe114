"""Results checked against their tool's own outputSchema: warnings in the call record, never errors.

Real servers break their own outputSchema (a field missing, a number sent as text); the result still
reaches the caller, and the call record says what did not match. The schema is compiled as every server
schema is (``validation.schema_validator``): a ``$ref`` to a file or an address is never fetched, and the
warning of a result that reaches one names it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema

from ..core.toolspec import ToolSpec
from .validation import outside_reference, schema_validator

__all__ = ["OutputChecks"]

_Checker = Callable[[Any], tuple[str, ...]]


class OutputChecks:
    """Each tool's outputSchema, compiled on its first result and kept until its server lists tools again."""

    def __init__(self) -> None:
        self._checkers: dict[tuple[str, str], _Checker] = {}

    def warnings(self, spec: ToolSpec, result: dict[str, Any]) -> tuple[str, ...]:
        """What in ``result`` (wire CallToolResult) breaks the tool's outputSchema; () when all is well."""
        if spec.output_schema is None or result.get("isError"):
            return ()
        if result.get("structuredContent") is None:
            return (f"{spec.qualified_name}: has an outputSchema but returned no structuredContent",)
        key = (spec.server, spec.name)
        checker = self._checkers.get(key)
        if checker is None:
            checker = self._checkers[key] = _compile(spec)
        return checker(result["structuredContent"])

    def forget(self, server: str) -> None:
        """Drop a server's compiled schemas (its tools were listed again and may have changed)."""
        self._checkers = {key: c for key, c in self._checkers.items() if key[0] != server}


def _compile(spec: ToolSpec) -> _Checker:
    """Compile the tool's outputSchema once; the checker returns warnings and never raises."""
    assert spec.output_schema is not None
    try:
        compiled = schema_validator(spec.output_schema)
    except Exception as exc:  # whatever a server sends as a schema, the result still reaches the caller
        warning = (
            f"{spec.qualified_name}: its outputSchema is not valid JSON Schema ({exc}); results not checked"
        )
        return lambda _structured: (warning,)

    def check(structured: Any) -> tuple[str, ...]:
        try:
            error = jsonschema.exceptions.best_match(compiled.iter_errors(structured))
        except Exception as exc:  # a $ref outside it, a hostile pattern...: report, never lose the result
            reason = outside_reference(exc) or f"{type(exc).__name__}: {exc}"
            return (f"{spec.qualified_name}: its outputSchema could not be checked ({reason})",)
        if error is None:
            return ()
        where = ".".join(str(p) for p in error.absolute_path) or "(root)"
        return (
            f"{spec.qualified_name}: structuredContent does not match its outputSchema at {where}: "
            f"{error.message}",
        )

    return check
