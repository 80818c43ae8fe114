"""What the model is offered: ``execute_python`` (code mode) and ordinary tool definitions (classic).

Built from the tools the worker knows (the Toolbox's type models) and every tool the hub lists, so it is
a pure function, testable without servers. In code mode a tool is a function in programs unless the
resolved ``codeMode`` excludes it (or the worker does not have it): such tools are offered to the model as
ordinary tools, called through the hub. With code mode off every tool is an ordinary tool.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import CodeModeSettings
from ..core.limits import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT
from ..core.toolspec import ToolSpec
from ..llm.types import ToolDefinition
from ..typegen import ToolModel, render_signature, render_stubs
from ..typegen.text import summary
from . import prompt
from .artifact_tools import ARTIFACT_TOOLS
from .modules import importable_modules
from .options import AgentOptions
from .running import (
    CANCEL_EXECUTION,
    CANCEL_EXECUTION_DESCRIPTION,
    DEFAULT_WAIT_S,
    EXECUTION_ID_PARAMETER,
    FOLLOW_UP_TOOLS,
    FOLLOW_WAIT_PARAMETER,
    LIST_EXECUTIONS,
    LIST_EXECUTIONS_DESCRIPTION,
    MAX_WAIT_S,
    WAIT_EXECUTION,
    WAIT_EXECUTION_DESCRIPTION,
    WAIT_PARAMETER,
)

__all__ = ["AgentToolset", "build_toolset", "compact_listing", "follow_up_definitions"]

_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_NAME = 64  # what OpenAI and Anthropic accept: ^[a-zA-Z0-9_-]{1,64}$
_SUMMARY_CHARS = 160


@dataclass(frozen=True)
class AgentToolset:
    """The tools of one request: their definitions as sent, and how to run each name the model may call."""

    code_mode: bool
    system: str
    """The system prompt."""
    definitions: tuple[ToolDefinition, ...]
    """Sent with every model request, ``execute_python`` first in code mode."""
    classic: Mapping[str, ToolSpec] = field(default_factory=dict)
    """Ordinary tools by the name the model calls them: the MCP tool each one is."""
    code_tools: tuple[ToolModel, ...] = ()
    """The tools that are functions in programs (code mode)."""
    compact: bool = False
    """True when ``execute_python`` lists the tools compactly instead of as stubs."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds an execution may run unless the model asks for another limit."""
    max_timeout: float = MAX_TIMEOUT
    """The longest limit the model may ask for (``codeMode.maxTimeout``)."""
    offers_code: bool = False
    """``execute_python`` is offered: code mode, or classic mode with ``codeMode.offerInClassic``."""
    artifact_tools: bool = False
    """``store_artifact``, ``list_artifacts`` and ``get_artifact`` are offered as ordinary tools."""
    selected: tuple[str, ...] = ()
    """With a compact listing: the tools picked for the request (function names), described as full stubs."""

    @property
    def execute_python(self) -> ToolDefinition | None:
        """The ``execute_python`` definition (None when it is not offered)."""
        return self.definitions[0] if self.offers_code else None

    def offered(self, *, ran_on: bool) -> tuple[ToolDefinition, ...]:
        """The definitions of a request.

        ``ran_on``: a program of the conversation ran on past its wait, so wait_execution,
        cancel_execution and list_executions are offered too (from then on).
        """
        return self.definitions + follow_up_definitions() if ran_on and self.offers_code else self.definitions


def build_toolset(
    models: Sequence[ToolModel],
    specs: Sequence[ToolSpec],
    settings: CodeModeSettings,
    options: AgentOptions,
    *,
    llm: bool = False,
    selected: Collection[str] | None = None,
) -> AgentToolset:
    """Decide what the model is offered.

    Args:
        models: the tools the worker has as functions (``Toolbox.models_for(settings)``).
        specs: every tool of every ready server (``ToolHub.tool_specs()``).
        settings: the resolved ``codeMode`` for the model.
        options: budgets and the listing style.
        llm: whether programs can call ``llm()`` (the executor has a model to answer it).
        selected: function names picked for the request (``agent/selection.py``): when the listing is
            compact (``auto``), these tools are described as full stubs and the rest compactly.
    """
    if not settings.enabled and not settings.offer_in_classic:
        classic = _classic_tools(specs, reserved=set())
        definitions = tuple(_classic_definition(name, spec) for name, spec in classic.items())
        return AgentToolset(False, _system(prompt.CLASSIC_SYSTEM_PROMPT, options), definitions, classic)
    in_code = [m for m in models if not settings.is_excluded(m.spec.server, m.spec.name)]
    in_code_keys = {(m.spec.server, m.spec.name) for m in in_code}
    if not settings.enabled:
        # Classic mode, with execute_python offered beside every tool (seed 004): each tool is both an
        # ordinary tool and a function in programs, and the artifacts are ordinary tools too.
        classic = _classic_tools(specs, reserved={prompt.EXECUTE_PYTHON, *FOLLOW_UP_TOOLS, *ARTIFACT_TOOLS})
        in_code_keys = set()
    else:
        classic = _classic_tools(
            [s for s in specs if (s.server, s.name) not in in_code_keys],
            reserved={prompt.EXECUTE_PYTHON, *FOLLOW_UP_TOOLS},
        )
    listing, compact = _listing(in_code, options)
    picked: list[ToolModel] = []
    selected_listing = ""
    if compact and selected and options.listing == "auto":
        picked = [m for m in in_code if m.function_name in selected]
        rest = [m for m in in_code if m.function_name not in selected]
        selected_listing = render_stubs(picked, input_types=False) if picked else ""
        listing = compact_listing(rest) if rest else ""
    description = prompt.execute_python_description(
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        budget=options.result_budget,
        timeout=settings.timeout,
        max_timeout=settings.max_timeout,
        listing=listing,
        compact=compact,
        tool_count=len(in_code),
        llm=llm,
        network=settings.sandbox.network,
        excluded=[name for name, spec in classic.items() if (spec.server, spec.name) not in in_code_keys]
        if settings.enabled
        else [],
        modules=importable_modules(settings.preload),
        selected_listing=selected_listing,
        selected_count=len(picked),
    )
    execute = ToolDefinition(prompt.EXECUTE_PYTHON, description, _execute_python_parameters(settings))
    definitions = (execute, *(_classic_definition(name, spec) for name, spec in classic.items()))
    if not settings.enabled:
        definitions += tuple(ToolDefinition(name, *ARTIFACT_TOOLS[name]) for name in ARTIFACT_TOOLS)
    system = prompt.CODE_MODE_SYSTEM_PROMPT if settings.enabled else prompt.CLASSIC_WITH_CODE_SYSTEM_PROMPT
    return AgentToolset(
        settings.enabled,
        _system(system, options),
        definitions,
        classic,
        tuple(in_code),
        compact,
        settings.timeout,
        settings.max_timeout,
        offers_code=True,
        artifact_tools=not settings.enabled,
        selected=tuple(m.function_name for m in picked),
    )


def _system(base: str, options: AgentOptions) -> str:
    return f"{base}\n\n{options.instructions.strip()}" if options.instructions else base


def _listing(models: Sequence[ToolModel], options: AgentOptions) -> tuple[str, bool]:
    """The stubs, or the compact listing when asked for or when the stubs are too large."""
    if not models:
        return "", False
    if options.listing == "compact":
        return compact_listing(models), True
    stubs = render_stubs(models, input_types=False)
    too_large = len(stubs) > options.max_stub_chars or len(models) > options.max_stub_tools
    if options.listing == "auto" and too_large:
        return compact_listing(models), True
    return stubs, False


def compact_listing(models: Sequence[ToolModel]) -> str:
    """One line per tool under its server: the signature and the first sentence of its description."""
    lines: list[str] = []
    for server in dict.fromkeys(m.spec.server for m in models):
        lines.append(f"{server}:")
        for model in models:
            if model.spec.server != server:
                continue
            first = summary(model.spec.description or model.spec.title or "", _SUMMARY_CHARS)
            lines.append(f"  {render_signature(model)}" + (f"  # {first}" if first else ""))
    return "\n".join(lines)


def _execute_python_parameters(settings: CodeModeSettings) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": prompt.CODE_PARAMETER},
            "timeout": {
                "type": "integer",
                "minimum": math.ceil(MIN_TIMEOUT),
                "maximum": math.floor(settings.max_timeout),
                "description": prompt.timeout_parameter(settings.timeout, settings.max_timeout),
            },
            "wait_s": _wait_parameter(),
        },
        "required": ["code"],
    }


def _wait_parameter(words: str = WAIT_PARAMETER) -> dict[str, Any]:
    description = words.format(max=MAX_WAIT_S, default=DEFAULT_WAIT_S)
    return {"type": "number", "minimum": 0, "maximum": MAX_WAIT_S, "description": description}


def follow_up_definitions() -> tuple[ToolDefinition, ...]:
    """wait_execution, cancel_execution and list_executions, as the model is offered them."""
    execution_id = {"type": "string", "description": EXECUTION_ID_PARAMETER}

    def taking(properties: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": properties, "required": ["execution_id"]}

    return (
        ToolDefinition(
            WAIT_EXECUTION,
            WAIT_EXECUTION_DESCRIPTION,
            taking({"execution_id": execution_id, "wait_s": _wait_parameter(FOLLOW_WAIT_PARAMETER)}),
        ),
        ToolDefinition(
            CANCEL_EXECUTION, CANCEL_EXECUTION_DESCRIPTION, taking({"execution_id": execution_id})
        ),
        ToolDefinition(LIST_EXECUTIONS, LIST_EXECUTIONS_DESCRIPTION, {"type": "object", "properties": {}}),
    )


def _classic_tools(specs: Sequence[ToolSpec], *, reserved: set[str]) -> dict[str, ToolSpec]:
    """Each tool under a name providers accept; a name taken twice gets its server as a prefix."""
    out: dict[str, ToolSpec] = {}
    taken = set(reserved)
    for spec in specs:
        name = _safe_name(spec.name)
        if name in taken:
            name = _safe_name(f"{spec.server}__{spec.name}")
        base, n = name, 2
        while name in taken:
            suffix = f"_{n}"
            name = base[: _MAX_NAME - len(suffix)] + suffix
            n += 1
        taken.add(name)
        out[name] = spec
    return out


def _safe_name(name: str) -> str:
    return (_NAME_UNSAFE.sub("_", name) or "tool")[:_MAX_NAME]


def _classic_definition(name: str, spec: ToolSpec) -> ToolDefinition:
    description = spec.description.strip() or (spec.title or "").strip() or spec.name
    return ToolDefinition(name, description, spec.input_schema)
