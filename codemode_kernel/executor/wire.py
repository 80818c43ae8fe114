"""The kernel's end of a worker's channel: frames read on the event loop.

The frame format itself is the worker package's (``worker.protocol``), which imports no asyncio: a
worker process reads with a blocking socket and has no event loop to load.
"""

from __future__ import annotations

import asyncio

from ..worker.protocol import (
    HEADER_BYTES,
    ProtocolError,
    WorkerFrame,
    body_length,
    check_worker_frame,
    decode_body,
)

__all__ = ["read_frame_async"]


async def read_frame_async(reader: asyncio.StreamReader) -> WorkerFrame | None:
    """The next frame from a worker, checked (``check_worker_frame``), or None on a clean close.

    Raises:
        ProtocolError: bytes that are not a frame a worker sends.
    """
    try:
        header = await reader.readexactly(HEADER_BYTES)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError("channel closed in the middle of a frame header") from None
    try:
        body = await reader.readexactly(body_length(header))
    except asyncio.IncompleteReadError:
        raise ProtocolError("channel closed in the middle of a frame") from None
    return check_worker_frame(decode_body(body))
