"""Every word the agent says to the model, in one place to read and review as a whole.

The system prompts stay short: what the model needs to know about a tool lives in that tool's
description, where providers expect it. ``execute_python_description`` assembles the description of the
one code-mode tool from the parts below; ``toolset.py`` decides which parts apply (stubs or the compact
listing, ``llm()`` only when the executor can answer it, the network rule from the sandbox settings).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.limits import MAX_TIMEOUT, TIMEOUT_RANGE, timeout_range
from ..core.results import DICT_METHODS
from .running import DEFAULT_WAIT_S

__all__ = [
    "CANCELLED_CALL",
    "CLASSIC_SYSTEM_PROMPT",
    "CLASSIC_WITH_CODE_SYSTEM_PROMPT",
    "CODE_MODE_SYSTEM_PROMPT",
    "CODE_PARAMETER",
    "EXECUTE_PYTHON",
    "INTERNAL_MESSAGE",
    "NOT_RUN_AFTER_COMPLETE",
    "SELECTION_SYSTEM_PROMPT",
    "TIMEOUT_PARAMETER",
    "execute_python_description",
    "max_steps_message",
    "selection_request",
    "timeout_message",
    "timeout_parameter",
]

NOT_RUN_AFTER_COMPLETE = "[not run: an earlier program gave the final answer with complete()]"

EXECUTE_PYTHON = "execute_python"
"""The name of the code-mode tool (reserved: no MCP tool may take it)."""

CODE_MODE_SYSTEM_PROMPT = (
    "You answer the user's request by running Python programs with the execute_python tool; the MCP tools "
    "are functions inside those programs. Prefer one program that does the whole job (loops, several tool "
    "calls, filtering) and prints only what you need to read. When you have what you need, answer the user "
    "directly in Markdown, without calling a tool. Never invent results you did not see."
)

CLASSIC_WITH_CODE_SYSTEM_PROMPT = (
    "You answer the user's request with the tools offered. Call them as needed; when a task needs loops, "
    "many calls or processing data, run one Python program with execute_python instead, in which the same "
    "tools are functions. When you have what you need, answer the user directly in Markdown, without "
    "calling a tool. Never invent results you did not see."
)

CLASSIC_SYSTEM_PROMPT = (
    "You answer the user's request with the tools offered. Call them as needed; when you have what you "
    "need, answer the user directly in Markdown, without calling a tool. Never invent results you did not "
    "see."
)

_INTRO = (
    "Run a Python {python} program in a sandboxed worker process; you get back what it printed, the value "
    "of its last expression, and its error if it raised."
)

_RULES = (
    "One complete program per call, doing as much of the task as it can: loops, conditions and many tool "
    "calls cost one call of this tool. Variables, imports and functions are gone when it ends (artifacts "
    "stay).",
    "The tools listed below are ordinary synchronous functions, already in scope (no import). JSON results "
    "are dicts whose fields are also attributes (r.temperature), except a field named like a dict method "
    f"({', '.join(DICT_METHODS)}), a keyword, a name starting with __ or not a plain identifier: read "
    'those as r["name"] (the declarations mark them). A tool that fails raises ToolError, bad arguments '
    "raise ToolArgumentError naming the field.",
    "Print what you need to see, and the last expression is returned as the value. Print summaries, not raw "
    "data: what comes back is cut to about {budget} characters.",
    "parallel([lambda c=c: f(c) for c in items]) runs calls concurrently and returns results in order (a "
    "failed call's slot holds its exception); top-level await works, with async twins in atools.",
    "search_tools(query) finds tools by keyword; tool_schema(name) gives a tool's signature, docstring and "
    "JSON Schemas.",
    "store_artifact(data, name=...) keeps data beyond the program and returns its id; "
    "get_artifact(id_or_name) and list_artifacts() read it back in a later program. Store large data "
    "instead of printing it.",
    "complete(answer, **data) ends the program with the final answer for the user (Markdown) and data "
    "beside it; your turn ends there, so call it only when the program has everything.",
)

_LLM_RULE = (
    "llm(prompt) -> str and llm_json(prompt, schema=None, strict=True) ask a language model from inside the "
    "program (to summarise or classify text you should not read whole); llm_json(..., strict=False) returns "
    "the raw text instead of raising when the answer is not JSON."
)

_ERROR_RULE = (
    "Errors come back with the line number in your program; fix the program and call again. The program is "
    'stopped after {timeout:g} seconds unless you pass a longer "timeout" ({range}).'
)

_LONG_RULE = (
    "A program still running after wait_s seconds (default {wait:g}) runs on, and the answer shows what it "
    "printed so far and its execution_id: call wait_execution for the rest and its result, or "
    "cancel_execution to stop it. In a long program, notify(message, **data) reports progress: a note ends "
    "the wait, so you read it at once."
)

_MODULES_RULE = "Besides the standard library, these modules can be imported: {names}."

_NO_NETWORK_RULE = "The program has no network access: reach the outside world through the tools."

_EXCLUDED_RULE = "These tools are not functions in programs; call them as separate tools: {names}."

_STUBS_HEADER = "The tools, as Python declarations (the bodies run in the kernel):"

_COMPACT_HEADER = (
    "{count} tools, by server: name(parameters) -> result type, and the first sentences of the docstring. "
    'Before using a tool, call tool_schema("name") in a program (print it) to see its parameters, result '
    'type and docs; search_tools("words") finds tools by keyword.'
)

_NO_TOOLS = "No MCP tools are available as functions; the helpers above still are."

_SELECTED_HEADER = (
    "The {count} tools picked for this request, as Python declarations (the bodies run in the kernel):"
)

_REST_HEADER = (
    "The other {count} tools, by server: name(parameters) -> result type, and the first sentences of the "
    'docstring. Before using one of them, call tool_schema("name") in a program (print it) to see its '
    'parameters, result type and docs; search_tools("words") finds tools by keyword.'
)

SELECTION_SYSTEM_PROMPT = (
    "You choose the tools a request needs, before another step writes a program that calls them. Answer "
    "with a JSON array of tool names and nothing else."
)


def selection_request(request: str, listing: str, *, count: int, limit: int) -> str:
    """The one message of a selection request: the user's request, the tools listed compactly, the question.

    ``listing`` is the compact listing (``toolset.compact_listing``) of the ``count`` tools.
    """
    return (
        f"The request:\n{request.strip()}\n\n"
        f"{count} tools, by server: name(parameters) -> result type, and the first sentences of the "
        "docstring:\n"
        f"{listing.rstrip()}\n\n"
        f"Which of these tools could a program answering the request call? Answer with a JSON array of at "
        f'most {limit} tool names as written above, most useful first (e.g. ["name_one", "name_two"]); '
        "[] when it needs none."
    )


def execute_python_description(
    *,
    python: str,
    budget: int,
    timeout: float,
    max_timeout: float = MAX_TIMEOUT,
    listing: str,
    compact: bool,
    tool_count: int,
    llm: bool,
    network: bool,
    excluded: Sequence[str] = (),
    modules: Sequence[str] = (),
    selected_listing: str = "",
    selected_count: int = 0,
) -> str:
    """The description of ``execute_python``: intro, rules, then the tools as stubs or a compact listing.

    ``listing`` is the stub source (``compact=False``) or the grouped one-line-per-tool listing. With a
    pre-selection (``selected_count`` > 0), ``selected_listing`` holds the picked tools' stubs and
    ``listing`` the compact listing of the others.
    """
    rules = [rule.format(budget=budget) for rule in _RULES]
    if llm:
        rules.append(_LLM_RULE)
    rules.append(_ERROR_RULE.format(timeout=timeout, range=timeout_range(max_timeout)))
    rules.append(_LONG_RULE.format(wait=DEFAULT_WAIT_S))
    if modules:
        rules.append(_MODULES_RULE.format(names=", ".join(modules)))
    if not network:
        rules.append(_NO_NETWORK_RULE)
    if excluded:
        rules.append(_EXCLUDED_RULE.format(names=", ".join(excluded)))
    parts = [_INTRO.format(python=python), "Rules:\n" + "\n".join(f"- {rule}" for rule in rules)]
    if tool_count == 0:
        parts.append(_NO_TOOLS)
    elif compact and selected_count:
        parts.append(_SELECTED_HEADER.format(count=selected_count) + "\n" + _python(selected_listing))
        if tool_count > selected_count:
            parts.append(_REST_HEADER.format(count=tool_count - selected_count) + "\n" + listing.rstrip("\n"))
    elif compact:
        parts.append(_COMPACT_HEADER.format(count=tool_count) + "\n" + listing.rstrip("\n"))
    else:
        parts.append(_STUBS_HEADER + "\n" + _python(listing))
    return "\n\n".join(parts)


def _python(source: str) -> str:
    return "```python\n" + source.rstrip("\n") + "\n```"


CODE_PARAMETER = "The whole Python program. Its last expression is returned as the value."
_TIMEOUT_PARAMETER = "Seconds the program may run, {range} (default {timeout})."
TIMEOUT_PARAMETER = _TIMEOUT_PARAMETER.format(range=TIMEOUT_RANGE, timeout="{timeout:g}")
"""The ``timeout`` parameter's description with the default bound, to ``.format(timeout=...)``;
``timeout_parameter`` says a config's own maximum."""


def timeout_parameter(timeout: float, max_timeout: float = MAX_TIMEOUT) -> str:
    """The ``timeout`` parameter's description: the range up to ``max_timeout``, and the default."""
    return _TIMEOUT_PARAMETER.format(range=timeout_range(max_timeout), timeout=f"{timeout:g}")


def max_steps_message(steps: int) -> str:
    """The final message when the model is still calling tools after ``steps`` steps."""
    return (
        f"Stopped after {steps} steps without a final answer: the model kept calling tools. "
        "Run the request again with a higher step limit, or ask for something narrower."
    )


def timeout_message(seconds: float) -> str:
    """The final message when the whole request ran out of time."""
    return (
        f"Stopped: the request did not finish within {seconds:g} s (the model request or execution in "
        "flight was cancelled). Run it again with a longer timeout, or ask for something narrower."
    )


INTERNAL_MESSAGE = (
    "The agent stopped: running the model's program failed on our side, not because of the program "
    "({detail}). Restart the kernel (or the executor) and try again; if it persists, report it."
)

CANCELLED_CALL = "[not run: the request was stopped before this call finished]"
