"""A table value's text/plain: the first rows, aligned as pandas prints them, bounded in every direction."""

from __future__ import annotations

from codemode_kernel.views.table_text import MAX_CELL, MAX_COLUMNS, MAX_ROWS, table_text
from codemode_kernel.worker.values import encode_value


def test_records_show_as_rows_under_their_column_names() -> None:
    envelope = encode_value(
        [{"city": "Oslo", "temp": 6.1, "dry": True}, {"city": "Lima", "temp": 17.9, "dry": False}]
    )
    assert table_text(envelope) == (
        "table, 2 rows × 3 columns\n   city  temp    dry\n0  Oslo   6.1   True\n1  Lima  17.9  False"
    )


def test_a_wide_table_of_long_cells_stays_bounded() -> None:
    columns = [f"column_{i}" for i in range(MAX_COLUMNS + 4)]
    rows = [{c: "x" * 200 for c in columns} for _ in range(MAX_ROWS * 3)]
    text = table_text(encode_value(rows))
    lines = text.splitlines()
    assert (
        lines[0] == f"table, {MAX_ROWS * 3} rows × {MAX_COLUMNS + 4} columns (the first {MAX_COLUMNS} shown)"
    )
    assert len(lines) == 1 + 1 + MAX_ROWS + 1 and lines[-1] == f"… {MAX_ROWS * 2} more rows"
    assert "x" * (MAX_CELL - 1) + "…" in lines[2] and "x" * MAX_CELL not in text
    assert max(len(line) for line in lines) < MAX_COLUMNS * (MAX_CELL + 2) + 4


def test_nested_cells_read_as_json_and_a_single_row_as_one() -> None:
    envelope = encode_value([{"name": "a\nb", "tags": ["x", "y"], "meta": {"k": None}}])
    assert table_text(envelope).splitlines() == [
        "table, 1 row × 3 columns",
        "   name        tags         meta",
        '0   a b  ["x", "y"]  {"k": null}',
    ]
