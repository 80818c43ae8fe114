"""The code-mode agent: a model answers a request by writing programs (or, in classic mode, by tool calls).

``Agent(toolbox, executor, model).run(request)`` is the loop; ``build_toolset`` shows what the model is
offered (the ``execute_python`` description with the typed stubs, or a compact listing, with full stubs
for the tools a model picked for the request when they are many: ``select_tools``); the events report a
run live. docs/agent.md explains the loop, the budgets and the two modes.
"""

from .events import (
    AgentEvent,
    CodeRequested,
    EventCallback,
    ExecutionFinished,
    ExecutionNote,
    ExecutionOutput,
    ExecutionRunning,
    ExecutionStarted,
    ExecutionToolCall,
    FinalAnswer,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    ToolsSelected,
)
from .loop import Agent
from .options import AgentOptions, ListingStyle
from .prompt import EXECUTE_PYTHON
from .record import AgentAction, AgentResult, AgentStatus, AgentStep, ToolSelection
from .selection import ParsedSelection, parse_selection, select_tools
from .toolset import AgentToolset, build_toolset, compact_listing

__all__ = [
    "EXECUTE_PYTHON",
    "Agent",
    "AgentAction",
    "AgentEvent",
    "AgentOptions",
    "AgentResult",
    "AgentStatus",
    "AgentStep",
    "AgentToolset",
    "CodeRequested",
    "EventCallback",
    "ExecutionFinished",
    "ExecutionNote",
    "ExecutionOutput",
    "ExecutionRunning",
    "ExecutionStarted",
    "ExecutionToolCall",
    "FinalAnswer",
    "ListingStyle",
    "ParsedSelection",
    "StepFinished",
    "StepStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolSelection",
    "ToolsSelected",
    "build_toolset",
    "compact_listing",
    "parse_selection",
    "select_tools",
]
