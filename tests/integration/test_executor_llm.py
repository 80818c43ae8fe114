"""llm() and llm_json() in programs: asked through the kernel's handler, recorded and replayed like calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.core.errors import LLMUnreachableError
from codemode_kernel.executor import Executor
from tests.integration.test_executor import WEATHER
from tests.integration.test_schema_refs import SchemaListener

asked: list[dict[str, Any]] = []


async def answer(request: dict[str, Any]) -> str:
    """The kernel's side of llm(): here, a handler that answers from the prompt (no model needed)."""
    asked.append(request)
    prompt = request["prompt"]
    if prompt.startswith("unreachable"):
        raise LLMUnreachableError("cannot reach http://127.0.0.1:9/v1: connection refused")
    if "JSON" in prompt and "fenced" in prompt:
        return '```json\n{"city": "Oslo", "warm": false}\n```'
    if "JSON" in prompt:
        return "not json at all"
    return prompt.upper()


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolbox]:
    path = tmp_path_factory.mktemp("ws")
    (path / "codemode.json").write_text(
        json.dumps({"mcpServers": {"weather": WEATHER}, "workspace": str(path)})
    )
    with Toolbox(load_config(path / "codemode.json")) as tb:
        yield tb


def test_llm_is_answered_by_the_kernel_and_recorded_like_a_tool_call(toolbox: Toolbox) -> None:
    asked.clear()
    with Executor(toolbox, llm=answer) as ex:
        result = ex.run(
            'w = get_weather(city="Oslo", unit="celsius")\nllm(f"say {w.conditions}", system="be brief")'
        )
    assert result.status == "ok", result.error
    assert result.value == {"kind": "text", "text": "SAY RAIN"}
    assert asked == [{"prompt": "say rain", "system": "be brief"}]
    call = result.tool_calls[-1]
    assert (call["server"], call["tool"], call["status"]) == ("codemode", "llm", "ok")
    assert call["arguments"] == {"prompt": "say rain", "system": "be brief"}


def test_llm_json_parses_checks_and_names_what_was_wrong(toolbox: Toolbox) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    with Executor(toolbox, llm=answer) as ex:
        ok = ex.run(f"llm_json('fenced please', schema={schema!r})")
        assert ok.status == "ok", ok.error
        assert ok.value == {"kind": "json", "data": {"city": "Oslo", "warm": False}}
        assert "must validate against this JSON Schema" in asked[-1]["prompt"]
        bad = ex.run("x = 1\nllm_json('give me something')")
        assert bad.status == "error" and bad.error is not None
        assert (bad.error["type"], bad.error["line"]) == ("ValueError", 2)
        assert "not JSON" in bad.error["message"] and "not json at all" in bad.error["message"]


def test_llm_json_checks_the_schema_in_the_worker_which_loads_jsonschema_only_for_it(
    toolbox: Toolbox,
) -> None:
    """A schema the program wrote is checked where the program runs: in the sandbox, under its limits."""
    fits = {"type": "object", "properties": {"city": {"type": "string"}}}
    wants_more = {**fits, "required": ["city", "temperature"]}
    loaded = "'jsonschema' in sys.modules"
    with Executor(toolbox, llm=answer) as ex:
        ok = ex.run(
            f"import sys\nbefore = {loaded}\nllm('hi')\nllm_json('fenced please')\nwithout = {loaded}\n"
            f"v = llm_json('fenced please', schema={fits!r})\n[before, without, {loaded}, v]"
        )
        assert ok.status == "ok", ok.error
        assert ok.value == {"kind": "json", "data": [False, False, True, {"city": "Oslo", "warm": False}]}
        bad = ex.run(f"x = 1\nllm_json('fenced please', schema={wants_more!r})")
        assert bad.status == "error" and bad.error is not None
        assert (bad.error["type"], bad.error["line"]) == ("ValueError", 2)
        assert bad.error["message"] == (
            "llm_json: the answer does not fit the schema: 'temperature' is a required property"
        )
        loose = ex.run(f"llm_json('fenced please', schema={wants_more!r}, strict=False)")
        assert loose.value == {"kind": "json", "data": {"city": "Oslo", "warm": False}}
        asked.clear()
        wrong = ex.run("llm_json('fenced please', schema={'type': 'no such type'})")
        assert wrong.error is not None and wrong.error["type"] == "ToolArgumentError"
        assert "schema is not a valid JSON Schema" in wrong.error["message"]
        assert asked == [] and wrong.tool_calls == []  # refused before the model is asked


def test_llm_json_records_the_question_only_as_before_so_its_records_replay(toolbox: Toolbox) -> None:
    """The schema is not part of the recorded call: its arguments (and so its replay key) and its result
    are what they were before the schema check moved to the kernel and back (records made then replay)."""
    fits = {"type": "object", "properties": {"city": {"type": "string"}}}
    program = f"llm_json('fenced please', system='terse', schema={fits!r})"
    with Executor(toolbox, llm=answer) as ex:
        live = ex.run(program)
        assert live.status == "ok", live.error
        (call,) = live.tool_calls
        assert sorted(call["arguments"]) == ["prompt", "system"]
        fenced = '```json\n{"city": "Oslo", "warm": false}\n```'
        assert call["result"] == {"content": [{"type": "text", "text": fenced}], "isError": False}
        asked.clear()
        again = ex.run(program, replay=live.tool_calls)
    assert again.status == "ok", again.error
    assert again.value == live.value and asked == []


@pytest.mark.filterwarnings("ignore:Automatically retrieving remote references:DeprecationWarning")
def test_a_schema_that_refers_to_a_file_or_address_reads_nothing_outside_the_sandbox(
    toolbox: Toolbox,
) -> None:
    """jsonschema would fetch a ``$ref`` it cannot find in the schema; in the worker that is the program's
    own reach: a hidden file (the workspace's .env) stays unreadable and no address answers."""
    secret = "secret-token-xyz"
    hidden = toolbox.config.workspace / ".env"
    hidden.write_text(json.dumps({"type": "object", "required": [secret]}))
    try:
        with SchemaListener() as listener, Executor(toolbox, llm=answer) as ex:
            for ref in (hidden.as_uri(), listener.url):
                result = ex.run(f"llm_json('fenced please', schema={{'$ref': {ref!r}}})")
                assert result.error is not None and result.error["type"] == "ValueError", result.error
                message = result.error["message"]
                assert message.startswith("llm_json: jsonschema could not check the answer"), message
                assert ref in message and secret not in json.dumps(result.to_dict())
            assert listener.requests == []
    finally:
        hidden.unlink()


def test_an_llm_json_answer_from_a_record_is_checked_against_the_schema_too(toolbox: Toolbox) -> None:
    """A caller's answer (``codemode run --pending``) reaches the program through a replay: checked alike."""
    fits = {"type": "object", "properties": {"city": {"type": "string"}}}
    program = f"llm_json('fenced please', schema={fits!r})"
    with Executor(toolbox, llm=answer) as ex:
        live = ex.run(program)
        assert live.status == "ok", live.error
        record = [dict(call) for call in live.tool_calls]
        record[-1]["result"] = {"content": [{"type": "text", "text": '{"city": 5}'}], "isError": False}
        replayed = ex.run(program, replay=record)
    assert replayed.error is not None and replayed.error["type"] == "ValueError"
    assert (
        replayed.error["message"] == "llm_json: the answer does not fit the schema: 5 is not of type 'string'"
    )


def test_a_failed_or_missing_model_is_an_llm_error_at_the_line(toolbox: Toolbox) -> None:
    with Executor(toolbox, llm=answer) as ex:
        failed = ex.run("\nllm('unreachable endpoint')")
        assert failed.error is not None and (failed.error["type"], failed.error["line"]) == (
            "LLMUnreachableError",
            2,
        )
        caught = ex.run("try:\n    llm('unreachable')\nexcept LLMError as e:\n    out = 'caught'\nout")
        assert caught.value == {"kind": "text", "text": "caught"}
    with Executor(toolbox) as ex:
        none = ex.run("llm('hello')")
        assert none.error is not None and none.error["type"] == "LLMError"
        assert "no model is configured" in none.error["message"] and '"models"' in none.error["message"]


def test_a_replay_answers_llm_from_the_record_without_asking(toolbox: Toolbox) -> None:
    with Executor(toolbox, llm=answer) as ex:
        first = ex.run("llm('once')")
        asked.clear()
        again = ex.run("llm('once')", replay=first.tool_calls)
    assert again.value == {"kind": "text", "text": "ONCE"} and asked == []
