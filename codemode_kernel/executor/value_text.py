"""A program's value (its envelope, ``worker/values.py``) as text: the one reading every front door uses.

``codemode run`` prints it (``executor.result.format_result_text``), the agent's model and ``codemode
serve``'s client read it (``agent.feedback``), and a notebook's ``text/plain`` shows it (``views.display``).
A table reads as pandas prints a DataFrame everywhere: a header, the column names, the rows with their
index, and how many rows are left out; a size alone (``3 rows``) would say nothing of what the program
returned. A reader with a budget (the notebook) gets a preview: the first rows and columns, each cell
clipped, within its characters. A reader without one gets every row the worker sent, each cell whole: the
agent and serve cut the whole text to their own budget and keep it as an artifact, and ``codemode run``
prints it all, as it does any value. Standard library only; in ``executor/`` so that every front door
(the CLI, serve, the kernel's views, the agent) may import it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_CELL", "MAX_COLUMNS", "MAX_ROWS", "table_text", "value_text"]

MAX_ROWS = 10
MAX_COLUMNS = 8
MAX_CELL = 24
"""A preview's bounds: rows, columns, and characters of a cell."""


def table_text(envelope: Mapping[str, Any], budget: int | None = None) -> str:
    """``table, 3 rows × 2 columns`` then the rows, each column right-aligned under its name.

    ``budget``: the characters the reader has; the preview then shows at most ``MAX_ROWS`` rows,
    ``MAX_COLUMNS`` columns and ``MAX_CELL`` characters of a cell, and as many of those rows as fit (never
    a row cut in half). None: every row and column the envelope carries, each cell whole.
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
    clip = MAX_CELL if budget is not None else None
    kept = rows[:MAX_ROWS] if budget is not None else rows
    cells = [[_cell(cell, clip) for cell in row[: len(shown_columns)]] for row in kept]
    names = [_clip(name, clip) for name in shown_columns]
    shown = len(cells)
    text = _grid(head, names, cells, count)
    while budget is not None and len(text) > budget and shown > 0:
        shown -= 1
        text = _grid(head, names, cells[:shown], count)
    return text


def _grid(head: str, names: list[str], cells: list[list[str]], count: Any) -> str:
    """The header, the column names and ``cells`` aligned under them, and how many rows are left out."""
    grid = [["", *names], *([str(i), *row] for i, row in enumerate(cells))]
    widths = [max(len(line[i]) for line in grid) for i in range(len(grid[0]))]
    lines = [head, *("  ".join(map(str.rjust, line, widths)) for line in grid)]
    left = count - len(cells) if isinstance(count, int) else 0
    if left > 0:
        lines.append(f"… {left:,} more row{'s' * (left != 1)}")
    return "\n".join(lines)


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


def value_text(envelope: Mapping[str, Any], budget: int | None = None, *, quoted: bool = False) -> str:
    """``envelope`` as text: JSON on one line, text as is, a table as its rows, other kinds described.

    ``budget``: the characters the reader has; a table shows the rows that fit (see ``table_text``),
    anything else is cut there and ends in ``...``. None: the whole of what the worker sent, for a reader
    that cuts to its own budget (the agent keeps the whole as an artifact when it does). ``quoted``: text
    as Python writes a string (``'Oslo'``), as a notebook shows a value, rather than as is.
    """
    kind = envelope.get("kind")
    if kind == "table":
        return table_text(envelope, budget)
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
