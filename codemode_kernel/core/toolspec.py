"""ToolSpec: one MCP tool as the hub listed it, the input of type generation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolSpec"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a server listed it, with its schemas kept raw (exactly as sent).

    Keeping the raw schemas means argument validation never depends on how well they were translated
    to Python types. ``warnings`` holds what was repaired while listing (a missing ``"type"``...).
    ``input_schema_problem`` says why the server's inputSchema was replaced by ``{"type": "object"}`` (it
    sent none, or not an object): then nothing is known about the arguments, and they are not validated.

    ``inferred_output`` is the result shape inferred from ``inferred_calls`` results of a tool without an
    outputSchema (codemode_kernel/shapes.py). It only types the result in stubs and ``help()``: it is not
    an outputSchema, so nothing is validated against it and decoding ignores it.
    """

    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    input_schema_problem: str | None = None
    inferred_output: dict[str, Any] | None = None
    inferred_calls: int = 0

    @property
    def qualified_name(self) -> str:
        """``server/tool``, the form ``excludedTools`` accepts and messages use."""
        return f"{self.server}/{self.name}"

    @property
    def wraps_result(self) -> bool:
        """True when the structured result is a value wrapped as ``{"result": value}``.

        MCP requires structured content to be an object, so the Python SDK wraps a tool that returns a
        list, a number or a string in a one-field ``<tool>Output`` object (FastMCP marks it with
        ``x-fastmcp-wrap-result``). The tool function returns the value itself, typed as the field is.
        """
        schema = self.output_schema
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return False
        properties = schema.get("properties")
        if (
            not isinstance(properties, dict)
            or list(properties) != ["result"]
            or schema.get("required") != ["result"]
        ):
            return False
        title = schema.get("title")
        return bool(schema.get("x-fastmcp-wrap-result")) or (
            isinstance(title, str) and title.endswith("Output")
        )

    @classmethod
    def from_wire(cls, server: str, tool: dict[str, Any]) -> ToolSpec:
        """Build from a tools/list entry in wire (camelCase) form, repairing what real servers get wrong."""
        warnings: list[str] = []
        name = str(tool.get("name", ""))
        schema = tool.get("inputSchema")
        problem = None
        if not isinstance(schema, dict):
            problem = "no inputSchema" if schema is None else "inputSchema is not an object"
            warnings.append(f"tool {name!r}: {problem}; treated as taking no arguments")
            schema = {"type": "object"}
        elif "type" not in schema:
            warnings.append(f'tool {name!r}: inputSchema has no "type"; assumed "object"')
            schema = {"type": "object", **schema}
        output = tool.get("outputSchema")
        if output is not None and not isinstance(output, dict):
            warnings.append(f"tool {name!r}: outputSchema is not an object; ignored")
            output = None
        annotations = tool.get("annotations")
        return cls(
            server=server,
            name=name,
            description=str(tool.get("description") or ""),
            input_schema=schema,
            output_schema=output,
            title=tool.get("title") if isinstance(tool.get("title"), str) else None,
            annotations=annotations if isinstance(annotations, dict) else None,
            warnings=tuple(warnings),
            input_schema_problem=problem,
        )
