"""A program's value (its envelope, ``worker/values.py``) as text: the one reading every front door uses.

``codemode run`` prints it (``executor.result.format_result_text``), the agent's model and ``codemode
serve``'s client read it (``agent.feedback``), and a notebook's ``text/plain`` shows it (``views.display``).
A table reads as pandas prints a DataFrame everywhere: a header, the column names, the rows with their
index, and how many rows are left out; a size alone (``3 rows``) would say nothing of what the program
returned. A reader with a budget (the notebook) gets a preview: the first rows and columns, each cell
clipped, within its characters. A reader without one gets every row the worker sent, each cell whole:
``codemode run`` prints it all, as it does any value; the agent and serve, which cut the text to their own
budget (keeping the whole as an artifact), pass that budget as ``limit`` and a table's rows stop once past
it, the rest counted. Whatever its shape, a table's text stays within a small multiple of its envelope
(see ``_widths``): one long cell over many short rows pads none of them past ``WIDE``, nor by more than
the cells' own characters. Standard library only; in ``executor/`` so that every front door (the CLI,
serve, the kernel's views, the agent) may import it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_CELL", "MAX_COLUMNS", "MAX_ROWS", "WIDE", "table_text", "value_text"]

MAX_ROWS = 10
MAX_COLUMNS = 8
MAX_CELL = 24
"""A preview's bounds: rows, columns, and characters of a cell."""

WIDE = 200
"""The most characters a column is padded to. A longer cell is shown whole, and the rest of its line moves
right; the other cells of its column are not padded to it."""

_PADDING_FLOOR = 20_000
"""Padding a table's text may always have; beyond it, at most as much as the cells' own characters."""


def table_text(envelope: Mapping[str, Any], budget: int | None = None, *, limit: int | None = None) -> str:
    """``table, 3 rows × 2 columns`` then the rows, each column right-aligned under its name.

    ``budget``: the characters the reader has; the preview then shows at most ``MAX_ROWS`` rows,
    ``MAX_COLUMNS`` columns and ``MAX_CELL`` characters of a cell, and as many of those rows as fit (never
    a row cut in half). None: every row and column the envelope carries, each cell whole; ``limit`` then
    stops the rows once the text is past that many characters (the agent's and serve's result budget),
    so nothing they would cut is built. Either way the text stays proportional to the envelope: a column
    is padded to ``WIDE`` characters at most, and less when the padding would outgrow the cells.
    """
    columns = [str(column) for column in envelope.get("columns") or []]
    rows: Sequence[Sequence[Any]] = envelope.get("rows") or []
    count = envelope.get("row_count", len(rows))
    shown_columns = columns[:MAX_COLUMNS] if budget is not None else columns
    head = f"table, {count} row{'s' * (count != 1)} × {len(columns)} column{'s' * (len(columns) != 1)}"
    if len(columns) > len(shown_columns):
        head += f" (the first {len(shown_columns)} shown)"
    if not shown_columns:
        return head
    if budget is not None:
        names = [_clip(name, MAX_CELL) for name in shown_columns]
        cells = [[_cell(cell, MAX_CELL) for cell in row[: len(shown_columns)]] for row in rows[:MAX_ROWS]]
        shown = len(cells)
        text = _grid(head, names, cells, count)
        while len(text) > budget and shown > 0:
            shown -= 1
            text = _grid(head, names, cells[:shown], count)
        return text
    return _grid(head, columns, _cells_within(rows, limit), count, limit)


def _cells_within(rows: Sequence[Sequence[Any]], limit: int | None) -> list[list[str]]:
    """Every row's cells as text, whole; with a ``limit``, up to the first row whose text passes it.

    A row is counted at its cells and gaps alone, never more than its line will take, so that the lines
    (``_grid``) pass the limit before these rows run out.
    """
    cells = []
    size = 0
    for row in rows:
        cells.append([_cell(cell, None) for cell in row])
        if limit is not None:
            size += sum(map(len, cells[-1])) + 2 * len(row) + 1
            if size > limit:
                break
    return cells


def _grid(head: str, names: list[str], cells: list[list[str]], count: Any, limit: int | None = None) -> str:
    """The header, the column names and ``cells`` aligned under them, and how many rows are left out.

    ``limit``: the rows stop once the text is past that many characters (after the first row).
    """
    grid = [["", *names], *([str(i), *row[: len(names)]] for i, row in enumerate(cells))]
    widths = _widths(grid)
    lines = [head]
    size = len(head)
    for line in grid:
        lines.append("  ".join(map(str.rjust, line, widths)))
        size += len(lines[-1]) + 1
        if limit is not None and size > limit and len(lines) > 2:
            break
    shown = len(lines) - 2
    left = count - shown if isinstance(count, int) else 0
    if left > 0:
        lines.append(f"… {left:,} more row{'s' * (left != 1)}")
    return "\n".join(lines)


def _widths(grid: list[list[str]]) -> list[int]:
    """Each column's width: its widest cell, but at most ``WIDE``, and at most one shared bound.

    The bound is the widest at which the table's padding stays within its cells' own characters (or
    within ``_PADDING_FLOOR``, so that a small table aligns whole). Padded to its widest cell, a 900 KB
    cell over 20,000 empty rows (within the worker's million bytes) came to 18 GB; padded to ``WIDE``, a
    cell of 200 characters over 150,000 rows of ``0`` would still be some forty times the envelope. With
    both bounds the text is at most twice its unpadded reading (or that and ``_PADDING_FLOOR``).
    """
    lengths = [Counter(min(len(line[i]), WIDE) for line in grid) for i in range(len(grid[0]))]
    tops = [max(column) for column in lengths]
    allowed = max(sum(len(cell) for line in grid for cell in line), _PADDING_FLOOR)

    def padding(cap: int) -> int:
        total = 0
        for column, top in zip(lengths, tops, strict=True):
            width = min(top, cap)
            total += sum(n * (width - length) for length, n in column.items() if length < width)
        return total

    low, high = 0, max(tops)  # padding(low) fits (no padding at all); find the widest cap that does
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if padding(middle) <= allowed else (low, middle - 1)
    return [min(top, low) for top in tops]


def _cell(value: Any, clip: int | None) -> str:
    """A cell as Python shows it: text as is, None and booleans by name, lists and dicts as JSON."""
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool | int | float):
        text = repr(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return _clip(text.replace("\n", " "), clip)


def _clip(text: str, clip: int | None) -> str:
    return text if clip is None or len(text) <= clip else text[: clip - 1] + "…"


def value_text(
    envelope: Mapping[str, Any], budget: int | None = None, *, quoted: bool = False, limit: int | None = None
) -> str:
    """``envelope`` as text: JSON on one line, text as is, a table as its rows, other kinds described.

    ``budget``: the characters the reader has; a table shows the rows that fit (see ``table_text``),
    anything else is cut there and ends in ``...``. None: the whole of what the worker sent, for a reader
    that cuts to its own budget (the agent keeps the whole as an artifact when it does). ``limit``, for
    such a reader: its budget, past which a table's rows stop (the rest counted); other text is the
    envelope's own and stays whole. ``quoted``: text as Python writes a string (``'Oslo'``), as a
    notebook shows a value, rather than as is.
    """
    kind = envelope.get("kind")
    if kind == "table":
        return table_text(envelope, budget, limit=limit)
    if kind == "json":
        data = envelope.get("data")
        text = "" if data is None else json.dumps(data, ensure_ascii=False, default=str)
    elif kind == "text":
        text = str(envelope.get("text", ""))
        text = repr(text) if quoted else text
    elif kind == "repr":
        text = str(envelope.get("repr", ""))
    else:
        text = _described(kind, envelope)
    return text if budget is None or len(text) <= budget else text[:budget] + "..."


def _described(kind: Any, envelope: Mapping[str, Any]) -> str:
    """What cannot be shown as text: ``<image image/png>``, ``<bytes, 1,024 bytes>``, ``<kind>``."""
    if kind == "image":
        return f"<image {envelope.get('mime_type', '')}>"
    size = envelope.get("size")
    if kind == "bytes" and isinstance(size, int):
        return f"<bytes, {size:,} bytes>"
    return f"<{kind}>"
