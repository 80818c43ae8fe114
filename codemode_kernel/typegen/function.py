"""A tool model as a Python function: the one factory behind ``Toolbox.tools`` and a worker's ``tools``.

The kernel's functions send a call through the hub, a worker's through its channel to the kernel;
everything else is the same and lives here: binding Python arguments to the wire arguments, decoding the
wire result (a tool error raises ``ToolError``), and the function's face (name, qualified name, module,
docstring, ``__signature__``) that ``help()``, ``?`` and completion read. Standard library only: a worker
imports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..core.progress import ProgressHandler, check_handler
from ..core.results import decode_result
from .model import ToolModel
from .signature import bind_arguments, make_docstring, make_signature

__all__ = ["PROGRESS_KEYWORD", "AsyncWireCall", "WireCall", "make_async_tool_function", "make_tool_function"]

WireCall = Callable[[dict[str, Any], ProgressHandler | None], dict[str, Any]]
"""Sends one call's wire arguments to the tool and returns its CallToolResult in wire form; the handler,
when given, is run on the caller's thread for each progress notification (``progress.wait_reporting``)."""

AsyncWireCall = Callable[[dict[str, Any], ProgressHandler | None], Awaitable[dict[str, Any]]]
"""The awaitable form of ``WireCall`` (the handler runs on the caller's event loop)."""

PROGRESS_KEYWORD = "on_progress"
"""The keyword every tool function takes besides the tool's own arguments (unless the tool has a
parameter of that name): a function called with each ``ToolProgress`` of the call."""

_F = TypeVar("_F", bound=Callable[..., Any])


def make_tool_function(model: ToolModel, call: WireCall, *, module: str) -> Callable[..., Any]:
    """The function for ``model``: bind the arguments, ``call`` the tool, return the decoded result.

    ``module`` is the ``__module__`` it reports (where a user would say it lives).
    """
    spec = model.spec

    def tool_function(*args: Any, **kwargs: Any) -> Any:
        handler = _progress_handler(model, kwargs)
        try:
            result = call(bind_arguments(model, args, kwargs), handler)
        except KeyboardInterrupt:
            # Stopped while it waited for the server: the wait's own frames (the hub's loop, threading,
            # futures) mean nothing to the person who pressed stop, and IPython reads the source of each.
            raise KeyboardInterrupt from None
        return decode_result(result, tool=spec.name, server=spec.server, unwrap=spec.wraps_result)

    return _describe(tool_function, model, module)


def make_async_tool_function(
    model: ToolModel, acall: AsyncWireCall, *, module: str
) -> Callable[..., Awaitable[Any]]:
    """The coroutine function for ``model`` (the ``atools`` twin): as ``make_tool_function``, awaited."""
    spec = model.spec

    async def tool_function(*args: Any, **kwargs: Any) -> Any:
        handler = _progress_handler(model, kwargs)
        result = await acall(bind_arguments(model, args, kwargs), handler)
        return decode_result(result, tool=spec.name, server=spec.server, unwrap=spec.wraps_result)

    return _describe(tool_function, model, module)


def _progress_handler(model: ToolModel, kwargs: dict[str, Any]) -> ProgressHandler | None:
    """Take ``on_progress`` out of the keywords, unless the tool has a parameter of that name."""
    if PROGRESS_KEYWORD not in kwargs or any(PROGRESS_KEYWORD in (p.name, p.wire_name) for p in model.params):
        return None
    return check_handler(model.function_name, kwargs.pop(PROGRESS_KEYWORD))


def _describe(function: _F, model: ToolModel, module: str) -> _F:
    """Give a tool function its real name, signature and docstring (for help(), ``?`` and completion)."""
    target: Any = function
    target.__name__ = target.__qualname__ = model.function_name
    target.__module__ = module
    target.__doc__ = make_docstring(model)
    target.__signature__ = make_signature(model)
    return function
