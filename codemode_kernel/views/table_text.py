"""A table value as plain text, as pandas prints a DataFrame: a header, the first rows with their index.

A console, nbval and a saved notebook's ``text/plain`` see only this; a size alone (``3 rows``) would say
nothing of what the program returned. Bounded: the first rows and columns, each cell clipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["table_text"]

MAX_ROWS = 10
MAX_COLUMNS = 8
MAX_CELL = 24


def table_text(envelope: Mapping[str, Any]) -> str:
    """``table, 3 rows × 2 columns`` then the first rows, each column right-aligned under its name."""
    columns = [str(column) for column in envelope.get("columns") or []]
    rows: Sequence[Sequence[Any]] = envelope.get("rows") or []
    count = envelope.get("row_count", len(rows))
    shown_columns = columns[:MAX_COLUMNS]
    head = f"table, {count} row{'s' * (count != 1)} × {len(columns)} column{'s' * (len(columns) != 1)}"
    if len(columns) > len(shown_columns):
        head += f" (the first {len(shown_columns)} shown)"
    if not shown_columns:
        return head
    shown = [[_cell(cell) for cell in row[: len(shown_columns)]] for row in rows[:MAX_ROWS]]
    grid = [["", *map(_clip, shown_columns)], *([str(i), *row] for i, row in enumerate(shown))]
    widths = [max(len(line[i]) for line in grid) for i in range(len(grid[0]))]
    lines = [head, *("  ".join(map(str.rjust, line, widths)) for line in grid)]
    if isinstance(count, int) and count > len(shown):
        lines.append(f"… {count - len(shown)} more row{'s' * (count - len(shown) != 1)}")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    """A cell as Python shows it: text as is, None and booleans by name, lists and dicts as JSON."""
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool | int | float):
        text = repr(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return _clip(text.replace("\n", " "))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"
