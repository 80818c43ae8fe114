"""The line that says a value was cut before it left the worker, read off the envelopes the worker makes."""

from __future__ import annotations

from typing import Any

import pytest

from codemode_kernel.budget import value_cut_note
from codemode_kernel.worker.values import encode_value

KEEP = "store_artifact(value) in the program keeps all of it, or return a summary]\n"


class Opaque:
    def __repr__(self) -> str:
        return "Opaque(" + "z" * 5000 + ")"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("é" * 3000, ": 2,000 of its 6,000 bytes came through; "),
        (list(range(2000)), ": only the first part of its 2,000 items came through; "),
        ([{"a": i, "b": "x" * 20} for i in range(500)], ": 82 of its 500 rows came through; "),
        (b"\0" * 5000, " (it had 5,000 bytes); "),
        (Opaque(), " (it had 5,008 bytes); "),
    ],
)
def test_a_value_cut_in_the_worker_says_how_much_came_through(value: Any, says: str) -> None:
    note = value_cut_note(encode_value(value, max_bytes=2000))
    assert note == f"[the value was cut before it left the worker{says}{KEEP}"


def test_a_whole_value_says_nothing() -> None:
    assert value_cut_note(encode_value({"city": "Oslo"})) == ""
    assert value_cut_note(None) == ""
