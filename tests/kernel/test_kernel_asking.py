"""Servers that ask back, in a real kernel: tests/servers/asking_server.py asks a form question and for a
model completion during its tools' calls; the kernel sends one input request per field (the server, its
message, the field's name, type and default), answered through jupyter_client as a person would (Enter
takes the default), and the question and answer show in the trace text."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel

from codemode_kernel.llm.scripted import ScriptedModelServer

SERVER = str(Path(__file__).parents[1] / "servers" / "asking_server.py")
BOOK = '%%codemode\nbook_table(restaurant="Chez Nous")'


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer([lambda request: "Two words."] * 5) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def kernel(
    jupyter_path: Path, model: ScriptedModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("asking-notebook")
    config = {
        "mcpServers": {"asking": {"command": sys.executable, "args": [SERVER]}},
        "workspace": str(notebook),
        "models": [{"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}],
    }
    (notebook / "codemode.json").write_text(json.dumps(config))
    with configured_kernel(jupyter_path, notebook, notebook / "codemode.json") as k:
        yield k


def test_a_program_s_call_asks_one_input_request_per_field(kernel: Kernel) -> None:
    reply = kernel.run(BOOK, answers=["", "5", "", "terrace"])  # Enter: the date's and vegetarian's defaults
    assert reply.status == "ok", reply.content
    first, guests, vegetarian, seating = reply.questions
    assert first.startswith(
        "codemode: server asking/book_table asks: Booking at Chez Nous: when, and for how many?"
    )
    assert "Date [date: string, required, Enter = 2026-12-24]" in first and "the day" in first
    assert guests == "  guests [guests: integer, required, Enter = 2]: "
    assert vegetarian == "  vegetarian [vegetarian: boolean, Enter = n]: "
    assert seating == "  seating [seating: one of inside, terrace, Enter = inside]: "
    (text,) = reply.data()
    content = {"date": "2026-12-24", "guests": 5, "vegetarian": False, "seating": "terrace"}
    assert f"'content': {content!r}" in text or json.dumps(content) in text, text
    asked = next(line for line in text.splitlines() if line.startswith("asked: "))
    assert asked == (
        'asked: #1 asking/book_table "Booking at Chez Nous: when, and for how many?" -> accept by the user: '
        + json.dumps(content)
    )


def test_a_tool_called_in_a_cell_asks_the_person_too(kernel: Kernel) -> None:
    reply = kernel.run('book_table(restaurant="Bistro")["content"]', answers=["2027-01-02", "", "y", ""])
    assert reply.status == "ok", reply.content
    assert len(reply.questions) == 4 and "Booking at Bistro" in reply.questions[0]
    (value,) = reply.data()
    assert value == str({"date": "2027-01-02", "guests": 2, "vegetarian": True, "seating": "inside"})


def test_sampling_is_allowed_by_the_person_then_answered_by_the_model(kernel: Kernel) -> None:
    reply = kernel.run('%%codemode\nsummarize(text="a long story")', answers=["y"])
    assert reply.status == "ok", reply.content
    (question,) = reply.questions
    assert "asking/sampling/createMessage" in question and "for a completion (sampling)" in question
    (text,) = reply.data()
    assert "Two words." in text
    assert (
        "asked: #1 asking/summarize the model (sampling) allowed by the user -> 10 characters from scripted"
        in text
    )
