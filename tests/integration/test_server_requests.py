"""Servers that ask back, through the hub: a real SDK server (tests/servers/asking_server.py) over stdio asks
for roots, a form, a page visit and a model completion during its tool calls; the hub answers each through
the front door's approver (its ``elicit``), the configured model (a scripted model server over HTTP) and
the workspace, and every question and answer lands in the call's record."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.approvals import PromptApprover
from codemode_kernel.config import load_config
from codemode_kernel.llm.scripted import ScriptedModelServer

pytestmark = pytest.mark.integration

SERVER = str(Path(__file__).parents[1] / "servers" / "asking_server.py")


class Person:
    """A person at a prompt: answers the lines queued for them, records every prompt they saw."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.prompts: list[str] = []

    async def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer([lambda request: "A short summary."] * 20) as server:
        yield server


def _toolbox(
    path: Path, *, sampling: str = "ask", models: list[dict[str, Any]] | None = None, protocol: str = "legacy"
) -> Toolbox:
    server = {"command": sys.executable, "args": [SERVER], "sampling": sampling, "protocol": protocol}
    config = {"mcpServers": {"asking": server}, "workspace": str(path), "models": models or []}
    (path / "codemode.json").write_text(json.dumps(config))
    return Toolbox(load_config(path / "codemode.json"))


@pytest.fixture(scope="module")
def person() -> Person:
    return Person()


@pytest.fixture(scope="module")
def toolbox(
    tmp_path_factory: pytest.TempPathFactory, model: ScriptedModelServer, person: Person
) -> Iterator[Toolbox]:
    models = [{"ref": "m", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}]
    with _toolbox(tmp_path_factory.mktemp("asking"), models=models) as tb:
        tb.hub.asking.person = PromptApprover(person)
        yield tb


def _call(tb: Toolbox, tool: str, **arguments: Any) -> tuple[Any, dict[str, Any]]:
    result = tb.hub.call("asking", tool, arguments)
    record = tb.hub.call_log.records()[-1].to_json()
    assert not result.get("isError"), result
    value = result["structuredContent"]
    return (value["result"] if tool == "where" else value), dict(record)


def test_roots_list_is_the_workspace(toolbox: Toolbox) -> None:
    roots, record = _call(toolbox, "where")
    assert roots == [toolbox.config.workspace.resolve().as_uri()]
    assert "asked" not in record  # roots are not a question to anyone


def test_a_form_is_asked_field_by_field_and_enter_takes_defaults(toolbox: Toolbox, person: Person) -> None:
    person.prompts.clear()
    person.lines[:] = ["", "4", "", "terrace"]  # Enter for the date and vegetarian: their defaults
    answer, record = _call(toolbox, "book_table", restaurant="Chez Nous")
    assert answer == {
        "action": "accept",
        "content": {"date": "2026-12-24", "guests": 4, "vegetarian": False, "seating": "terrace"},
    }
    first = person.prompts[0]
    assert "server asking/book_table asks: Booking at Chez Nous: when, and for how many?" in first
    assert "Date [date: string, required, Enter = 2026-12-24]" in first
    assert "[guests: integer, required, Enter = 2]" in person.prompts[1]
    assert "[seating: one of inside, terrace, Enter = inside]" in person.prompts[3]
    (asked,) = record["asked"]
    assert asked["kind"] == "elicitation"
    assert asked["question"]["message"] == "Booking at Chez Nous: when, and for how many?"
    assert asked["answer"] == {"action": "accept", "by": "the user", "content": answer["content"]}


def test_an_answer_that_does_not_fit_is_asked_again(toolbox: Toolbox, person: Person) -> None:
    person.prompts.clear()
    person.lines[:] = ["", "99", "3", "", ""]
    answer, _ = _call(toolbox, "book_table", restaurant="X")
    assert answer["content"]["guests"] == 3
    assert person.prompts[2].startswith("  (at most 20 is expected)")


def test_the_person_may_decline(toolbox: Toolbox, person: Person) -> None:
    person.lines[:] = ["decline"]
    answer, record = _call(toolbox, "book_table", restaurant="X")
    assert answer == {"action": "decline", "content": None}
    assert record["asked"][0]["answer"] == {"action": "decline", "by": "the user"}


def test_url_mode_shows_the_link_and_opens_nothing(toolbox: Toolbox, person: Person) -> None:
    person.prompts.clear()
    person.lines[:] = ["y"]
    answer, record = _call(toolbox, "verify_account")
    assert answer == {"action": "accept"}
    assert "https://example.com/verify?session=abc" in person.prompts[0]
    assert "nothing is opened for you" in person.prompts[0]
    assert record["asked"][0]["question"]["url"] == "https://example.com/verify?session=abc"


@pytest.mark.parametrize("kind", ["deep", "many", "odd"])
def test_a_hostile_schema_is_refused_naming_the_problem(toolbox: Toolbox, kind: str) -> None:
    answer, record = _call(toolbox, "hostile", kind=kind)
    assert "the question cannot be asked" in answer["error"]
    assert record["status"] == "ok" and record["asked"][0]["refused"]
    assert toolbox.hub.call("asking", "where", {})  # the connection still works


def test_a_question_too_deep_to_read_is_refused_at_once(toolbox: Toolbox) -> None:
    """Over 200 levels the stdio reader drops the line: it answers the request, so the tool does not hang."""
    answer, _ = _call(toolbox, "hostile", kind="deeper")
    assert "codemode could not read this elicitation/create request and refused it" in answer["error"]
    assert "nested more than 200 levels deep" in answer["error"]


def test_a_huge_description_is_shown_cut(toolbox: Toolbox, person: Person) -> None:
    person.prompts.clear()
    person.lines[:] = ["hello"]
    answer, _ = _call(toolbox, "hostile", kind="huge")
    assert answer == {"action": "accept", "content": {"note": "hello"}}
    assert len(person.prompts[0]) < 3000 and person.prompts[0].rstrip(": ").endswith("...(cut)")


def test_sampling_is_asked_then_answered_by_the_configured_model(
    toolbox: Toolbox, person: Person, model: ScriptedModelServer
) -> None:
    person.prompts.clear()
    person.lines[:] = ["y"]
    answer, record = _call(toolbox, "summarize", text="a long story")
    assert answer == {"text": "A short summary.", "model": "scripted"}
    assert "asking/sampling/createMessage" in person.prompts[0]
    assert "for a completion (sampling)" in person.prompts[0]
    sent = model.requests[-1].body
    assert sent["messages"][-1]["content"] == "Summarize: a long story"
    (asked,) = record["asked"]
    assert asked["allowed"] == {"by": "the user", "scope": "once"}
    assert asked["answer"] == {"model": "scripted", "chars": len("A short summary.")}


def test_sampling_denied_by_the_person_reaches_the_server_as_error(toolbox: Toolbox, person: Person) -> None:
    person.lines[:] = ["n"]
    answer, record = _call(toolbox, "summarize", text="x")
    assert answer == {"error": "asking: sampling was denied by the user"}
    assert record["asked"][0]["denied"]["by"] == "the user"


def test_with_nobody_to_ask_a_question_is_declined_naming_the_server(tmp_path: Path) -> None:
    with _toolbox(tmp_path) as tb:
        answer, record = _call(tb, "book_table", restaurant="X")
        sampled, _ = _call(tb, "summarize", text="x")
    assert answer == {"action": "decline", "content": None}
    note = record["asked"][0]["answer"]["note"]
    assert "server 'asking' asked a question" in note and "nobody can be asked" in note
    assert "no model is configured" in sampled["error"] and "models" in sampled["error"]


def test_sampling_allow_in_the_config_skips_the_question(tmp_path: Path, model: ScriptedModelServer) -> None:
    models = [{"ref": "m", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}]
    with _toolbox(tmp_path, sampling="allow", models=models) as tb:
        answer, record = _call(tb, "summarize", text="x")
        relaxations = [r.describe() for r in tb.config.relaxations]
    assert answer["text"] == "A short summary."
    assert record["asked"][0]["allowed"] == {"by": 'the config ("sampling": "allow" for asking)'}
    assert any("mcpServers.asking.sampling" in line for line in relaxations), relaxations


def test_sampling_deny_refuses(tmp_path: Path) -> None:
    with _toolbox(tmp_path, sampling="deny") as tb:
        answer, _ = _call(tb, "summarize", text="x")
    assert 'sampling is switched off for this server ("sampling": "deny"' in answer["error"]


def test_sdk_resolvers_ask_on_the_handshake_protocol(toolbox: Toolbox, person: Person) -> None:
    person.lines[:] = ["5"]
    answer, record = _call(toolbox, "reserve", show="Hamlet")
    assert answer == {"show": "Hamlet", "seats": 5}
    assert record["asked"][0]["answer"]["content"] == {"seats": 5}


def test_a_2026_07_28_server_asks_by_ending_the_call_and_the_retry_answers(tmp_path: Path) -> None:
    """On 2026-07-28 the question comes back as an InputRequiredResult; the hub asks, then calls again."""
    person = Person()
    person.lines[:] = [""]  # Enter: the default, 2 seats
    with _toolbox(tmp_path, protocol="2026-07-28") as tb:
        tb.hub.asking.person = PromptApprover(person)
        answer, record = _call(tb, "reserve", show="Hamlet")
        assert tb.hub.status()[0].protocol_version == "2026-07-28"
    assert answer == {"show": "Hamlet", "seats": 2}
    assert person.prompts == [
        "codemode: server asking/reserve asks: How many seats for Hamlet?\n"
        "  Seats [seats: integer, Enter = 2]: "
    ]
    assert record["asked"][0]["answer"] == {"action": "accept", "by": "the user", "content": {"seats": 2}}
