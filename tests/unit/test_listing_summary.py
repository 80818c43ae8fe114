"""The compact listing summarises a tool by the first sentence of its description, never a cut line.

Many servers hard-wrap their descriptions, so the first line often stops mid-sentence ("... if
`next_range` is"); the listing unwraps the first paragraph, takes its first sentence, and cuts only a
sentence longer than its budget, at a word, with an ellipsis.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codemode_kernel.agent import compact_listing
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.typegen import build_tool_models
from codemode_kernel.typegen.text import summary

WRAPPED = """Read a range of cells from the spreadsheet, as rows of strings; call it again with the range
in `next_range` if `next_range` is
not empty. Ranges use A1 notation.

Args:
    range: the range to read.
"""


def listed(description: str) -> str:
    """The summary the compact listing gives a tool with this description."""
    (model,) = build_tool_models(
        [ToolSpec(server="sheet", name="read_range", description=description)], check=ArgumentValidator
    )
    line = compact_listing([model]).splitlines()[1]
    return line.split("  # ", 1)[1] if "  # " in line else ""


def test_a_hard_wrapped_description_is_listed_by_its_whole_first_sentence() -> None:
    assert listed(WRAPPED) == (
        "Read a range of cells from the spreadsheet, as rows of strings; call it again with the range in "
        "`next_range` if `next_range` is not empty."
    )


def test_a_first_sentence_past_the_budget_is_cut_at_a_word_with_an_ellipsis() -> None:
    words = "Search " + " ".join(f"word{i}" for i in range(60)) + ". Second sentence."
    text = listed(words)
    assert len(text) <= 160 and text.endswith("…")
    assert text[:-1].split(" ")[-1] in words.split(" ")  # a whole word before the ellipsis


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Get the weather.", "Get the weather."),
        ("Get the weather", "Get the weather"),
        (
            "  Get the weather for a city, e.g. Oslo. Units are metric.",
            "Get the weather for a city, e.g. Oslo.",
        ),
        ("Fetch a URL.\nReturns the body.", "Fetch a URL."),
        ("List files\n\nEach file has a size.", "List files"),
        ("List files:\n- name\n- size", "List files:"),
        ("Version 1.2 of the API. More.", "Version 1.2 of the API."),
        ("What is it? A tool.", "What is it?"),
        ("Reads config.json. Then stops.", "Reads config.json."),
        ("Lists things (i.e. Files and folders). More.", "Lists things (i.e. Files and folders)."),
        ("", ""),
        ("\n\n  \n", ""),
    ],
)
def test_summary_is_the_first_sentence_of_the_first_paragraph(description: str, expected: str) -> None:
    assert summary(description, len(expected) + 5) == expected


def test_further_sentences_are_kept_while_they_fit() -> None:
    text = "List pull requests in a repository. If the user names an author, use search_pull_requests. More."
    assert summary(text, 160) == text
    assert summary(text, 92) == text.removesuffix(" More.")
    assert summary(text, 60) == "List pull requests in a repository."


def test_a_first_line_that_ends_a_sentence_is_not_joined_to_the_next() -> None:
    """The docstring convention: a summary line, then the details."""
    assert summary("Get current weather data for a location.\nMore details here.", 160) == (
        "Get current weather data for a location."
    )
    assert summary("Get the weather, e.g.\nfor Oslo. Units are metric.", 160) == (
        "Get the weather, e.g. for Oslo. Units are metric."
    )


@given(text=st.text(max_size=400), limit=st.integers(10, 200))
def test_a_summary_is_one_line_within_the_budget(text: str, limit: int) -> None:
    line = summary(text, limit)
    assert len(line) <= limit
    assert "\n" not in line and "\r" not in line and line == line.strip()
