"""A hub call whose progress reaches the caller's ``on_progress`` on the caller's own thread or loop.

The hub reports progress on its loop thread; a notebook's tool function (``Toolbox``) wants the program's
callback to run where the program runs, between its statements, as a worker's functions do.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..approvals import ApprovalCheck
from ..core.progress import ProgressHandler, ToolProgress, loop_reporter, wait_reporting

if TYPE_CHECKING:
    from .hub import ToolHub

__all__ = ["acall_reporting", "call_reporting"]


def call_reporting(
    hub: ToolHub,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    handler: ProgressHandler | None,
    approval: ApprovalCheck | None = None,
) -> dict[str, Any]:
    """``hub.call``, with ``handler`` run on this thread for each progress notification.

    ``approval``: who originated the call (``hub.acall``'s).
    """
    if handler is None or hub.loop_thread.in_loop_thread():
        # On the hub's own thread it refuses, saying why.
        return hub.call(server, tool, arguments, approval=approval)

    def start(report: Any) -> Any:
        def progress(value: float, total: float | None, message: str | None) -> None:
            report(ToolProgress(value, total, message))

        return hub.loop_thread.submit(
            hub.acall(server, tool, arguments, progress=progress, approval=approval)
        )

    result: dict[str, Any] = wait_reporting(tool, start, handler)
    return result


async def acall_reporting(
    hub: ToolHub,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    handler: ProgressHandler | None,
    approval: ApprovalCheck | None = None,
) -> dict[str, Any]:
    """``hub.acall``, with ``handler`` run on the awaiting loop for each progress notification."""
    if handler is None:
        return await hub.acall(server, tool, arguments, approval=approval)
    report = loop_reporter(asyncio.get_running_loop(), tool, handler)

    def progress(value: float, total: float | None, message: str | None) -> None:
        report(ToolProgress(value, total, message))

    return await hub.acall(server, tool, arguments, progress=progress, approval=approval)
