"""A table value's text: the rows under their column names, aligned as pandas prints them.

A reader with a budget (a notebook's ``text/plain``) gets a preview bounded in every direction; a reader
without one (``codemode run``, the agent, which cut to budgets of their own) gets every row, whole.
"""

from __future__ import annotations

import json
from typing import Any

from codemode_kernel.executor.value_text import MAX_CELL, MAX_COLUMNS, MAX_ROWS, WIDE, table_text, value_text
from codemode_kernel.worker.values import encode_value

PREVIEW = 2000


def test_records_show_as_rows_under_their_column_names() -> None:
    envelope = encode_value(
        [{"city": "Oslo", "temp": 6.1, "dry": True}, {"city": "Lima", "temp": 17.9, "dry": False}]
    )
    expected = "table, 2 rows × 3 columns\n   city  temp    dry\n0  Oslo   6.1   True\n1  Lima  17.9  False"
    assert table_text(envelope, PREVIEW) == table_text(envelope) == expected


def test_a_wide_table_of_long_cells_stays_bounded_in_a_preview() -> None:
    columns = [f"column_{i}" for i in range(MAX_COLUMNS + 4)]
    rows = [{c: "x" * 200 for c in columns} for _ in range(MAX_ROWS * 3)]
    text = table_text(encode_value(rows), 100_000)
    lines = text.splitlines()
    assert (
        lines[0] == f"table, {MAX_ROWS * 3} rows × {MAX_COLUMNS + 4} columns (the first {MAX_COLUMNS} shown)"
    )
    assert len(lines) == 1 + 1 + MAX_ROWS + 1 and lines[-1] == f"… {MAX_ROWS * 2} more rows"
    assert "x" * (MAX_CELL - 1) + "…" in lines[2] and "x" * MAX_CELL not in text
    assert max(len(line) for line in lines) < MAX_COLUMNS * (MAX_CELL + 2) + 4


def test_a_preview_shows_the_rows_that_fit_its_budget_and_counts_the_rest() -> None:
    envelope = encode_value([{"n": i, "name": f"row number {i}"} for i in range(50)])
    text = table_text(envelope, 120)
    assert len(text) <= 120, text
    lines = text.splitlines()
    assert lines[0] == "table, 50 rows × 2 columns" and lines[1].split() == ["n", "name"]
    shown = len(lines) - 3
    assert 0 < shown < MAX_ROWS and lines[-1] == f"… {50 - shown} more rows"
    assert lines[2].split() == ["0", "0", "row", "number", "0"]


def test_without_a_budget_every_row_and_cell_is_whole() -> None:
    long = "https://example.org/" + "a" * 100
    envelope = encode_value([{"n": i, "url": long} for i in range(MAX_ROWS * 3)])
    lines = table_text(envelope).splitlines()
    assert len(lines) == 2 + MAX_ROWS * 3
    assert lines[-1].split() == [str(MAX_ROWS * 3 - 1), str(MAX_ROWS * 3 - 1), long]


def test_rows_the_worker_did_not_send_are_counted() -> None:
    envelope = encode_value([{"n": i} for i in range(5000)], max_bytes=200)
    sent = len(envelope["rows"])  # type: ignore[typeddict-item]
    assert envelope["truncated"] and sent < 5000  # type: ignore[typeddict-item]
    assert table_text(envelope).splitlines()[-1] == f"… {5000 - sent:,} more rows"


def test_nested_cells_read_as_json_and_a_single_row_as_one() -> None:
    envelope = encode_value([{"name": "a\nb", "tags": ["x", "y"], "meta": {"k": None}}])
    assert table_text(envelope).splitlines() == [
        "table, 1 row × 3 columns",
        "   name        tags         meta",
        '0   a b  ["x", "y"]  {"k": null}',
    ]


def test_every_kind_of_value_reads_as_one_text() -> None:
    assert value_text(encode_value({"a": [1, 2]})) == '{"a": [1, 2]}'
    assert value_text(encode_value(None)) == ""
    assert value_text(encode_value("Oslo")) == "Oslo"
    assert value_text(encode_value("Oslo"), quoted=True) == "'Oslo'"
    assert value_text(encode_value(b"\x00" * 2048)) == "<bytes, 2,048 bytes>"
    assert value_text(encode_value(list(range(1000))), 20) == "[0, 1, 2, 3, 4, 5, 6..."
    assert value_text(encode_value(object())).startswith("<object object at")


def _shapes() -> dict[str, list[dict[str, Any]]]:
    """Hostile tables: each padded to its widest cell came to tens of megabytes from a few hundred KB."""
    name = "n" * 20_000
    return {
        "one long cell over empty rows": [{"a": "x" * 20_000}] + [{"a": ""} for _ in range(2_000)],
        "a WIDE cell over rows of 0": [{"a": "x" * WIDE}] + [{"a": 0} for _ in range(30_000)],
        "a long column name": [{name: 1} for _ in range(2_000)],
        "a long cell in every column": [
            {f"c{i}": "y" * 2_000 if r == i else 1 for i in range(40)} for r in range(1_000)
        ],
    }


def test_a_table_of_any_shape_reads_within_a_few_times_its_envelope() -> None:
    for shape, rows in _shapes().items():
        envelope = encode_value(rows)
        sent = len(json.dumps(envelope, ensure_ascii=False))
        text = table_text(envelope)
        assert len(text) <= 3 * sent + 50_000, (shape, len(text), sent)
        lines = text.splitlines()
        assert lines[0].startswith(f"table, {len(rows)} rows × "), shape
        assert lines[-1].split()[0] == str(len(rows) - 1), shape  # every row, none counted as left out
        longest = max((str(c) for row in rows for c in [*row, *row.values()]), key=len)
        assert longest in text, shape  # each cell and name whole


def test_a_small_table_aligns_every_column_to_its_widest_cell() -> None:
    envelope = encode_value([{"n": i, "note": "z" * (WIDE if i == 7 else i)} for i in range(40)])
    lines = table_text(envelope).splitlines()[1:]
    assert {len(line) for line in lines} == {len(lines[0])} and len(lines[0]) == 2 + 2 + 2 + 2 + WIDE


def test_a_limit_stops_the_rows_once_past_it_and_counts_the_rest() -> None:
    envelope = encode_value([{"n": i, "city": f"city number {i}"} for i in range(20_000)])
    text = table_text(envelope, limit=1_000)
    lines = text.splitlines()
    shown = len(lines) - 3
    assert 1_000 < len(text) < 1_000 + 2 * len(lines[2]) + len(lines[-1]), len(text)
    assert [line.split()[0] for line in lines[2:-1]] == [str(i) for i in range(shown)]
    assert lines[-1] == f"… {20_000 - shown:,} more rows"
    assert value_text(envelope, limit=1_000) == text
    # One row past the limit is shown whole: a reader that cuts its text sees what the row holds.
    wide = encode_value([{"a": "x" * 5_000}, {"a": "y"}])
    assert table_text(wide, limit=100).splitlines()[2:] == ["0  " + "x" * 5_000, "… 1 more row"]
