"""Tool pre-selection for large tool sets: the UTCP design's decide/select steps before the code is written.

With more tools than the stubs can describe (``AgentOptions.max_stub_tools`` / ``max_stub_chars``), the
execute_python description falls back to one line per tool, and the model has to look parameters and result
types up with ``tool_schema()`` before it can write a program. Asking a model first which tools the request
needs (one short request with the compact listing; ``codeMode.selectModel`` can name a cheaper model) lets
the description give those few tools as full stubs and keep the rest compact.

The answer is read leniently: a JSON array of names (in a code fence, inside text, or as
``{"tools": [...]}``), else the tool names found in the text. In prose only what reads as a name counts:
a word with ``_``, ``-``, ``.`` or ``/`` in it, or one in backticks or quotes (a tool called ``search`` is
not picked by "search the docs"). More distinct names in prose than ``select_max`` is a recital of the
listing, not a pick. Names that are no tool are ignored; an answer with no tool name, a recital, or a
request that fails, is a fallback to the plain compact listing, recorded and logged, never an error.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..llm.types import ChatModel, Message
from ..typegen import ToolModel
from . import prompt
from .options import AgentOptions
from .record import ToolSelection
from .toolset import compact_listing

__all__ = ["ParsedSelection", "parse_selection", "select_tools"]

log = logging.getLogger(__name__)

_MAX_ANSWER_TOKENS = 1024
_KEPT_ANSWER = 2000
_ARRAY = re.compile(r"\[[^\[\]]*\]", re.DOTALL)
_NAME = r"[A-Za-z_][\w.\-/]*"
_PROSE = re.compile(rf"(?P<q>[`'\"])(?P<quoted>{_NAME})(?P=q)|(?P<bare>{_NAME})")
"""A name in backticks or quotes, or a bare word that may be one."""
_NAME_MARKS = frozenset("_-./")
"""A bare word with one of these reads as a name (``list_commits``, ``web/fetch``), not as English."""
_NO_TOOL = "the answer named no tool of the list"


class ParsedSelection(NamedTuple):
    """What an answer picked: ``picked`` (function names; None when it is no pick, ``problem`` says why)."""

    picked: list[str] | None
    ignored: list[str]
    """Names the answer gave that are no tool."""
    problem: str | None = None


async def select_tools(
    model: ChatModel, request: str, models: Sequence[ToolModel], options: AgentOptions
) -> ToolSelection:
    """Ask ``model`` which of ``models`` the request needs; the record says what it picked, or why not.

    Never raises for the model's sake (a failed request or a garbled answer is a ``fallback``); a
    cancellation goes through.
    """
    selection = ToolSelection(model=model.ref, offered=len(models))
    message = prompt.selection_request(
        request, compact_listing(models), count=len(models), limit=options.select_max
    )
    started = time.monotonic()
    try:
        turn = await model.complete(
            [Message("user", message)], system=prompt.SELECTION_SYSTEM_PROMPT, max_tokens=_MAX_ANSWER_TOKENS
        )
    except Exception as exc:  # a selection is an optimisation: whatever went wrong, the run goes on
        selection.model_ms = _since(started)
        selection.fallback = f"the selection request failed ({type(exc).__name__}: {str(exc)[:300]})"
        log.warning("tool selection by %s: %s; every tool stays in the compact listing", model.ref, exc)
        return selection
    selection.model_ms = _since(started)
    selection.usage = turn.usage
    selection.answer = turn.text[:_KEPT_ANSWER]
    picked, ignored, problem = parse_selection(turn.text, models, limit=options.select_max)
    if picked is None:
        selection.fallback = problem or _NO_TOOL
        log.warning(
            "tool selection by %s: %s (%r); every tool stays in the compact listing",
            model.ref,
            selection.fallback,
            turn.text[:200],
        )
        return selection
    selection.tools = picked[: options.select_max]
    selection.ignored = ignored + picked[options.select_max :]
    return selection


def parse_selection(text: str, models: Sequence[ToolModel], *, limit: int | None = None) -> ParsedSelection:
    """The function names an answer picks (None when it names none), and the names it gave that are no tool.

    A JSON array (``[]`` is a valid "none") wins; without one, the tool names in the text count, if they
    read as names (see the module docstring), and if there are at most ``limit`` of them. A name may be the
    function name, the MCP name, or ``server.tool`` / ``server/tool``.
    """
    known = _known_names(models)
    items = _json_names(text)
    picked: list[str] = []
    ignored: list[str] = []
    if items is not None:
        for item in items:
            name = known.get(item.strip().strip("`'\"()").lower())
            if name is None:
                ignored.append(item)
            elif name not in picked:
                picked.append(name)
        if picked or not items:
            return ParsedSelection(picked, ignored)
    # No usable array: the tool names the text mentions, in order (prose, a bulleted list...).
    found: dict[str, None] = {}
    for match in _PROSE.finditer(text):
        quoted, bare = match.group("quoted"), match.group("bare")
        word = (quoted or bare).rstrip(".-/").lower()
        if word in known and (quoted or not _NAME_MARKS.isdisjoint(word)):
            found[known[word]] = None
    if limit is not None and len(found) > limit:
        return ParsedSelection(
            None,
            ignored,
            f"the answer named {len(found)} tools in prose, more than the {limit} a selection keeps "
            "(it recited the listing?)",
        )
    return ParsedSelection(list(found) or None, ignored, None if found else _NO_TOOL)


def _known_names(models: Sequence[ToolModel]) -> dict[str, str]:
    """Every spelling a model may use for a tool (lowercased), to its function name."""
    known: dict[str, str] = {}
    for model in models:
        for spelling in (
            model.spec.name,
            f"{model.spec.server}.{model.spec.name}",
            f"{model.spec.server}/{model.spec.name}",
            f"{model.spec.server}.{model.function_name}",
            model.function_name,
        ):
            known[spelling.lower()] = model.function_name
    for model in models:  # a function name wins over another tool's MCP name that reads the same
        known[model.function_name.lower()] = model.function_name
    return known


def _json_names(text: str) -> list[str] | None:
    """The strings of the answer's JSON array (whole, fenced, or the first array in the text), or None."""
    candidates = [text.strip()]
    candidates += _ARRAY.findall(text)
    for candidate in candidates:
        value = _loads(candidate)
        if isinstance(value, dict):
            value = value.get("tools", value.get("names"))
        if isinstance(value, list):
            names = [_item_name(item) for item in value]
            return [name for name in names if name]
    return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _item_name(item: Any) -> str:
    if isinstance(item, dict):
        item = item.get("name", "")
    return item if isinstance(item, str) else ""


def _since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 3)
