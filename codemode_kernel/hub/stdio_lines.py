"""Lines of a stdio MCP server's stdout, cut from a byte buffer that is scanned once.

The SDK's own reader splits its whole buffer again on every 64 KiB chunk, so a 20 MB result took about 12 s;
here it costs what reading 20 MB costs. A line longer than the limit is not kept: it is counted as it
streams past and reported as ``Oversized``, with its two ends (where its "id" or "method" is).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["EDGE", "Oversized", "read_lines"]

EDGE = 4096
"""Bytes kept from both ends of an oversized line: enough to find its top-level "id" or "method"."""

_CHUNK = 1 << 16


@dataclass
class Oversized:
    """A line longer than the limit: its length and its two ends (to find which request it answers)."""

    size: int = 0
    head: bytes = b""
    tail: bytes = b""

    def add(self, data: bytes | bytearray) -> None:
        """Count more bytes of the line, keeping the first and the last ``EDGE`` of them."""
        if len(self.head) < EDGE:
            self.head += data[: EDGE - len(self.head)]
        self.tail = (self.tail + data[-EDGE:])[-EDGE:]
        self.size += len(data)


async def read_lines(stream: ByteReceiveStream, limit: int) -> AsyncGenerator[bytes | Oversized, None]:
    """Yield each line of ``stream`` (its line break removed), or ``Oversized`` for one longer than ``limit``.

    Each byte is scanned for a newline once, and at most ``limit`` bytes (plus one chunk) are held. A last
    line without a newline is dropped at the end of the stream, as the SDK's reader does.
    """
    buffer = bytearray()
    skipping: Oversized | None = None
    while True:
        try:
            chunk = await stream.receive(_CHUNK)
        except anyio.EndOfStream:
            return
        start = 0
        if skipping is not None:
            newline = chunk.find(b"\n")
            if newline < 0:
                skipping.add(chunk)
                continue
            skipping.add(chunk[:newline])
            yield skipping
            skipping = None
            start = newline + 1
        scan = len(buffer)
        buffer += memoryview(chunk)[start:]
        begin = 0
        while (newline := buffer.find(b"\n", scan)) >= 0:
            if newline - begin > limit:
                big = Oversized()
                big.add(buffer[begin:newline])
                yield big
            else:
                end = newline - 1 if newline > begin and buffer[newline - 1] == 0x0D else newline  # \r\n
                yield bytes(buffer[begin:end])
            begin = scan = newline + 1
        del buffer[:begin]
        if len(buffer) > limit:
            skipping = Oversized()
            skipping.add(buffer)
            buffer = bytearray()
