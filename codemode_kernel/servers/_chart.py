"""A tiny bar chart as PNG bytes, in pure Python (zlib and struct), for the sqlite demo's image tool.

The demo servers must run from a bare install, so no matplotlib or Pillow: a bar chart is rectangles,
and a PNG is a signature plus three zlib-compressed, CRC-checked chunks.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

__all__ = ["bar_chart_png", "encode_png"]

Color = tuple[int, int, int]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_BACKGROUND: Color = (255, 255, 255)
_POSITIVE: Color = (70, 130, 180)
_NEGATIVE: Color = (205, 92, 92)
_AXIS: Color = (80, 80, 80)
_MARGIN = 8


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data)
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_png(pixels: Sequence[bytes | bytearray], width: int) -> bytes:
    """Encode rows of packed 8-bit RGB pixels (3 bytes per pixel) as a PNG file.

    Args:
        pixels: One ``bytes`` of length ``3 * width`` per image row, top row first.
        width: The image width in pixels.

    Raises:
        ValueError: A row does not hold exactly ``width`` pixels.
    """
    if any(len(row) != 3 * width for row in pixels):
        raise ValueError(f"every row must hold {width} RGB pixels ({3 * width} bytes)")
    # Bit depth 8, colour type 2 (truecolour), default compression, filter and no interlace.
    header = struct.pack(">IIBBBBB", width, len(pixels), 8, 2, 0, 0, 0)
    # Each scanline starts with its filter type; 0 ("None") keeps the encoder trivial.
    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    return (
        _PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )


def bar_chart_png(values: Sequence[float], width: int, height: int) -> bytes:
    """Draw one bar per value, left to right, and return the chart as PNG bytes.

    The vertical scale always includes zero, so bar heights compare honestly; a grey line marks zero
    and negative values hang below it in red. There is no text: the caller knows what it plotted.

    Args:
        values: The bar heights, in the order they should appear.
        width: Image width in pixels; must leave at least one pixel per bar.
        height: Image height in pixels.

    Raises:
        ValueError: No values, or too many for the width.
    """
    plot_width = width - 2 * _MARGIN
    plot_height = height - 2 * _MARGIN
    if not values:
        raise ValueError("nothing to plot: no values")
    if plot_width < len(values) or plot_height < 2:
        raise ValueError(f"a {width}x{height} image is too small for {len(values)} bars")

    top = max(0.0, *values)
    bottom = min(0.0, *values)
    span = (top - bottom) or 1.0

    def y_of(value: float) -> int:
        return _MARGIN + round((top - value) / span * (plot_height - 1))

    zero_y = y_of(0.0)
    slot = plot_width / len(values)
    gap = 1 if slot >= 3 else 0
    canvas = [bytearray(bytes(_BACKGROUND) * width) for _ in range(height)]

    for index, value in enumerate(values):
        left = _MARGIN + int(index * slot) + gap
        right = _MARGIN + int((index + 1) * slot) - gap
        first, last = sorted((y_of(value), zero_y))
        colour = bytes(_POSITIVE if value >= 0 else _NEGATIVE)
        for y in range(first, last + 1):
            canvas[y][3 * left : 3 * right] = colour * (right - left)

    canvas[zero_y][3 * _MARGIN : 3 * (width - _MARGIN)] = bytes(_AXIS) * plot_width
    return encode_png(canvas, width)
